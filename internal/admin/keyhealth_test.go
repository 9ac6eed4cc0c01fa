package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// TestGatewayFigures: stats, timeseries and analysis of one gateway count
// that gateway within its tenant, and a gateway of another tenant is 404
// like that tenant.
func TestGatewayFigures(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		other := mkGateway(t, s, admin, "other")
		fake := &recordingAnalytics{}
		s.cfg.Analytics = fake
		ta := mkUser(t, s, "acme", auth.TenantAdministrator)

		if _, err := s.StatsIn(ctx, ta, Scope{GatewayID: g.ID}, Range{}); err != nil {
			t.Fatal(err)
		}
		if q := fake.last(); q.TenantID != "acme" || q.GatewayID != g.ID || q.UserID != "" {
			t.Errorf("gateway stats query %+v, want tenant acme and gateway %s", q, g.ID)
		}
		if _, err := s.TimeseriesIn(ctx, ta, Scope{TenantID: "acme", GatewayID: g.ID}, "hour", Range{}); err != nil || fake.last().GatewayID != g.ID {
			t.Errorf("gateway timeseries: %v %+v", err, fake.last())
		}
		if _, err := s.AnalysisIn(ctx, admin, Scope{GatewayID: other.ID}, "model", Range{}); err != nil ||
			fake.last().TenantID != "other" || fake.last().GatewayID != other.ID {
			t.Errorf("admin analysis of a gateway: %v %+v", err, fake.last())
		}
		_, err := s.StatsIn(ctx, ta, Scope{GatewayID: other.ID}, Range{})
		wantCode(t, err, 404, "not_found")
		_, err = s.StatsIn(ctx, admin, Scope{TenantID: "acme", GatewayID: other.ID}, Range{})
		wantCode(t, err, 404, "not_found")

		// A Member still counts only its own requests on the gateway.
		member := mkUser(t, s, "acme", auth.Member)
		if _, err := s.StatsIn(ctx, member, Scope{GatewayID: g.ID}, Range{}); err != nil {
			t.Fatal(err)
		}
		if q := fake.last(); q.UserID != member.UserID || q.GatewayID != g.ID {
			t.Errorf("member gateway stats %+v, want own requests of the gateway", q)
		}
	})
}

// TestUpdateKey: a key's weight, models and disabled flag change without
// the key being entered again; the weight is checked, a key a route names
// cannot be disabled, each change is audited, and roles without Manage
// gateways are refused.
func TestUpdateKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "old", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		w, off := 7, true
		k, err := s.UpdateKey(ctx, admin, g.ID, "openai", "old", KeyPatch{Weight: &w, Models: []string{"gpt-4o", "gpt-4o"}})
		if err != nil {
			t.Fatal(err)
		}
		if k.Weight != 7 || !cmp.Equal([]string(k.Models), []string{"gpt-4o"}) || k.Disabled {
			t.Errorf("updated key %+v", k)
		}
		bad := 0
		_, err = s.UpdateKey(ctx, admin, g.ID, "openai", "old", KeyPatch{Weight: &bad})
		wantErrParam(t, err, 400, "invalid_request", "weight")
		_, err = s.UpdateKey(ctx, admin, g.ID, "openai", "none", KeyPatch{Weight: &w})
		wantCode(t, err, 404, "not_found")

		alias := "old"
		routes := []store.Route{{Name: "smart", Strategy: "fallback", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o", KeyAlias: &alias, Weight: 1}}}}
		if _, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes}); err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateKey(ctx, admin, g.ID, "openai", "old", KeyPatch{Disabled: &off})
		wantCode(t, err, 409, "conflict")
		routes = []store.Route{}
		if _, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes}); err != nil {
			t.Fatal(err)
		}
		if k, err = s.UpdateKey(ctx, admin, g.ID, "openai", "old", KeyPatch{Disabled: &off}); err != nil || !k.Disabled {
			t.Fatalf("disable: %v %+v", err, k)
		}
		stored, err := store.Get[store.ProviderKey](ctx, s.db, store.Eq("id", k.ID))
		if err != nil || !stored.Disabled || stored.Weight != 7 || stored.SealedKey == "" {
			t.Errorf("stored key %+v %v", stored, err)
		}

		audit, err := store.All[store.AuditEntry](ctx, s.db, "id", store.Eq("action", "key.update"))
		if err != nil || len(audit) != 2 {
			t.Fatalf("key.update audit rows: %d %v, want 2", len(audit), err)
		}
		for _, a := range audit {
			if a.Outcome != "ok" || a.ResourceID != k.ID || a.Changes["last4"] != k.Last4 || strings.Contains(fmt.Sprint(a.Changes), testKey[:12]) {
				t.Errorf("audit row %+v", a)
			}
		}

		member := mkUser(t, s, "acme", auth.Member)
		_, err = s.UpdateKey(ctx, member, g.ID, "openai", "old", KeyPatch{Weight: &w})
		wantCode(t, err, 403, "forbidden")
	})
}

