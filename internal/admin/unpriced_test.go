package admin

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
)

// unpricedFixture is a service with tenants acme and other, and an
// analytics store holding requests priced and unpriced of both.
func unpricedFixture(t *testing.T, s *Service) (admin, fin, member *auth.Principal) {
	t.Helper()
	ctx := context.Background()
	admin = platformAdmin(t, s)
	g := mkGateway(t, s, admin, "acme")
	mkGateway(t, s, admin, "other")
	fin, member = mkUser(t, s, "acme", auth.Finance), mkUser(t, s, "acme", auth.Member)
	an, err := embedded.Open(ctx, filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { an.Close() })
	now := s.now()
	rec := func(id, tenant, user, provider, model string, cost float64, flags ...string) *analytics.Record {
		return &analytics.Record{ID: id, TS: now.Add(-time.Hour), TenantID: tenant, GatewayID: g.ID, UserID: user,
			Provider: provider, Model: model, Status: 200, TokensIn: 100, TokensOut: 10, CostUSD: money.FromFloat(cost), Flags: flags}
	}
	err = an.Write(ctx, &analytics.Batch{ID: "b1", Records: []*analytics.Record{
		rec("r1", "acme", member.UserID, "openai", "gpt-4o", 2),
		rec("r2", "acme", member.UserID, "mistral", "mystery", 0, analytics.UnpricedFlag),
		rec("r3", "acme", fin.UserID, "mistral", "mystery", 0, analytics.UnpricedFlag, "usage_estimated"),
		rec("r4", "acme", member.UserID, "mistral", "priced-since", 0, analytics.UnpricedFlag),
		rec("r5", "other", "usr_x", "mistral", "elsewhere", 0, analytics.UnpricedFlag),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.cfg.Analytics = an
	_, err = s.PutModelPrices(ctx, admin, []PriceInput{{Provider: "mistral", Model: "priced-since", InputPerMTok: money.FromFloat(1), OutputPerMTok: money.FromFloat(2)}})
	if err != nil {
		t.Fatal(err)
	}
	return admin, fin, member
}

// TestUnpricedModels: the models served without a price that still have
// none, per tenant for the roles that read prices, every tenant's for the
// Administrator; the spend counts the unpriced requests.
func TestUnpricedModels(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin, fin, member := unpricedFixture(t, s)
		got, err := s.UnpricedModels(ctx, fin, "", Range{})
		if err != nil {
			t.Fatal(err)
		}
		want := []UnpricedModel{{Provider: "mistral", Model: "mystery", Requests: 2, TokensIn: 200, TokensOut: 20}}
		if d := cmp.Diff(want, got.Data); d != "" {
			t.Errorf("Finance's unpriced models (-want +got):\n%s", d)
		}
		got, err = s.UnpricedModels(ctx, admin, "", Range{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, UnpricedModel{Provider: "mistral", Model: "elsewhere", Requests: 1, TokensIn: 100, TokensOut: 10})
		if d := cmp.Diff(want, got.Data); d != "" {
			t.Errorf("the Administrator's unpriced models (-want +got):\n%s", d)
		}
		_, err = s.UnpricedModels(ctx, member, "", Range{})
		wantCode(t, err, 403, "forbidden")
		_, err = s.UnpricedModels(ctx, fin, "other", Range{})
		wantCode(t, err, 404, "not_found")

		sp, err := s.TenantSpend(ctx, fin, "acme", Range{})
		if err != nil {
			t.Fatal(err)
		}
		if sp.UnpricedRequests != 3 || len(sp.ByUser) == 0 {
			t.Fatalf("tenant spend counts %d unpriced requests, want 3 (by user %+v)", sp.UnpricedRequests, sp.ByUser)
		}
		for _, u := range sp.ByUser {
			if want := map[string]int64{member.UserID: 2, fin.UserID: 1}[u.ID]; u.UnpricedRequests != want {
				t.Errorf("user %s: %d unpriced requests, want %d", u.ID, u.UnpricedRequests, want)
			}
		}
	})
}

// TestPlaygroundRequest: a Member reads the served target and the cost of
// its own request, and whether it was priced; nobody reads another's.
func TestPlaygroundRequest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin, fin, member := unpricedFixture(t, s)
		got, err := s.GetPlaygroundRequest(ctx, member, "r1")
		if err != nil {
			t.Fatal(err)
		}
		want := &PlaygroundRequest{ID: "r1", Provider: "openai", Model: "gpt-4o", Status: 200, TokensIn: 100, TokensOut: 10, CostUSD: money.FromFloat(2), Priced: true}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("priced request (-want +got):\n%s", d)
		}
		if got, err = s.GetPlaygroundRequest(ctx, member, "r2"); err != nil || got.Priced || got.CostUSD != 0 || got.Model != "mystery" {
			t.Fatalf("unpriced request: %v %+v", err, got)
		}
		_, err = s.GetPlaygroundRequest(ctx, member, "r3") // Finance's
		wantCode(t, err, 404, "not_found")
		_, err = s.GetPlaygroundRequest(ctx, admin, "r1") // the Administrator's own requests only
		wantCode(t, err, 404, "not_found")
		_, err = s.GetPlaygroundRequest(ctx, member, "nope")
		wantCode(t, err, 404, "not_found")
		_, err = s.GetPlaygroundRequest(ctx, fin, "r3")
		wantCode(t, err, 403, "forbidden")
	})
}
