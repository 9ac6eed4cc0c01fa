package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

func TestRuleValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		many := make([]string, 101)
		for i := range many {
			many[i] = "w"
		}
		tests := []struct {
			name  string
			in    RuleInput
			param string // "" means valid
		}{
			{"keyword", RuleInput{Name: "k", Kind: "keyword", Patterns: []string{"secret project"}, Action: "block"}, ""},
			{"regex", RuleInput{Name: "r", Kind: "regex", Patterns: []string{`\bACME-\d{4}\b`, `(a+)+$`}, Action: "redact", Direction: "request"}, ""},
			{"pii", RuleInput{Name: "p", Kind: "pii", PII: []string{"email", "iban"}, Action: "flag", Direction: "response"}, ""},
			{"no name", RuleInput{Kind: "keyword", Patterns: []string{"x"}, Action: "block"}, "name"},
			{"long name", RuleInput{Name: strings.Repeat("n", 201), Kind: "keyword", Patterns: []string{"x"}, Action: "block"}, "name"},
			{"bad direction", RuleInput{Name: "x", Direction: "sideways", Kind: "keyword", Patterns: []string{"x"}, Action: "block"}, "direction"},
			{"bad kind", RuleInput{Name: "x", Kind: "python", Patterns: []string{"x"}, Action: "block"}, "kind"},
			{"no kind", RuleInput{Name: "x", Patterns: []string{"x"}, Action: "block"}, "kind"},
			{"bad action", RuleInput{Name: "x", Kind: "keyword", Patterns: []string{"x"}, Action: "exec"}, "action"},
			{"keyword without patterns", RuleInput{Name: "x", Kind: "keyword", Action: "block"}, "patterns"},
			{"keyword with pii", RuleInput{Name: "x", Kind: "keyword", Patterns: []string{"x"}, PII: []string{"email"}, Action: "block"}, "pii"},
			{"101 patterns", RuleInput{Name: "x", Kind: "keyword", Patterns: many, Action: "block"}, "patterns"},
			{"empty pattern", RuleInput{Name: "x", Kind: "keyword", Patterns: []string{""}, Action: "block"}, "patterns[0]"},
			{"zero-width keyword", RuleInput{Name: "x", Kind: "keyword", Patterns: []string{"ok", "\u200b\u200d\ufeff"}, Action: "block"}, "patterns[1]"},
			{"long pattern", RuleInput{Name: "x", Kind: "keyword", Patterns: []string{"ok", strings.Repeat("p", 1025)}, Action: "block"}, "patterns[1]"},
			{"bad regex", RuleInput{Name: "x", Kind: "regex", Patterns: []string{"(unclosed"}, Action: "block"}, "patterns[0]"},
			{"backreference is not RE2", RuleInput{Name: "x", Kind: "regex", Patterns: []string{`(a)\1`}, Action: "block"}, "patterns[0]"},
			{"regex program too large", RuleInput{Name: "x", Kind: "regex", Patterns: []string{`ok`, `\w{500}z`}, Action: "block"}, "patterns[1]"},
			{"regex program at the cap", RuleInput{Name: "x", Kind: "regex", Patterns: []string{`\w{250}`}, Action: "block", CaseSensitive: true}, ""},
			{"pii without kinds", RuleInput{Name: "x", Kind: "pii", Action: "redact"}, "pii"},
			{"pii unknown kind", RuleInput{Name: "x", Kind: "pii", PII: []string{"dna"}, Action: "redact"}, "pii"},
			{"pii with patterns", RuleInput{Name: "x", Kind: "pii", PII: []string{"email"}, Patterns: []string{"x"}, Action: "redact"}, "patterns"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r, err := s.CreateRule(ctx, admin, g.ID, tc.in)
				if tc.param != "" {
					wantErrParam(t, err, 400, "invalid_request", tc.param)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(r.ID, "rule_") || !r.Enabled || r.TenantID != "acme" {
					t.Fatalf("got %+v", r)
				}
				if tc.in.Direction == "" && r.Direction != store.DirBoth {
					t.Fatalf("direction %q, want both by default", r.Direction)
				}
			})
		}
	})
}