// testerFunc is a KeyTester of a function.
type testerFunc func(ctx context.Context, pr KeyProbe) error

func (f testerFunc) TestKey(ctx context.Context, pr KeyProbe) error { return f(ctx, pr) }

// TestTestKey: a key test calls the tester with the opened key and the
// key's model, answers ok or the message without the key, is audited,
// and is limited per key. cmd/sluice's TestKeyTester makes the call
// against the mock provider.
func TestTestKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		_, err := s.TestKey(ctx, admin, g.ID, "openai", "main", "")
		wantCode(t, err, 404, "not_found")
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey, Models: []string{"text-embedding-3-small", "gpt-4o-mini"}}); err != nil {
			t.Fatal(err)
		}
		_, err = s.TestKey(ctx, admin, g.ID, "openai", "main", "")
		wantCode(t, err, 503, "unavailable")

		var got []KeyProbe
		fail := false
		s.cfg.KeyTester = testerFunc(func(_ context.Context, pr KeyProbe) error {
			got = append(got, pr)
			if fail {
				return errors.New("upstream 401: Incorrect API key provided: " + testKey)
			}
			return nil
		})
		res, err := s.TestKey(ctx, admin, g.ID, "openai", "main", "")
		if err != nil || !res.OK || res.Model != "gpt-4o-mini" || res.Message != "" {
			t.Fatalf("test: %v %+v, want ok on the key's chat model", err, res)
		}
		if len(got) != 1 || got[0].Key.Reveal() != testKey || got[0].Provider != "openai" {
			t.Errorf("probe %+v, want the opened key of openai", got)
		}
		fail = true
		res, err = s.TestKey(ctx, admin, g.ID, "openai", "main", "gpt-4o")
		if err != nil || res.OK || res.Model != "gpt-4o" || !strings.Contains(res.Message, "Incorrect API key") {
			t.Fatalf("failed test: %v %+v", err, res)
		}
		for _, piece := range canaryPieces(testKey) {
			if strings.Contains(res.Message, piece) {
				t.Fatalf("message %q holds the key", res.Message)
			}
		}
		audit, err := store.All[store.AuditEntry](ctx, s.db, "id", store.Eq("action", "key.test"))
		if err != nil || len(audit) != 2 || audit[1].Changes["ok"] != false || audit[0].Changes["ok"] != true {
			t.Fatalf("key.test audit rows %+v %v", audit, err)
		}

		for range maxKeyTestsPerMinute - 2 {
			if _, err := s.TestKey(ctx, admin, g.ID, "openai", "main", ""); err != nil {
				t.Fatal(err)
			}
		}
		_, err = s.TestKey(ctx, admin, g.ID, "openai", "main", "")
		wantCode(t, err, 429, "rate_limit_exceeded")

		member := mkUser(t, s, "acme", auth.Member)
		_, err = s.TestKey(ctx, member, g.ID, "openai", "main", "")
		wantCode(t, err, 403, "forbidden")
	})
}
