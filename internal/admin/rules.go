package admin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/internal/store"
)

// RuleInput creates a content rule. Patterns are data: literal keywords or
// RE2 regular expressions, stored verbatim and never evaluated as templates
// or code.
type RuleInput struct {
	Name          string   `json:"name"`
	Enabled       *bool    `json:"enabled"`
	Direction     string   `json:"direction"`
	Kind          string   `json:"kind"`
	Patterns      []string `json:"patterns"`
	PII           []string `json:"pii"`
	Action        string   `json:"action"`
	CaseSensitive bool     `json:"case_sensitive"`
}

// RulePatch changes the rule named by ID; absent fields stay as they are.
type RulePatch struct {
	ID            string    `json:"id"`
	Name          *string   `json:"name"`
	Enabled       *bool     `json:"enabled"`
	Direction     *string   `json:"direction"`
	Kind          *string   `json:"kind"`
	Patterns      *[]string `json:"patterns"`
	PII           *[]string `json:"pii"`
	Action        *string   `json:"action"`
	CaseSensitive *bool     `json:"case_sensitive"`
}

const (
	maxRulePatterns     = 100
	maxRulePatternBytes = 1024
	// maxRulesPerGateway bounds the work the proxy does per request: every
	// enabled rule is matched against every request (and response).
	maxRulesPerGateway = 200
)

// checkRule validates r in place: defaults, enumerations, and the patterns
// of its kind. Regular expressions are compiled exactly as the proxy will
// match them ((?i) prefixed when not case-sensitive), but stored verbatim.
func checkRule(r *store.Rule) error {
	if err := checkText("name", r.Name, 200, true); err != nil {
		return err
	}
	if r.Direction == "" {
		r.Direction = store.DirBoth
	}
	switch r.Direction {
	case store.DirRequest, store.DirResponse, store.DirBoth:
	default:
		return apierr.Invalid("direction", "direction must be request, response or both")
	}
	switch r.Action {
	case store.ActionBlock, store.ActionRedact, store.ActionFlag:
	default:
		return apierr.Invalid("action", "action must be block, redact or flag")
	}
	if r.Patterns == nil {
		r.Patterns = store.StringList{}
	}
	if r.PII == nil {
		r.PII = store.StringList{}
	}
	switch r.Kind {
	case store.KindKeyword, store.KindRegex:
		if len(r.PII) > 0 {
			return apierr.Invalid("pii", "pii lists detectors of a pii rule; a %s rule has patterns only", r.Kind)
		}
		if len(r.Patterns) == 0 || len(r.Patterns) > maxRulePatterns {
			return apierr.Invalid("patterns", "a %s rule has 1 to %d patterns", r.Kind, maxRulePatterns)
		}
		for i, pat := range r.Patterns {
			if err := checkPattern(fmt.Sprintf("patterns[%d]", i), pat, r.Kind == store.KindRegex, r.CaseSensitive); err != nil {
				return err
			}
		}
	case store.KindPII:
		if len(r.Patterns) > 0 {
			return apierr.Invalid("patterns", "a pii rule uses built-in detectors and takes no patterns")
		}
		if len(r.PII) == 0 {
			return apierr.Invalid("pii", "a pii rule names 1 or more of: %s", strings.Join(store.PIIKinds, ", "))
		}
		seen := store.StringList{}
		for _, k := range r.PII {
			if !slices.Contains(store.PIIKinds, k) {
				return apierr.Invalid("pii", "unknown pii kind %q; known: %s", k, strings.Join(store.PIIKinds, ", "))
			}
			if !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
		}
		r.PII = seen
	default:
		return apierr.Invalid("kind", "kind must be keyword, regex or pii")
	}
	return nil
}

func checkPattern(param, pat string, regex, caseSensitive bool) error {
	if pat == "" {
		return apierr.Invalid(param, "%s is empty", param)
	}
	if len(pat) > maxRulePatternBytes {
		return apierr.Invalid(param, "%s is longer than %d bytes", param, maxRulePatternBytes)
	}
	if !utf8.ValidString(pat) || strings.ContainsRune(pat, 0) {
		return apierr.Invalid(param, "%s is not valid UTF-8 text", param)
	}
	if !regex && rules.KeywordMatchesNothing(pat) {
		return apierr.Invalid(param, "%s holds only zero-width or ignorable characters, which matching ignores: it would match nothing", param)
	}
	if regex {
		expr := pat
		if !caseSensitive {
			expr = "(?i)" + pat
		}
		if _, err := regexp.Compile(expr); err != nil {
			return apierr.Invalid(param, "%s is not a valid RE2 regular expression: %v", param, err)
		}
		n, err := rules.RegexProgramSize(pat, caseSensitive)
		if err != nil {
			return apierr.Invalid(param, "%s is not a valid RE2 regular expression: %v", param, err)
		}
		if n > rules.MaxRegexInstructions {
			return apierr.Invalid(param, "%s compiles to %d instructions, more than %d (a large counted repetition such as \\w{500}, or a long alternation: use a keyword rule for word lists)",
				param, n, rules.MaxRegexInstructions)
		}
	}
	return nil
}

