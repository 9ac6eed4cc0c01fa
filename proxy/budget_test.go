package proxy

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Budgets (CONTRACT §7, docs/governance.md "Budgets"): the worst-case cost
// is reserved before forwarding and settled with the real cost after, on
// every exit path; a hard budget is never overspent by more than one
// request; 429 budget_exceeded (insufficient_quota, x-should-retry:
// false); soft budgets flag; no credential bypasses one.

const pricedModel = "budget-model"

// Prices of pricedModel: the output dominates, so that the worst case
// (prompt bounded by the body's size, completion by max_tokens) is close
// to the real cost and "about 20" worst cases means about 20 requests.
var (
	inPrice  = money.FromFloat(100)  // $ per million tokens
	outPrice = money.FromFloat(1000) // $ per million tokens
)

// pricedBody is a chat request of pricedModel that answers 5 prompt and 8
// completion tokens (the mock counts words) with max_tokens 8.
var pricedBody = chatBody("openai/"+pricedModel, `,"max_tokens":8`)

func setPrice(h *harness) {
	h.tb.Helper()
	_, err := h.svc.PutModelPrices(h.ctx, h.root, []admin.PriceInput{
		{Provider: "openai", Model: pricedModel, InputPerMTok: inPrice, OutputPerMTok: outPrice}})
	must(h.tb, err)
	h.rebuild()
}

// pricedWorst is the reservation of pricedBody: the documented bound (the
// prompt's tokens counted, plus a quarter and the chat overhead; the 8
// tokens of max_tokens).
func pricedWorst() money.USD {
	prompt := reservedTokens("say hello to the test", 8) - 8
	return money.Cost(int64(prompt), inPrice) + money.Cost(8, outPrice)
}

// realCost is what pricedBody costs.
var realCost = money.Cost(5, inPrice) + money.Cost(8, outPrice)

func hardBudget(amount money.USD, period string) admin.GatewaySettings {
	return admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: amount, Period: period, Hard: true})}
}

func monthStartOf(t time.Time) time.Time {
	start, _ := budget.Window("monthly", t)
	return start
}

// wantBudgetExceeded checks the 429 of a hard budget.
func wantBudgetExceeded(t *testing.T, resp *http.Response, b []byte) {
	t.Helper()
	wantAPIError(t, resp, b, 429, "insufficient_quota", "budget_exceeded", "")
	if got := resp.Header.Get("x-should-retry"); got != "false" {
		t.Errorf("x-should-retry %q, want false", got)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q, want a positive number of seconds", resp.Header.Get("Retry-After"))
	}
}

// budgetTarget is the holder of the budget a race runs against: a
// gateway, a token or a tenant.
type budgetTarget struct {
	scope string
	// set gives the holder a hard monthly budget of amount and rebuilds
	// the snapshot.
	set func(amount money.USD)
	// read reads the budget back through the admin API of svc.
	read func(svc *admin.Service) *store.Budget
}

// gatewayTarget is the harness gateway's budget.
func gatewayTarget(h *harness) budgetTarget {
	return budgetTarget{
		scope: budget.GatewayScope(h.gw.ID),
		set:   func(amount money.USD) { h.update(hardBudget(amount, "monthly")) },
		read: func(svc *admin.Service) *store.Budget {
			gw, err := svc.GetGateway(h.ctx, h.root, h.gw.ID)
			must(h.tb, err)
			return gw.Budget
		},
	}
}

