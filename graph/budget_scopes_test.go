package graph

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestTokenAndTenantBudgets: budgets on gateway tokens, user tokens and
// the tenant are set, read back with their state (spent, remaining,
// resets at) and removed with null through GraphQL (CONTRACT §14).
func TestTokenAndTenantBudgets(t *testing.T) {
	spend := testenv.KindSpend{"token": money.FromFloat(2.5), "tenant": money.FromFloat(7)}
	e := newEnvWith(t, func(c *admin.Config) { c.Budgets = budget.NewLocal(spend) })
	gw := e.setupTenant("acme")

	d := e.mustDo(e.admin, `mutation($g: ID!) { createGatewayToken(gatewayId: $g, input: {name: "ci"}) { id budget { amountUsd } } }`,
		map[string]any{"g": gw})
	tok := str(d, "createGatewayToken", "id")
	if b := get(d, "createGatewayToken", "budget"); b != nil {
		t.Errorf("new token's budget = %v, want null", b)
	}
	d = e.mustDo(e.admin, `mutation($g: ID!, $t: ID!) { updateGatewayToken(gatewayId: $g, tokenId: $t,
		input: {budget: {amountUsd: 10, period: "daily"}}) { budget { amountUsd period hard spentUsd remainingUsd resetsAt } } }`,
		map[string]any{"g": gw, "t": tok})
	_, resets := budget.Window("daily", time.Now())
	want := map[string]any{"amountUsd": float64(10), "period": "daily", "hard": true, "spentUsd": 2.5, "remainingUsd": 7.5,
		"resetsAt": resets.Format(time.RFC3339)}
	for k, v := range want {
		if got := get(d, "updateGatewayToken", "budget", k); got != v {
			t.Errorf("token budget.%s = %v, want %v", k, got, v)
		}
	}
	d = e.mustDo(e.admin, `query($g: ID!) { gatewayTokens(gatewayId: $g) { data { id budget { remainingUsd } } } }`, map[string]any{"g": gw})
	if got := get(d, "gatewayTokens", "data", 0, "budget", "remainingUsd"); got != 7.5 {
		t.Errorf("listed token budget.remainingUsd = %v, want 7.5", got)
	}
	// Absent: kept; null: removed.
	d = e.mustDo(e.admin, `mutation($g: ID!, $t: ID!) { updateGatewayToken(gatewayId: $g, tokenId: $t, input: {name: "ci2"}) { budget { amountUsd } } }`,
		map[string]any{"g": gw, "t": tok})
	if got := get(d, "updateGatewayToken", "budget", "amountUsd"); got != float64(10) {
		t.Errorf("budget after a patch without it = %v, want kept", got)
	}
	d = e.mustDo(e.admin, `mutation($g: ID!, $t: ID!) { updateGatewayToken(gatewayId: $g, tokenId: $t, input: {budget: null}) { budget { amountUsd } } }`,
		map[string]any{"g": gw, "t": tok})
	if b := get(d, "updateGatewayToken", "budget"); b != nil {
		t.Errorf("budget after null = %v, want null", b)
	}

	// A user token, created with a soft budget.
	d = e.mustDo(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "m@acme.test", name: "M", role: "member"}) { id } }`, nil)
	user := str(d, "createUser", "id")
	d = e.mustDo(e.admin, `mutation($u: ID!) { createUserToken(userId: $u, input: {name: "laptop", budget: {amountUsd: 4, period: "total", hard: false}}) {
		id budget { hard spentUsd remainingUsd resetsAt } } }`, map[string]any{"u": user})
	if get(d, "createUserToken", "budget", "hard") != false || get(d, "createUserToken", "budget", "remainingUsd") != 1.5 ||
		get(d, "createUserToken", "budget", "resetsAt") != nil {
		t.Errorf("user token budget = %v, want soft, 1.5 remaining, no reset", get(d, "createUserToken", "budget"))
	}
	utok := str(d, "createUserToken", "id")
	d = e.mustDo(e.admin, `mutation($u: ID!, $t: ID!) { updateUserToken(userId: $u, tokenId: $t, input: {budget: {amountUsd: 3, period: "weekly"}}) {
		budget { amountUsd remainingUsd } } }`, map[string]any{"u": user, "t": utok})
	if get(d, "updateUserToken", "budget", "remainingUsd") != 0.5 {
		t.Errorf("user token budget after update = %v, want 0.5 remaining", get(d, "updateUserToken", "budget"))
	}

	// The tenant.
	d = e.mustDo(e.admin, `mutation { updateTenant(id: "acme", input: {budget: {amountUsd: 100, period: "monthly"}}) {
		budget { amountUsd hard spentUsd remainingUsd resetsAt } } }`, nil)
	if get(d, "updateTenant", "budget", "spentUsd") != float64(7) || get(d, "updateTenant", "budget", "remainingUsd") != float64(93) ||
		get(d, "updateTenant", "budget", "resetsAt") == nil || get(d, "updateTenant", "budget", "hard") != true {
		t.Errorf("tenant budget = %v, want hard, 7 spent, 93 remaining, a reset", get(d, "updateTenant", "budget"))
	}
	d = e.mustDo(e.admin, `{ tenant(id: "acme") { budget { remainingUsd } } }`, nil)
	if get(d, "tenant", "budget", "remainingUsd") != float64(93) {
		t.Errorf("tenant read back = %v", get(d, "tenant", "budget"))
	}
	res := e.do(e.admin, `mutation { updateTenant(id: "acme", input: {budget: {amountUsd: 0, period: "monthly"}}) { id } }`, nil)
	checkCode(t, onlyError(t, res), "BAD_USER_INPUT")
	d = e.mustDo(e.admin, `mutation { updateTenant(id: "acme", input: {budget: null}) { budget { amountUsd } } }`, nil)
	if b := get(d, "updateTenant", "budget"); b != nil {
		t.Errorf("tenant budget after null = %v, want null", b)
	}
}
