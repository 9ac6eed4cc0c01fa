package admin

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// TestTenantSpendBreakdown: Finance reads its tenant's spend by gateway,
// user and token, named, costliest first, with each budget's state, from a
// real analytics store; requests of another tenant count nowhere.
func TestTenantSpendBreakdown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		member := mkUser(t, s, "acme", auth.Member)
		fin := mkUser(t, s, "acme", auth.Finance)
		hard := &store.Budget{AmountUSD: money.FromFloat(20), Period: store.PeriodMonthly, Hard: true}
		tok, err := s.CreateGatewayToken(ctx, admin, g.ID, TokenInput{Name: "ci", Budget: hard})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateTenant(ctx, admin, "acme", TenantPatch{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(100), Period: store.PeriodMonthly})}); err != nil {
			t.Fatal(err)
		}

		an, err := embedded.Open(ctx, filepath.Join(t.TempDir(), "analytics.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { an.Close() })
		now := s.now()
		rec := func(id, tenant, token, user string, usd float64) *analytics.Record {
			return &analytics.Record{ID: id, TS: now.Add(-time.Hour), TenantID: tenant, GatewayID: g.ID, TokenID: token, UserID: user,
				Provider: "openai", Model: "gpt-4o", Status: 200, CostUSD: money.FromFloat(usd)}
		}
		err = an.Write(ctx, &analytics.Batch{ID: "b1", Records: []*analytics.Record{
			rec("r1", "acme", tok.ID, "", 2),
			rec("r2", "acme", tok.ID, "", 3),
			rec("r3", "acme", "tok_member", member.UserID, 1),
			rec("r4", "other", "tok_other", "", 50),
		}})
		if err != nil {
			t.Fatal(err)
		}
		s.cfg.Analytics = an

		sp, err := s.TenantSpend(ctx, fin, "acme", Range{})
		if err != nil {
			t.Fatal(err)
		}
		if sp.TotalUSD != money.FromFloat(6) || sp.Budget == nil || sp.Budget.AmountUSD != money.FromFloat(100) || sp.Budget.ResetsAt == nil {
			t.Fatalf("tenant spend total %v budget %+v, want 6 USD under a monthly 100 USD budget", sp.TotalUSD, sp.Budget)
		}
		type row struct {
			ID, Name string
			Requests int64
			Cost     money.USD
			Budget   bool
		}
		rows := func(in []ScopeSpend) []row {
			out := []row{}
			for _, r := range in {
				out = append(out, row{r.ID, r.Name, r.Requests, r.CostUSD, r.Budget != nil})
			}
			return out
		}
		if d := cmp.Diff([]row{{g.ID, g.Name, 3, money.FromFloat(6), false}}, rows(sp.ByGateway)); d != "" {
			t.Errorf("by gateway (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]row{{"", "", 2, money.FromFloat(5), false}, {member.UserID, member.Email, 1, money.FromFloat(1), false}}, rows(sp.ByUser)); d != "" {
			t.Errorf("by user (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]row{{tok.ID, "ci", 2, money.FromFloat(5), true}, {"tok_member", "", 1, money.FromFloat(1), false}}, rows(sp.ByToken)); d != "" {
			t.Errorf("by token (-want +got):\n%s", d)
		}
		if b := sp.ByToken[0].Budget; b.RemainingUSD != money.FromFloat(20) || b.ResetsAt == nil {
			t.Errorf("token budget state %+v, want 20 USD remaining (no budget manager) and a reset time", b)
		}

		gs, err := s.GatewaySpend(ctx, fin, g.ID, Range{})
		if err != nil || gs.ByToken != nil || gs.TotalUSD != money.FromFloat(6) {
			t.Fatalf("gateway spend: %v %+v, want 6 USD and no breakdown by token", err, gs)
		}
	})
}

// TestStatsScopeByPermission: roles that may read the tenant's cost
// breakdowns or analytics read their tenant's whole figures in stats and
// timeseries; Member and Viewer only those of their own tokens.
func TestStatsScopeByPermission(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		mkGateway(t, s, admin, "acme")
		fake := &recordingAnalytics{}
		s.cfg.Analytics = fake
		for _, c := range []struct {
			role    auth.Role
			ownOnly bool
		}{
			{auth.TenantAdministrator, false},
			{auth.AIManager, false},
			{auth.Finance, false},
			{auth.Member, true},
			{auth.Viewer, true},
		} {
			p := mkUser(t, s, "acme", c.role)
			if _, err := s.Stats(ctx, p, "", Range{}); err != nil {
				t.Fatalf("%s stats: %v", c.role, err)
			}
			want := analytics.Query{TenantID: "acme"}
			if c.ownOnly {
				want.UserID = p.UserID
			}
			q := fake.last()
			if q.TenantID != want.TenantID || q.UserID != want.UserID {
				t.Errorf("%s stats scope tenant %q user %q, want tenant %q user %q", c.role, q.TenantID, q.UserID, want.TenantID, want.UserID)
			}
			if _, err := s.Timeseries(ctx, p, "", "", Range{}); err != nil || fake.last().UserID != want.UserID {
				t.Errorf("%s timeseries scope user %q (%v), want %q", c.role, fake.last().UserID, err, want.UserID)
			}
		}
	})
}