// budgetRace sends 200 concurrent requests, spread over addrs, against a
// hard monthly budget of target worth about 20 worst cases, and checks
// the bound with m's counters: every admitted request cost realCost, the
// spend is theirs and never above the amount (a real cost never exceeds
// its reservation here, so the bound of "one request" is not even used),
// at least amount/worst were admitted, and nothing stays reserved.
func budgetRace(t *testing.T, h *harness, addrs []string, m *budget.Manager, target budgetTarget) {
	setPrice(h)
	worst := pricedWorst()
	amount := worst*20 + worst/2
	target.set(amount)
	h.mock.Script(providertest.Step{Latency: 30 * time.Millisecond, Times: 200})
	var mu sync.Mutex
	var ok []string
	refused := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 200 {
		wg.Go(func() {
			<-start
			resp, b := h.post(addrs[i%len(addrs)], chatPath, h.token, pricedBody)
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case 200:
				ok = append(ok, resp.Header.Get(RequestIDHeader))
			case 429:
				wantBudgetExceeded(t, resp, b)
				refused++
			default:
				t.Errorf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	close(start)
	wg.Wait()
	admitted := money.USD(len(ok))
	spent, reserved, err := m.State(context.Background(), target.scope, monthStartOf(time.Now()))
	must(t, err)
	t.Logf("%s: admitted %d, refused %d; worst %s, real %s, amount %s, spent %s", target.scope, len(ok), refused, worst, realCost, amount, spent)
	if len(ok)+refused != 200 {
		t.Fatalf("%d answers, want 200", len(ok)+refused)
	}
	if spent != admitted*realCost {
		t.Errorf("spent %s, want %d × %s", spent, len(ok), realCost)
	}
	if spent > amount+worst {
		t.Errorf("spent %s passes the amount %s by more than one request (%s)", spent, amount, worst)
	}
	if spent > amount {
		t.Errorf("spent %s passes the amount %s although no request cost more than it reserved", spent, amount)
	}
	if len(ok) < 20 {
		t.Errorf("%d admitted, want at least 20 (amount / worst case)", len(ok))
	}
	if reserved != 0 {
		t.Errorf("%s still reserved after every request ended, want 0", reserved)
	}
	var recorded money.USD
	for _, id := range ok {
		recorded += h.record(id).CostUSD
	}
	if recorded != spent {
		t.Errorf("records cost %s, counters %s", recorded, spent)
	}
	// The admin API reads the same counters.
	got := target.read(h.adminWith(func(c *admin.Config) { c.Budgets = m }))
	if got == nil || got.SpentUSD != spent || got.RemainingUSD != amount-spent || got.ResetsAt == nil {
		t.Errorf("admin budget %+v, want spent %s remaining %s", got, spent, amount-spent)
	}
}

// TestBudgetUnderConcurrency: one process, per-process counters.
func TestBudgetUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	budgetRace(t, h, []string{h.addr}, h.inf.cfg.Budgets, gatewayTarget(h))
}

// budgetRaceOnRedis runs budgetRace on two proxies sharing one Redis:
// neither may fall back to its own counters.
func budgetRaceOnRedis(t *testing.T, target func(*harness) budgetTarget) {
	t.Helper()
	_, prefix := testenv.Redis(t)
	h := newHarness(t, harnessConfig{})
	var addrs []string
	var mgrs []*budget.Manager
	for range 2 {
		lim, b := sharedRedis(t, redisClient(t, ""), prefix, 10*time.Second)
		addrs = append(addrs, h.limitReplica(t, lim, b).addr)
		mgrs = append(mgrs, b)
	}
	budgetRace(t, h, addrs, mgrs[0], target(h))
	for i, m := range mgrs {
		if n := m.Fallbacks(); n != 0 {
			t.Errorf("replica %d fell back %d times", i, n)
		}
	}
}

// TestBudgetUnderConcurrencyTwoReplicas: two proxies sharing one Redis.
func TestBudgetUnderConcurrencyTwoReplicas(t *testing.T) {
	t.Parallel()
	budgetRaceOnRedis(t, gatewayTarget)
}

// TestBudgetHardRefuses: an exhausted hard budget answers 429
// budget_exceeded before any provider call, with Retry-After until the
// period resets (a day for a total budget).
func TestBudgetHardRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	// Room for one worst case: the first request passes, and what it
	// really cost leaves less than a worst case.
	h.update(hardBudget(pricedWorst(), "monthly"))
	resp, b := h.post(h.addr, chatPath, h.token, pricedBody)
	wantStatus(t, resp, b, 200)
	resp, b = h.post(h.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
	_, end := budget.Window("monthly", time.Now())
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if want := int(time.Until(*end).Seconds()); ra < want-5 || ra > want+5 {
		t.Errorf("Retry-After %d, want about %d (until the month ends)", ra, want)
	}
	// An unpriced model reserves and costs nothing: it passes while the
	// budget is not spent...
	resp, b = h.chat(chatBody("openai/unpriced-model", ""))
	wantStatus(t, resp, b, 200)
	// ...and is refused once it is (the amount lowered to the spend).
	h.update(hardBudget(realCost, "monthly"))
	resp, b = h.chat(chatBody("openai/unpriced-model", ""))
	wantBudgetExceeded(t, resp, b)
	if n := h.mock.Count(); n != 2 {
		t.Errorf("the provider saw %d requests, want 2", n)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 429 || rec.ErrorCode != "budget_exceeded" {
		t.Errorf("record %d %q, want 429 budget_exceeded", rec.Status, rec.ErrorCode)
	}
	h.update(hardBudget(1, "total")) // a nano-dollar
	resp, b = h.chat(pricedBody)
	wantBudgetExceeded(t, resp, b)
	if ra := resp.Header.Get("Retry-After"); ra != "86400" {
		t.Errorf("Retry-After %q for a total budget, want 86400", ra)
	}
}

// TestBudgetReservationTooBig: a request whose worst case does not fit is
// refused even though the budget has money left.
func TestBudgetReservationTooBig(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	h.update(hardBudget(pricedWorst()*3, "daily"))
	// No max_tokens: the worst case assumes 4096 completion tokens.
	resp, b := h.chat(chatBody("openai/"+pricedModel, ""))
	wantBudgetExceeded(t, resp, b)
	resp, b = h.chat(pricedBody)
	wantStatus(t, resp, b, 200)
}

// TestBudgetSoft: a soft budget never refuses; the records of requests
// past it are flagged budget_exceeded_soft.
func TestBudgetSoft(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	h.update(admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: realCost * 2, Period: "weekly", Hard: false})})
	var flagged []bool
	for range 4 {
		resp, b := h.chat(pricedBody)
		wantStatus(t, resp, b, 200)
		rec := h.record(resp.Header.Get(RequestIDHeader))
		flagged = append(flagged, slices.Contains(rec.Flags, flagSoftBudget))
	}
	if flagged[0] || !flagged[2] || !flagged[3] {
		t.Errorf("flags %v: want the first unflagged and the third and fourth flagged", flagged)
	}
	start, _ := budget.Window("weekly", time.Now())
	if spent, _ := h.inf.cfg.Budgets.Spent(context.Background(), budget.GatewayScope(h.gw.ID), start); spent != 4*realCost {
		t.Errorf("spent %s, want 4 × %s (soft budgets do not stop spending)", spent, realCost)
	}
}