// ListRules lists the content rules of a gateway.
func (s *Service) ListRules(ctx context.Context, p *auth.Principal, gatewayID string) (*List[store.Rule], error) {
	if err := s.can(ctx, p, auth.OpRuleList); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	rows, err := store.All[store.Rule](ctx, s.db, "id", store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return &List[store.Rule]{Data: rows}, nil
}

// CreateRule adds a content rule to a gateway.
func (s *Service) CreateRule(ctx context.Context, p *auth.Principal, gatewayID string, in RuleInput) (*store.Rule, error) {
	if err := s.can(ctx, p, auth.OpRuleCreate); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	r := &store.Rule{
		TenantID: g.TenantID, GatewayID: g.ID, Name: in.Name, Enabled: in.Enabled == nil || *in.Enabled,
		Direction: in.Direction, Kind: in.Kind, Patterns: in.Patterns, PII: in.PII, Action: in.Action,
		CaseSensitive: in.CaseSensitive,
	}
	if err := checkRule(r); err != nil {
		return nil, err
	}
	n, err := store.Count[store.Rule](ctx, s.db, store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if err != nil {
		return nil, fmt.Errorf("count rules: %w", err)
	}
	if n >= maxRulesPerGateway {
		return nil, apierr.Invalid("", "a gateway has at most %d rules", maxRulesPerGateway)
	}
	now := s.now()
	r.ID, r.CreatedAt, r.UpdatedAt = ids.New("rule"), now, now
	c := &change{Action: "rule.create", ResourceType: "rule", ResourceID: r.ID, TenantID: g.TenantID, Config: true,
		Changes: ruleChanges(r)}
	if err := s.write(ctx, p, c, func(tx bun.Tx) error { return store.Insert(ctx, tx, r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateRule changes a rule of a gateway. The merged rule is validated as a
// whole. When the kind changes between pii and keyword/regex and the patch
// does not say otherwise, the fields the new kind does not use are cleared.
func (s *Service) UpdateRule(ctx context.Context, p *auth.Principal, gatewayID string, in RulePatch) (*store.Rule, error) {
	if err := s.can(ctx, p, auth.OpRuleUpdate); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	if in.ID == "" {
		return nil, apierr.Invalid("id", "id of the rule is required")
	}
	r, err := store.Get[store.Rule](ctx, s.db, store.Eq("id", in.ID), store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if isNotFound(err) {
		return nil, s.missing(ctx, p, "rule", in.ID, reasonNotVisible)
	}
	if err != nil {
		return nil, notFound(err, "rule")
	}
	if in.Name != nil {
		r.Name = *in.Name
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
	}
	if in.Direction != nil {
		r.Direction = *in.Direction
	}
	if in.Kind != nil && *in.Kind != r.Kind {
		if *in.Kind == store.KindPII && in.Patterns == nil {
			r.Patterns = store.StringList{}
		}
		if r.Kind == store.KindPII && in.PII == nil {
			r.PII = store.StringList{}
		}
		r.Kind = *in.Kind
	}
	if in.Patterns != nil {
		r.Patterns = *in.Patterns
	}
	if in.PII != nil {
		r.PII = *in.PII
	}
	if in.Action != nil {
		r.Action = *in.Action
	}
	if in.CaseSensitive != nil {
		r.CaseSensitive = *in.CaseSensitive
	}
	if err := checkRule(r); err != nil {
		return nil, err
	}
	r.UpdatedAt = s.now()
	c := &change{Action: "rule.update", ResourceType: "rule", ResourceID: r.ID, TenantID: g.TenantID, Config: true,
		Changes: ruleChanges(r)}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		err := store.Update(ctx, tx, r, "name", "enabled", "direction", "kind", "patterns", "pii", "action",
			"case_sensitive", "updated_at")
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("rule") // deleted concurrently
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteRule removes a rule of a gateway.
func (s *Service) DeleteRule(ctx context.Context, p *auth.Principal, gatewayID, ruleID string) error {
	if err := s.can(ctx, p, auth.OpRuleDelete); err != nil {
		return err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return err
	}
	r, err := store.Get[store.Rule](ctx, s.db, store.Eq("id", ruleID), store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if isNotFound(err) {
		return s.missing(ctx, p, "rule", ruleID, reasonNotVisible)
	}
	if err != nil {
		return notFound(err, "rule")
	}
	c := &change{Action: "rule.delete", ResourceType: "rule", ResourceID: r.ID, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"name": r.Name}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		n, err := store.Delete[store.Rule](ctx, tx, store.Eq("id", r.ID))
		if err == nil && n == 0 {
			return apierr.NotFound("rule") // deleted concurrently
		}
		return err
	})
}

// ruleChanges is the audited state of a rule (patterns are configuration,
// not secrets).
func ruleChanges(r *store.Rule) store.Changes {
	return store.Changes{"gateway_id": r.GatewayID, "name": r.Name, "enabled": r.Enabled, "direction": r.Direction,
		"kind": r.Kind, "patterns": r.Patterns, "pii": r.PII, "action": r.Action, "case_sensitive": r.CaseSensitive}
}
