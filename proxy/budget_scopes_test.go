package proxy

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// Budgets on API tokens and on the tenant (CONTRACT §14,
// docs/governance.md "Budgets"): the same reservation guarantee as the
// gateway's; a request is admitted only when every budget that applies
// holds its worst case, and a refusal by one leaves nothing held by the
// others; x-sluice-budget-remaining-usd says the least left.

// hardMonthly is a hard monthly budget of amount.
func hardMonthly(amount money.USD) graphql.Omittable[*store.Budget] {
	return graphql.OmittableOf(&store.Budget{AmountUSD: amount, Period: store.PeriodMonthly, Hard: true})
}

// tokenTarget is the budget of the harness's gateway token.
func tokenTarget(h *harness) budgetTarget {
	return budgetTarget{
		scope: budget.TokenScope(h.tokenID),
		set: func(amount money.USD) {
			_, err := h.svc.UpdateGatewayToken(h.ctx, h.root, h.gw.ID, h.tokenID, admin.TokenPatch{Budget: hardMonthly(amount)})
			must(h.tb, err)
			h.rebuild()
		},
		read: func(svc *admin.Service) *store.Budget {
			l, err := svc.ListGatewayTokens(h.ctx, h.root, h.gw.ID, admin.Page{})
			must(h.tb, err)
			for _, tok := range l.Data {
				if tok.ID == h.tokenID {
					return tok.Budget
				}
			}
			h.tb.Fatalf("token %s not listed", h.tokenID)
			return nil
		},
	}
}

// tenantTarget is the budget of the harness's tenant.
func tenantTarget(h *harness) budgetTarget {
	return budgetTarget{
		scope: budget.TenantScope(testTenant),
		set: func(amount money.USD) {
			_, err := h.svc.UpdateTenant(h.ctx, h.root, testTenant, admin.TenantPatch{Budget: hardMonthly(amount)})
			must(h.tb, err)
			h.rebuild()
		},
		read: func(svc *admin.Service) *store.Budget {
			t, err := svc.GetTenant(h.ctx, h.root, testTenant)
			must(h.tb, err)
			return t.Budget
		},
	}
}

// TestBudgetScopesUnderConcurrency: a hard token budget and a hard tenant
// budget each hold 200 concurrent requests to at most their amount, in
// one process and on two proxies sharing Redis.
func TestBudgetScopesUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, scope := range []struct {
		name   string
		target func(*harness) budgetTarget
	}{{"token", tokenTarget}, {"tenant", tenantTarget}} {
		t.Run(scope.name+"/one process", func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessConfig{})
			budgetRace(t, h, []string{h.addr}, h.inf.cfg.Budgets, scope.target(h))
		})
		t.Run(scope.name+"/two replicas on Redis", func(t *testing.T) {
			t.Parallel()
			budgetRaceOnRedis(t, scope.target)
		})
	}
}

// TestBudgetTokenSpentOtherTokenWorks: when one token's hard budget is
// spent, its requests are refused while another token of the same
// gateway keeps working; the refusal leaves nothing reserved on the
// gateway's and the tenant's budgets, which it had already passed.
func TestBudgetTokenSpentOtherTokenWorks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	other, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "other"})
	must(t, err)
	h.update(hardBudget(money.FromFloat(100), "monthly"))
	_, err = h.svc.UpdateTenant(h.ctx, h.root, testTenant, admin.TenantPatch{Budget: hardMonthly(money.FromFloat(100))})
	must(t, err)
	tokenTarget(h).set(pricedWorst()) // room for one request
	resp, b := h.post(h.addr, chatPath, h.token, pricedBody)
	wantStatus(t, resp, b, 200)
	resp, b = h.post(h.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
	for range 3 {
		resp, b = h.post(h.addr, chatPath, other.Secret, pricedBody)
		wantStatus(t, resp, b, 200)
	}
	m, start := h.inf.cfg.Budgets, monthStartOf(time.Now())
	for scope, want := range map[string]money.USD{
		budget.TenantScope(testTenant): 4 * realCost,
		budget.GatewayScope(h.gw.ID):   4 * realCost,
		budget.TokenScope(h.tokenID):   realCost,
		budget.TokenScope(other.ID):    0, // no budget: no counter
	} {
		spent, reserved, err := m.State(context.Background(), scope, start)
		must(t, err)
		if spent != want || reserved != 0 {
			t.Errorf("%s: spent %s reserved %s, want %s and 0", scope, spent, reserved, want)
		}
	}
	if n := h.mock.Count(); n != 4 {
		t.Errorf("the provider saw %d requests, want 4", n)
	}
}

// TestBudgetTenantHoldsEveryGateway: the tenant's budget counts the
// requests of all its gateways and refuses on each once spent; a user
// token's budget holds it whatever gateway it calls.
func TestBudgetTenantHoldsEveryGateway(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	gw2, err := h.svc.CreateGateway(h.ctx, h.root, testTenant, admin.GatewayInput{Slug: "second"})
	must(t, err)
	h.addKey(gw2.ID, "openai", "main", "sk-second-0000000000")
	tok2, err := h.svc.CreateGatewayToken(h.ctx, h.root, gw2.ID, admin.TokenInput{Name: "second"})
	must(t, err)
	tenantTarget(h).set(pricedWorst() + realCost) // one request on each gateway
	path2 := "/v1/" + testTenant + "/second/compat/chat/completions"
	resp, b := h.post(h.addr, chatPath, h.token, pricedBody)
	wantStatus(t, resp, b, 200)
	resp, b = h.post(h.addr, path2, tok2.Secret, pricedBody)
	wantStatus(t, resp, b, 200)
	resp, b = h.post(h.addr, path2, tok2.Secret, pricedBody)
	wantBudgetExceeded(t, resp, b)
	resp, b = h.post(h.addr, chatPath, h.token, pricedBody)
	wantBudgetExceeded(t, resp, b)
	if spent, _ := h.inf.cfg.Budgets.Spent(context.Background(), budget.TenantScope(testTenant), monthStartOf(time.Now())); spent != 2*realCost {
		t.Errorf("tenant spent %s, want 2 × %s", spent, realCost)
	}
}

