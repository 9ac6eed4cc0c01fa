package budget

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScopes: the four scopes split back into their kind and id; other
// strings do not.
func TestScopes(t *testing.T) {
	for _, c := range []struct {
		scope, kind, id string
	}{
		{TenantScope("acme"), KindTenant, "acme"},
		{GatewayScope("gw_1"), KindGateway, "gw_1"},
		{UserScope("usr_1"), KindUser, "usr_1"},
		{TokenScope("tok_1"), KindToken, "tok_1"},
		{"tenant:", "", ""},
		{"team:x", "", ""},
		{"gateway", "", ""},
	} {
		kind, id, ok := SplitScope(c.scope)
		if kind != c.kind || id != c.id || ok != (c.kind != "") {
			t.Errorf("SplitScope(%q) = %q, %q, %v; want %q, %q", c.scope, kind, id, ok, c.kind, c.id)
		}
	}
}

// TestReserveAllOrNothing: a request held to tenant, gateway, user and
// token budgets is admitted only when all four can hold its worst case;
// when the last refuses, the three already held are given back (nothing
// reserved, nothing spent), and the request that fits is admitted with
// Remaining the least left among them.
func TestReserveAllOrNothing(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			m := mk(t, Config{})
			ctx := context.Background()
			limits := []Limit{
				{Scope: TenantScope("acme"), Amount: usd(10), Period: "monthly", Hard: true},
				{Scope: GatewayScope("gw"), Amount: usd(5), Period: "monthly", Hard: true},
				{Scope: UserScope("u"), Amount: usd(3), Period: "weekly", Hard: false},
				{Scope: TokenScope("tok"), Amount: usd(1), Period: "daily", Hard: true},
			}
			if r, ref := m.Reserve(ctx, march, limits, usd(2)); r != nil || ref == nil || ref.Limit.Scope != TokenScope("tok") {
				t.Fatalf("Reserve of $2 = %v, %+v; want the token's refusal", r, ref)
			}
			for _, l := range limits {
				start, _ := Window(l.Period, march)
				if s, r := state(t, m, l.Scope, start); s != 0 || r != 0 {
					t.Errorf("%s after the refusal: spent %s reserved %s, want 0 and 0", l.Scope, s, r)
				}
			}
			r, ref := m.Reserve(ctx, march, limits, usd(0.75))
			if ref != nil {
				t.Fatalf("Reserve of $0.75 refused: %+v", ref)
			}
			if want := usd(0.25); r.Remaining != want {
				t.Errorf("Remaining %s, want %s (the token's)", r.Remaining, want)
			}
			m.Settle(ctx, r, usd(0.5))
			for _, l := range limits {
				start, _ := Window(l.Period, march)
				if s, r := state(t, m, l.Scope, start); s != usd(0.5) || r != 0 {
					t.Errorf("%s after the settle: spent %s reserved %s, want $0.5 and 0", l.Scope, s, r)
				}
			}
		})
	}
}

// TestOnSettle: every budget a request settles against is reported once,
// with its spend after the request: what threshold alerts read.
func TestOnSettle(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var got []Settlement
			m := mk(t, Config{OnSettle: func(_ context.Context, s Settlement) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, s)
			}})
			ctx := context.Background()
			limits := []Limit{
				{Scope: TenantScope("acme"), Amount: usd(10), Period: "monthly", Hard: true},
				{Scope: TokenScope("tok"), Amount: usd(1), Period: "total", Hard: false},
			}
			for range 2 {
				r, ref := m.Reserve(ctx, march, limits, usd(0.5))
				if ref != nil {
					t.Fatalf("refused: %+v", ref)
				}
				m.Settle(ctx, r, usd(0.25))
			}
			want := []Settlement{
				{Kind: KindTenant, ID: "acme", Period: "monthly", PeriodStart: monthStart, Hard: true, Spent: usd(0.25), Amount: usd(10)},
				{Kind: KindToken, ID: "tok", Period: "total", Spent: usd(0.25), Amount: usd(1)},
				{Kind: KindTenant, ID: "acme", Period: "monthly", PeriodStart: monthStart, Hard: true, Spent: usd(0.5), Amount: usd(10)},
				{Kind: KindToken, ID: "tok", Period: "total", Spent: usd(0.5), Amount: usd(1)},
			}
			mu.Lock()
			defer mu.Unlock()
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("settlements (-want +got):\n%s", d)
			}
		})
	}
}
