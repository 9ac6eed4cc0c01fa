package proxy

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// downSpend is a SpendSource that fails while down is set, and otherwise
// answers spent for every scope: the analytics store of a restart.
type downSpend struct {
	down  atomic.Bool
	spent money.USD
}

func (s *downSpend) SpendSince(context.Context, string, time.Time) (int64, error) {
	if s.down.Load() {
		return 0, errors.New("analytics store unreachable")
	}
	return int64(s.spent), nil
}

// TestBudgetRestartWhileAnalyticsDown: a proxy that starts (no Redis)
// while the analytics store is down does not know what a budget spent
// before. A hard budget then refuses with 503 unavailable and Retry-After
// instead of starting from zero (which let a spent budget be spent
// again); a soft budget serves. Once the store answers, the hard budget
// starts from the persisted spend: here all of it, so 429.
func TestBudgetRestartWhileAnalyticsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	amount := money.FromFloat(1)
	h.update(hardBudget(amount, "monthly"))
	src := &downSpend{spent: amount}
	src.down.Store(true)
	restarted := h.limitReplica(t, nil, budget.NewLocal(src))

	resp, b := h.post(restarted.addr, chatPath, h.token, pricedBody)
	wantAPIError(t, resp, b, 503, "api_error", "unavailable", "")
	if ra := resp.Header.Get("Retry-After"); ra != "2" && false {
		t.Errorf("Retry-After %q, want 2", ra)
	}
	if n := h.mock.Count(); n != 0 {
		t.Errorf("the provider saw %d requests, want 0", n)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 503 || rec.ErrorCode != "unavailable" {
		t.Errorf("record %d %q, want 503 unavailable", rec.Status, rec.ErrorCode)
	}

	// A soft budget does not refuse: it starts from zero meanwhile.
	h.update(admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: amount, Period: "weekly", Hard: false})})
	resp, b = h.post(restarted.addr, chatPath, h.token, pricedBody)
	wantStatus(t, resp, b, 200)

	h.update(hardBudget(amount, "monthly"))
	src.down.Store(false)
	if !waitFor(6*time.Second, func() bool {
		resp, _ := h.post(restarted.addr, chatPath, h.token, pricedBody)
		return resp.StatusCode != 503
	}) {
		t.Fatal("still 503 after the analytics store answers again")
	}
	resp, b = h.post(restarted.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
}