// TestBudgetScopesSurviveRestart: a fresh process starts the counters of
// token and tenant budgets from the persisted spend, per process and
// with Redis; while that spend cannot be read, their hard budgets refuse.
func TestBudgetScopesSurviveRestart(t *testing.T) {
	t.Parallel()
	for _, scope := range []struct {
		name   string
		target func(*harness) budgetTarget
	}{{"token", tokenTarget}, {"tenant", tenantTarget}} {
		t.Run(scope.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessConfig{})
			setPrice(h)
			target := scope.target(h)
			amount := money.FromFloat(1)
			target.set(amount)
			wantPersistedSpend(t, h, target.scope, amount)

			down := &downSpend{spent: amount}
			down.down.Store(true)
			restarted := h.limitReplica(t, nil, budget.NewLocal(down))
			resp, b := h.post(restarted.addr, chatPath, h.token, pricedBody)
			wantAPIError(t, resp, b, 503, "api_error", "unavailable", "")
		})
	}
}

// remainingHeader parses x-sluice-budget-remaining-usd.
func remainingHeader(t *testing.T, resp *http.Response) money.USD {
	t.Helper()
	v := resp.Header.Get(BudgetRemainingHeader)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s %q: %v", BudgetRemainingHeader, v, err)
	}
	return money.FromFloat(f)
}

// TestBudgetRemainingHeader: an answer under budgets says the least left
// among them once its own worst case is held (streams too, whose headers
// go before the answer); every door says it; a refusal says what the
// refusing budget had left; an answer under no budget has no header.
func TestBudgetRemainingHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	resp, b := h.chat(pricedBody)
	wantStatus(t, resp, b, 200)
	if v, ok := resp.Header[http.CanonicalHeaderKey(BudgetRemainingHeader)]; ok {
		t.Errorf("no budget applies, yet %s: %q", BudgetRemainingHeader, v)
	}
	gwAmount, tokAmount := money.FromFloat(100), money.FromFloat(1)
	h.update(hardBudget(gwAmount, "monthly"))
	tokenTarget(h).set(tokAmount) // the token's is the least left

	// Nothing spent on the token's budget yet: what is left is its amount
	// less this request's worst case.
	resp, b = h.chat(pricedBody)
	wantStatus(t, resp, b, 200)
	if got, want := remainingHeader(t, resp), tokAmount-pricedWorst(); got != want {
		t.Errorf("remaining %s, want %s − %s worst case = %s", got, tokAmount, pricedWorst(), want)
	}

	// A stream carries it in its headers: reserved, not yet settled.
	resp, sr := h.openStream(t, chatBody("openai/"+pricedModel, `,"max_tokens":8,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	if got, want := remainingHeader(t, resp), tokAmount-realCost-pricedWorst(); got != want {
		t.Errorf("stream: remaining %s, want %s", got, want)
	}

	// Every door: the header is there and below what was left before.
	doors := []struct{ name, path, body string }{
		{"messages", messagesPath, `{"model":"openai/` + pricedModel + `","max_tokens":8,"messages":[{"role":"user","content":"say hello to the test"}]}`},
		{"responses", compatResponsesPath, `{"model":"openai/` + pricedModel + `","max_output_tokens":8,"input":"say hello to the test"}`},
		{"messages streamed", messagesPath, `{"model":"openai/` + pricedModel + `","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"say hello to the test"}]}`},
		{"responses streamed", compatResponsesPath, `{"model":"openai/` + pricedModel + `","max_output_tokens":8,"stream":true,"input":"say hello to the test"}`},
		{"native chat", gwPath("openai/chat/completions"), chatBody(pricedModel, `,"max_tokens":8`)},
		{"native chat streamed", gwPath("openai/chat/completions"), chatBody(pricedModel, `,"max_tokens":8,"stream":true`)},
	}
	for _, d := range doors {
		spent, _ := h.inf.cfg.Budgets.Spent(context.Background(), budget.TokenScope(h.tokenID), monthStartOf(time.Now()))
		resp, b := h.post(h.addr, d.path, h.token, d.body)
		wantStatus(t, resp, b, 200)
		if got := remainingHeader(t, resp); got < 0 || got >= tokAmount-spent {
			t.Errorf("%s: remaining %s, want in [0, %s)", d.name, got, tokAmount-spent)
		}
	}

	// A refusal: the token's budget lowered below a worst case.
	spent, _ := h.inf.cfg.Budgets.Spent(context.Background(), budget.TokenScope(h.tokenID), monthStartOf(time.Now()))
	tokenTarget(h).set(spent + pricedWorst()/2)
	resp, b = h.chat(pricedBody)
	wantBudgetExceeded(t, resp, b)
	if got := remainingHeader(t, resp); got != pricedWorst()/2 {
		t.Errorf("refused: remaining %s, want %s", got, pricedWorst()/2)
	}
}
