package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Limits shared by replicas through Redis (checklist 38 and 42).

// redisReplicas starts n proxies over h's configuration sharing one
// Redis for their limits and budgets, and returns their addresses and
// one replica's budget manager (they share the counters).
func redisReplicas(t *testing.T, h *harness, n int) ([]string, *budget.Manager) {
	t.Helper()
	_, prefix := testenv.Redis(t)
	var addrs []string
	var m *budget.Manager
	for range n {
		lim, b := sharedRedis(t, redisClient(t, ""), prefix, 10*time.Second)
		addrs = append(addrs, h.limitReplica(t, lim, b).addr)
		m = b
		t.Cleanup(func() {
			if lim.Fallbacks() != 0 || b.Fallbacks() != 0 {
				t.Errorf("a replica fell back (limiter %d, budgets %d): the test Redis must answer", lim.Fallbacks(), b.Fallbacks())
			}
		})
	}
	return addrs, m
}

// TestBudgetExactlyAtLimitAcrossReplicas (checklist 38): a $1.00 hard
// budget, requests that each reserve exactly $0.05 (50 answer tokens at
// $1,000 per million, the prompt free), three replicas sharing Redis.
// Twenty requests that fail upstream hold the whole budget while they
// run and give it all back. Then 100 concurrent requests: exactly 20 are
// admitted, 80 get 429 insufficient_quota budget_exceeded, the final
// spend is $1.00 and nothing stays reserved.
func TestBudgetExactlyAtLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	_, err := h.svc.PutModelPrices(h.ctx, h.root, []admin.PriceInput{
		{Provider: "openai", Model: "quota-model", InputPerMTok: 0, OutputPerMTok: money.FromFloat(1000)}})
	must(t, err)
	amount := money.FromFloat(1)
	h.update(hardBudget(amount, "weekly"))
	// One attempt, and a breaker that the failures below do not open.
	h.update(admin.GatewaySettings{Retry: &store.RetrySettings{MaxAttempts: 1},
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1000, CooldownSeconds: 1}})
	addrs, m := redisReplicas(t, h, 3)
	body := chatBody("openai/quota-model", `,"max_tokens":50`)
	weekStart, _ := budget.Window("weekly", time.Now())
	state := func() (money.USD, money.USD) {
		s, r, err := m.State(context.Background(), budget.GatewayScope(h.gw.ID), weekStart)
		must(t, err)
		return s, r
	}
	// race sends n concurrent requests spread over the replicas and
	// counts the answers by status.
	race := func(n int) map[int]int {
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				resp, b := h.post(addrs[i%len(addrs)], chatPath, h.token, body)
				if resp.StatusCode == 429 {
					wantBudgetExceeded(t, resp, b)
				}
				mu.Lock()
				got[resp.StatusCode]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		return got
	}

	h.mock.Script(providertest.Step{Status: 500, Latency: 300 * time.Millisecond, Times: 20})
	if got := race(20); got[502] != 20 {
		t.Fatalf("answers %v, want 20 × 502 (all admitted: 20 × $0.05 is the amount)", got)
	}
	if s, r := state(); s != 0 || r != 0 {
		t.Errorf("after 20 failed requests: spent %s reserved %s, want 0 and 0 (released)", s, r)
	}

	h.mock.Script(providertest.Step{AnswerTokens: 50, Latency: 300 * time.Millisecond, Times: 100})
	got := race(100)
	if got[200] != 20 || got[429] != 80 {
		t.Errorf("answers %v, want exactly 20 × 200 and 80 × 429", got)
	}
	if s, r := state(); s != amount || r != 0 {
		t.Errorf("spent %s reserved %s, want exactly %s and 0", s, r, amount)
	}
}

// TestTokensPerMinuteAcrossReplicas (checklist 42): the tokens-per-minute
// reservations are made on the counter the replicas share.
func TestTokensPerMinuteAcrossReplicas(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	addrs, _ := redisReplicas(t, h, 3)
	tpmRace(t, h, addrs, 30)
}
