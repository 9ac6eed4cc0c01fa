package rest

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/testenv"
)

// wireBudget is a budget object of an answer.
type wireBudget struct {
	AmountUSD    float64    `json:"amount_usd"`
	Period       string     `json:"period"`
	Hard         bool       `json:"hard"`
	SpentUSD     float64    `json:"spent_usd"`
	RemainingUSD float64    `json:"remaining_usd"`
	ResetsAt     *time.Time `json:"resets_at"`
}

type withBudget struct {
	ID     string      `json:"id"`
	Budget *wireBudget `json:"budget"`
}

// TestTokenAndTenantBudgetsREST: PATCH …/tokens/{token} (gateway and
// user tokens) and PATCH /tenants/{id} take "budget" and answer it with
// its state; lists and reads show it; null removes it; the roles are
// those of the PATCH (Manage gateway API tokens, Manage tenant users,
// Manage tenant settings for the tenant's own budget); on SQLite and
// PostgreSQL (the migration adds the columns to both).
func TestTokenAndTenantBudgetsREST(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			spend := testenv.KindSpend{"token": money.FromFloat(2.5), "tenant": money.FromFloat(7)}
			s := newAdminServerWith(t, b, func(c *admin.Config) { c.Budgets = budget.NewLocal(spend) })
			f := setUp(t, s)
			gwTokens := "/admin/v1/gateways/" + f.gatewayID + "/tokens"
			var tok withBudget
			s.ok(testAdminToken, "POST", gwTokens, map[string]any{"name": "capped"}, 201, &tok)

			var got withBudget
			s.ok(testAdminToken, "PATCH", gwTokens+"/"+tok.ID, `{"budget":{"amount_usd":10,"period":"daily"}}`, 200, &got)
			_, resets := budget.Window("daily", time.Now())
			if b := got.Budget; b == nil || b.AmountUSD != 10 || !b.Hard || b.SpentUSD != 2.5 || b.RemainingUSD != 7.5 ||
				b.ResetsAt == nil || !b.ResetsAt.Equal(*resets) {
				t.Errorf("gateway token budget %+v, want $10 daily hard, 2.5 spent, 7.5 remaining, resets %s", b, resets)
			}
			var list struct{ Data []withBudget }
			s.ok(testAdminToken, "GET", gwTokens, nil, 200, &list)
			found := false
			for _, x := range list.Data {
				if x.ID == tok.ID {
					found = x.Budget != nil && x.Budget.RemainingUSD == 7.5
				}
			}
			if !found {
				t.Errorf("the listed token does not show its budget: %+v", list.Data)
			}
			// Members may not set a token's budget (Manage gateway API tokens).
			r := s.do(f.memberToken, "PATCH", gwTokens+"/"+tok.ID, `{"budget":null}`)
			if r.status != http.StatusForbidden {
				t.Errorf("member PATCH of a token budget: status %d, want 403", r.status)
			}
			s.ok(testAdminToken, "PATCH", gwTokens+"/"+tok.ID, `{"budget":null}`, 200, &got)
			if got.Budget != nil {
				t.Errorf("budget after null: %+v, want none", got.Budget)
			}
			r = s.do(testAdminToken, "PATCH", gwTokens+"/"+tok.ID, `{"budget":{"amount_usd":5,"period":"yearly"}}`)
			if d := diffError(s.wireErr(r), wantErr(400, "invalid_request", "budget.period")); d != "" {
				t.Errorf("a yearly budget: %s", d)
			}

			// A user token.
			userTokens := "/admin/v1/users/" + f.memberID + "/tokens"
			var utok withBudget
			s.ok(testAdminToken, "POST", userTokens, map[string]any{"name": "script"}, 201, &utok)
			s.ok(testAdminToken, "PATCH", userTokens+"/"+utok.ID, `{"budget":{"amount_usd":3,"period":"total","hard":false}}`, 200, &got)
			if b := got.Budget; b == nil || b.Hard || b.RemainingUSD != 0.5 || b.ResetsAt != nil {
				t.Errorf("user token budget %+v, want soft, 0.5 remaining, no reset", b)
			}

			// The tenant: the Administrator, then its Tenant Administrator.
			s.ok(testAdminToken, "PATCH", "/admin/v1/tenants/acme", `{"budget":{"amount_usd":100,"period":"monthly"}}`, 200, &got)
			if b := got.Budget; b == nil || b.SpentUSD != 7 || b.RemainingUSD != 93 || b.ResetsAt == nil {
				t.Errorf("tenant budget %+v, want 7 spent, 93 remaining, a reset", b)
			}
			s.ok(testAdminToken, "GET", "/admin/v1/tenants/acme", nil, 200, &got)
			if got.Budget == nil || got.Budget.RemainingUSD != 93 {
				t.Errorf("tenant read back: %+v", got.Budget)
			}
			var ta struct{ ID string }
			s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/users",
				map[string]any{"email": "ta@acme.test", "name": "TA", "role": "tenant_administrator"}, 201, &ta)
			var taTok struct{ Secret string }
			s.ok(testAdminToken, "POST", "/admin/v1/users/"+ta.ID+"/tokens", map[string]any{"name": "ta"}, 201, &taTok)
			s.ok(taTok.Secret, "PATCH", "/admin/v1/tenants/acme", `{"budget":{"amount_usd":50,"period":"weekly"}}`, 200, &got)
			if got.Budget == nil || got.Budget.AmountUSD != 50 {
				t.Errorf("tenant budget set by its Tenant Administrator: %+v", got.Budget)
			}
			r = s.do(f.memberToken, "PATCH", "/admin/v1/tenants/acme", `{"budget":null}`)
			if r.status != http.StatusForbidden {
				t.Errorf("member PATCH of the tenant budget: status %d, want 403", r.status)
			}
		})
	}
}