func TestRulePayloadsAreData(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		payloads := []string{"{{7*7}}", "{{.}}", "${jndi:ldap://x}", "__import__('os')", "$(id)", "<%= 7*7 %>"}
		kw, err := s.CreateRule(ctx, admin, g.ID, RuleInput{Name: "payloads", Kind: "keyword", Patterns: payloads, Action: "block"})
		if err != nil {
			t.Fatal(err)
		}
		// As regular expressions these are valid RE2 too, and stay verbatim.
		re, err := s.CreateRule(ctx, admin, g.ID, RuleInput{Name: "re", Kind: "regex", Patterns: []string{"{{7*7}}", "${jndi:ldap://x}"}, Action: "flag"})
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.ListRules(ctx, admin, g.ID)
		if err != nil || len(list.Data) != 2 {
			t.Fatalf("list: %v %+v", err, list)
		}
		if diff := cmp.Diff(payloads, []string(list.Data[0].Patterns)); diff != "" || list.Data[0].ID != kw.ID {
			t.Fatalf("stored keyword patterns differ (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"{{7*7}}", "${jndi:ldap://x}"}, []string(list.Data[1].Patterns)); diff != "" || list.Data[1].ID != re.ID {
			t.Fatalf("stored regex patterns differ (-want +got):\n%s", diff)
		}
		if list.Data[1].CaseSensitive {
			t.Fatalf("case_sensitive stored true, want false (the (?i) flag is added at match time, not stored)")
		}
	})
}

func TestRuleUpdateDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		other := mkGateway(t, s, admin, "other")
		r, err := s.CreateRule(ctx, admin, g.ID, RuleInput{Name: "codes", Kind: "regex", Patterns: []string{`ACME-\d+`}, Action: "redact"})
		if err != nil {
			t.Fatal(err)
		}
		name, off := "project codes", false
		got, err := s.UpdateRule(ctx, admin, g.ID, RulePatch{ID: r.ID, Name: &name, Enabled: &off})
		if err != nil || got.Name != name || got.Enabled || got.Kind != "regex" || len(got.Patterns) != 1 {
			t.Fatalf("update: %v %+v", err, got)
		}
		bad := []string{"(["}
		_, err = s.UpdateRule(ctx, admin, g.ID, RulePatch{ID: r.ID, Patterns: &bad})
		wantErrParam(t, err, 400, "invalid_request", "patterns[0]")
		pii, kinds := "pii", []string{"credit_card"}
		got, err = s.UpdateRule(ctx, admin, g.ID, RulePatch{ID: r.ID, Kind: &pii, PII: &kinds})
		if err != nil || got.Kind != "pii" || len(got.Patterns) != 0 || len(got.PII) != 1 {
			t.Fatalf("switch to pii: %v %+v", err, got)
		}
		kw := "keyword"
		_, err = s.UpdateRule(ctx, admin, g.ID, RulePatch{ID: r.ID, Kind: &kw})
		wantErrParam(t, err, 400, "invalid_request", "patterns")

		list, err := s.ListRules(ctx, admin, g.ID)
		if err != nil || len(list.Data) != 1 || list.Data[0].Name != name || list.Data[0].Kind != "pii" {
			t.Fatalf("reread: %v %+v", err, list)
		}

		_, err = s.UpdateRule(ctx, admin, g.ID, RulePatch{ID: "rule_nope", Name: &name})
		wantCode(t, err, 404, "not_found")
		_, err = s.UpdateRule(ctx, admin, g.ID, RulePatch{Name: &name})
		wantErrParam(t, err, 400, "invalid_request", "id")
		// A rule is found only through its own gateway.
		_, err = s.UpdateRule(ctx, admin, other.ID, RulePatch{ID: r.ID, Name: &name})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteRule(ctx, admin, other.ID, r.ID), 404, "not_found")

		otherTA := mkUser(t, s, "other", auth.TenantAdministrator)
		_, err = s.ListRules(ctx, otherTA, g.ID)
		wantCode(t, err, 404, "not_found")
		_, err = s.CreateRule(ctx, otherTA, g.ID, RuleInput{Name: "x", Kind: "keyword", Patterns: []string{"x"}, Action: "block"})
		wantCode(t, err, 404, "not_found")
		_, err = s.UpdateRule(ctx, otherTA, g.ID, RulePatch{ID: r.ID, Name: &name})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteRule(ctx, otherTA, g.ID, r.ID), 404, "not_found")
		viewer := mkUser(t, s, "acme", auth.Viewer)
		_, err = s.ListRules(ctx, viewer, g.ID)
		wantCode(t, err, 403, "forbidden")

		if err := s.DeleteRule(ctx, admin, g.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteRule(ctx, admin, g.ID, r.ID), 404, "not_found")
		list, err = s.ListRules(ctx, admin, g.ID)
		if err != nil || len(list.Data) != 0 {
			t.Fatalf("after delete: %v %+v", err, list)
		}
	})
}