// TestBudgetReleasedOnFailure: failed upstream calls (500s, before and
// during a stream) give their reservation back and spend nothing they
// were not billed for.
func TestBudgetReleasedOnFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	h.update(hardBudget(money.FromFloat(10), "monthly"))
	h.update(admin.GatewaySettings{Retry: &store.RetrySettings{MaxAttempts: 2, BackoffMS: 1}})
	state := func() (money.USD, money.USD) {
		s, r, err := h.inf.cfg.Budgets.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
		must(t, err)
		return s, r
	}
	h.mock.Script(providertest.Step{Status: 500, Times: 2})
	resp, b := h.chat(pricedBody)
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	if s, r := state(); s != 0 || r != 0 {
		t.Errorf("after a 502: spent %s reserved %s, want 0 and 0", s, r)
	}
	h.mock.Script(providertest.Step{Status: 503, Times: 2})
	resp, b = h.chat(chatBody("openai/"+pricedModel, `,"max_tokens":8,"stream":true`))
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	if s, r := state(); s != 0 || r != 0 {
		t.Errorf("after a failed stream: spent %s reserved %s, want 0 and 0", s, r)
	}
	// A stream cut after its first chunk bills what was generated.
	h.mock.Script(providertest.Step{Chunks: 4, ResetAfter: 1})
	resp, sr := h.openStream(t, chatBody("openai/"+pricedModel, `,"max_tokens":8,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	if !waitFor(5*time.Second, func() bool { _, r := state(); return r == 0 }) {
		_, r := state()
		t.Errorf("after a cut stream: reserved %s, want 0", r)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if s, _ := state(); s != rec.CostUSD {
		t.Errorf("after a cut stream: spent %s, want the record's cost %s", s, rec.CostUSD)
	}
}

// TestBudgetNoBypass: gateway tokens, user tokens (an Administrator's
// included) and playground tokens are all held to the gateway's budget;
// a user's budget holds its tokens on any gateway.
func TestBudgetNoBypass(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	pg, err := h.svc.CreatePlaygroundToken(h.ctx, h.root, h.gw.ID)
	must(t, err)
	adminTok, err := h.svc.CreateUserToken(h.ctx, h.root, h.root.UserID, admin.TokenInput{Name: "admin"})
	must(t, err)
	_, member := h.userToken(testTenant, auth.Member, "member@acme.test", h.gw.ID)
	h.update(hardBudget(1, "daily")) // a nano-dollar: less than any priced request
	for name, tok := range map[string]string{"gateway": h.token, "administrator": adminTok.Secret, "playground": pg.Token, "member": member} {
		for _, path := range []string{gwPath("compat/chat/completions"), gwPath("openai/chat/completions")} {
			body := pricedBody
			if path != chatPath {
				body = chatBody(pricedModel, `,"max_tokens":8`)
			}
			resp, b := h.post(h.addr, path, tok, body)
			if resp.StatusCode != 429 {
				t.Errorf("%s token on %s: status %d, want 429: %s", name, path, resp.StatusCode, b)
			}
		}
		resp, b := h.post(h.addr, gwPath("openai/embeddings"), tok, `{"model":"text-embedding-3-small","input":"hi"}`)
		if resp.StatusCode != 429 {
			t.Errorf("%s token on embeddings: status %d, want 429: %s", name, resp.StatusCode, b)
		}
	}
	if n := h.mock.Count(); n != 0 {
		t.Errorf("the provider saw %d requests, want 0", n)
	}
	// A user budget: the gateway has none, the user's is spent.
	h.update(admin.GatewaySettings{Budget: graphql.OmittableOf[*store.Budget](nil)})
	u, userTok := h.userToken(testTenant, auth.Member, "capped@acme.test", h.gw.ID)
	_, err = h.svc.UpdateUser(h.ctx, h.root, u.ID, admin.UserPatch{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: 1, Period: "monthly", Hard: true})})
	must(t, err)
	h.rebuild()
	resp, b := h.post(h.addr, chatPath, userTok, pricedBody)
	wantBudgetExceeded(t, resp, b)
	resp, b = h.post(h.addr, chatPath, h.token, pricedBody)
	wantStatus(t, resp, b, 200)
}

// spendSource is a SpendSource of fixed answers.
type spendSource map[string]int64

func (s spendSource) SpendSince(_ context.Context, scope string, _ time.Time) (int64, error) {
	return s[scope], nil
}

// TestBudgetSurvivesRestart: a fresh process starts its counters from the
// persisted spend, per process and with Redis.
func TestBudgetSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	amount := money.FromFloat(1)
	h.update(hardBudget(amount, "monthly"))
	wantPersistedSpend(t, h, budget.GatewayScope(h.gw.ID), amount)
}

// wantPersistedSpend: a fresh process, alone and on Redis, starts the
// counter of scope from its persisted spend, amount less half a request's
// cost, and so refuses the next request.
func wantPersistedSpend(t *testing.T, h *harness, scope string, amount money.USD) {
	t.Helper()
	src := spendSource{scope: int64(amount - realCost/2)}
	local := h.limitReplica(t, nil, budget.NewLocal(src))
	resp, b := h.post(local.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
	if spent, _ := local.inf.cfg.Budgets.Spent(context.Background(), scope, monthStartOf(time.Now())); spent != amount-realCost/2 {
		t.Errorf("spent %s, want the persisted %s", spent, amount-realCost/2)
	}

	c, prefix := testenv.Redis(t)
	lim, _ := sharedRedis(t, c, prefix, 10*time.Second)
	b2, err := budget.NewManager(budget.Config{Redis: c, Prefix: prefix + "budget:", Spend: src, Timeout: 10 * time.Second})
	must(t, err)
	shared := h.limitReplica(t, lim, b2)
	resp, b = h.post(shared.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
}

// TestRedisKilledMidRun: Redis goes away halfway through a run of
// requests on two replicas: every request is still served (no 5xx) by
// the per-process fallback, and Redis is used again once it is back.
func TestRedisKilledMidRun(t *testing.T) {
	t.Parallel()
	base, prefix := testenv.Redis(t)
	tcp := testenv.NewTCPProxy(t, base.Options().Addr)
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	h.update(hardBudget(money.FromFloat(100), "monthly"))
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{RequestsPerMinute: ptr(10000), TokensPerMinute: ptr(1_000_000)}})
	type rep struct {
		addr string
		b    *budget.Manager
		lim  interface{ Fallbacks() int64 }
	}
	var reps []rep
	for range 2 {
		// A generous timeout: the cut refuses connections at once, and a
		// call that times out on a loaded machine after Redis ran it would
		// leave its reservation there until the lease ends — a real outcome
		// (the budget errs on the strict side), but not what this test is
		// about.
		lim, b := sharedRedis(t, redisClient(t, tcp.Addr()), prefix, 2*time.Second)
		reps = append(reps, rep{h.limitReplica(t, lim, b).addr, b, lim})
	}
	run := func(n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				resp, b := h.post(reps[i%2].addr, chatPath, h.token, pricedBody)
				if resp.StatusCode != 200 {
					t.Errorf("status %d: %s", resp.StatusCode, b)
				}
			})
		}
		wg.Wait()
	}
	run(50)
	tcp.Break()
	run(50)
	for i, r := range reps {
		if r.lim.Fallbacks() == 0 || r.b.Fallbacks() == 0 {
			t.Errorf("replica %d: no call fell back while Redis was away", i)
		}
	}
	tcp.Restore()
	if !waitFor(5*time.Second, func() bool {
		before := reps[0].lim.Fallbacks()
		resp, b := h.post(reps[0].addr, chatPath, h.token, pricedBody)
		if resp.StatusCode != 200 {
			t.Errorf("status %d: %s", resp.StatusCode, b)
		}
		return reps[0].lim.Fallbacks() == before
	}) {
		t.Error("Redis was not used again after it came back")
	}
	// The 50 settled before the cut and the ones replayed since are in
	// Redis; nothing is left reserved there once the replicas caught up.
	if !waitFor(5*time.Second, func() bool {
		run(2)
		_, r, err := reps[1].b.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
		return err == nil && r == 0
	}) {
		t.Error("reservations remain in Redis after recovery")
	}
}
