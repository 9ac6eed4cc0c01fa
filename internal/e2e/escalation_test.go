package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// deniedRows returns the denied audit rows of user.
func (e *scopeEnv) deniedRows(user string) []string {
	e.t.Helper()
	var out []string
	for _, r := range e.auditOf(user) {
		if r["outcome"] == "denied" {
			out = append(out, fmt.Sprint(r["action"], " ", r["resource_id"]))
		}
	}
	return out
}

// userState is what the Administrator reads of a user and what it owns.
func (e *scopeEnv) userState(id string) string {
	e.t.Helper()
	u := e.must("admin", "GET", "/admin/v1/users/"+id, "")
	delete(u, "last_seen_at")
	toks := e.must("admin", "GET", "/admin/v1/users/"+id+"/tokens", "")["data"].([]any)
	for _, tk := range toks {
		delete(tk.(map[string]any), "last_used_at")
	}
	gws := e.must("admin", "GET", "/admin/v1/users/"+id+"/gateways", "")["data"].([]any)
	b, _ := json.Marshal([]any{u, toks, len(gws)})
	return string(b)
}

// TestRankRuleThroughTransports checks defect 4 of issue 12 over REST and
// GraphQL: a Tenant Administrator may rename, revoke, delete, un-expire,
// re-scope or re-limit no token of an Administrator of its tenant — nor
// touch the Administrator's password, role, status, email, budget, rate
// limit, gateway assignments or account. Every attempt answers 403
// permission_error, changes nothing and leaves one denied audit row.
func TestRankRuleThroughTransports(t *testing.T) {
	e := newScopeEnv(t)
	boss := e.must("admin", "POST", "/admin/v1/tenants/acme/users",
		`{"email":"boss@scope.test","role":"administrator","budget":{"amount_usd":5,"period":"monthly"},"rate_limit":{"requests_per_minute":100}}`)["id"].(string)
	tok := e.must("admin", "POST", "/admin/v1/users/"+boss+"/tokens",
		`{"name":"boss","expires_at":"2099-01-01T00:00:00Z","allowed_models":["gpt-4o-mini"]}`)["id"].(string)
	gw, other := e.gws["acme"], e.must("admin", "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"other"}`)["id"].(string)
	e.must("admin", "POST", "/admin/v1/users/"+boss+"/gateways/"+gw, "")
	before := e.userState(boss)
	x := strings.NewReplacer("{boss}", boss, "{tok}", tok, "{gw}", gw, "{other}", other).Replace

	rest := []struct{ method, path, body string }{
		{"PATCH", "/admin/v1/users/{boss}/tokens/{tok}", `{"name":"stolen"}`},
		{"PATCH", "/admin/v1/users/{boss}/tokens/{tok}", `{"revoked":true}`},
		{"PATCH", "/admin/v1/users/{boss}/tokens/{tok}", `{"expires_at":null}`},
		{"PATCH", "/admin/v1/users/{boss}/tokens/{tok}", `{"allowed_models":["gpt-4o"]}`},
		{"PATCH", "/admin/v1/users/{boss}/tokens/{tok}", `{"rate_limit":{"requests_per_minute":1}}`},
		{"DELETE", "/admin/v1/users/{boss}/tokens/{tok}", ""},
		{"POST", "/admin/v1/users/{boss}/tokens", `{"name":"steal"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"name":"renamed"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"email":"mine@scope.test"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"password":"a password I now know"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"role":"member"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"status":"disabled"}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"budget":null}`},
		{"PATCH", "/admin/v1/users/{boss}", `{"rate_limit":{"requests_per_minute":1}}`},
		{"DELETE", "/admin/v1/users/{boss}/budget", ""},
		{"POST", "/admin/v1/users/{boss}/gateways/{other}", ""},
		{"DELETE", "/admin/v1/users/{boss}/gateways/{gw}", ""},
		{"DELETE", "/admin/v1/users/{boss}", ""},
	}
	gql := []string{
		`mutation { updateUserToken(userId: "{boss}", tokenId: "{tok}", input: {name: "stolen"}) { id } }`,
		`mutation { updateUserToken(userId: "{boss}", tokenId: "{tok}", input: {revoked: true}) { id } }`,
		`mutation { updateUserToken(userId: "{boss}", tokenId: "{tok}", input: {expiresAt: null}) { id } }`,
		`mutation { updateUserToken(userId: "{boss}", tokenId: "{tok}", input: {allowedModels: ["gpt-4o"]}) { id } }`,
		`mutation { updateUserToken(userId: "{boss}", tokenId: "{tok}", input: {rateLimit: {requestsPerMinute: 1}}) { id } }`,
		`mutation { deleteUserToken(userId: "{boss}", tokenId: "{tok}") }`,
		`mutation { createUserToken(userId: "{boss}", input: {name: "steal"}) { id } }`,
		`mutation { updateUser(id: "{boss}", input: {name: "renamed"}) { id } }`,
		`mutation { updateUser(id: "{boss}", input: {password: "a password I now know"}) { id } }`,
		`mutation { updateUser(id: "{boss}", input: {role: "member"}) { id } }`,
		`mutation { updateUser(id: "{boss}", input: {budget: null}) { id } }`,
		`mutation { deleteUserBudget(id: "{boss}") }`,
		`mutation { assignGateway(userId: "{boss}", gatewayId: "{other}") }`,
		`mutation { unassignGateway(userId: "{boss}", gatewayId: "{gw}") }`,
		`mutation { deleteUser(id: "{boss}") }`,
	}
	for _, p := range rest {
		who := e.freshUser("acme", "tenant_administrator")
		status, out := e.do(who, p.method, x(p.path), x(p.body))
		if status != 403 || out["error"].(map[string]any)["type"] != "permission_error" {
			t.Errorf("REST %s %s %s: %d %v, want 403 permission_error", p.method, p.path, p.body, status, out)
			continue
		}
		if rows := e.deniedRows(who); len(rows) != 1 {
			t.Errorf("REST %s %s %s: denied rows %v, want 1", p.method, p.path, p.body, rows)
		}
	}
	for _, q := range gql {
		who := e.freshUser("acme", "tenant_administrator")
		if status, _, codes := e.gql(who, x(q)); status != 200 || !cmp.Equal(codes, []string{"FORBIDDEN"}) {
			t.Errorf("GraphQL %s: HTTP %d, codes %v; want FORBIDDEN", q, status, codes)
			continue
		}
		if rows := e.deniedRows(who); len(rows) != 1 {
			t.Errorf("GraphQL %s: denied rows %v, want 1", q, rows)
		}
	}
	if after := e.userState(boss); after != before {
		t.Errorf("the Administrator changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestRoleEscalation is security checklist item 22 over REST and GraphQL:
// a Member changes its own role; a Tenant Administrator grants the
// Administrator role, changes its own role, or creates a user in another
// tenant; a Viewer or Demo User mints a token. Each answers 403 (404 for
// the other tenant), changes nothing and leaves a denied audit row. An AI
// Manager minting a token with a limit above its own is refused as invalid
// input (400, the limit named): Sluice checks limits as input, not roles.
func TestRoleEscalation(t *testing.T) {
	e := newScopeEnv(t)
	type probe struct {
		role, method, path, body, gql string
		status                        int
		code                          string // GraphQL
	}
	probes := []probe{
		{role: "member", method: "PATCH", path: "/admin/v1/users/{self}", body: `{"role":"administrator"}`,
			gql: `mutation { updateUser(id: "{self}", input: {role: "administrator"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "tenant_administrator", method: "PATCH", path: "/admin/v1/users/{self}", body: `{"role":"administrator"}`,
			gql: `mutation { updateUser(id: "{self}", input: {role: "administrator"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "tenant_administrator", method: "POST", path: "/admin/v1/tenants/acme/users", body: `{"email":"{new}@scope.test","role":"administrator"}`,
			gql: `mutation { createUser(tenantId: "acme", input: {email: "{new}@scope.test", role: "administrator"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "tenant_administrator", method: "PATCH", path: "/admin/v1/users/{m2}", body: `{"role":"administrator"}`,
			gql: `mutation { updateUser(id: "{m2}", input: {role: "administrator"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "tenant_administrator", method: "POST", path: "/admin/v1/tenants/beta/users", body: `{"email":"{new}@scope.test","role":"tenant_administrator"}`,
			gql: `mutation { createUser(tenantId: "beta", input: {email: "{new}@scope.test", role: "tenant_administrator"}) { id } }`, status: 404, code: "NOT_FOUND"},
		{role: "viewer", method: "POST", path: "/admin/v1/me/tokens", body: `{"name":"x"}`,
			gql: `mutation { createMyToken(input: {name: "x"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "demo_user", method: "POST", path: "/admin/v1/me/tokens", body: `{"name":"x"}`,
			gql: `mutation { createMyToken(input: {name: "x"}) { id } }`, status: 403, code: "FORBIDDEN"},
		{role: "viewer", method: "POST", path: "/admin/v1/users/{self}/tokens", body: `{"name":"x"}`,
			gql: `mutation { createUserToken(userId: "{self}", input: {name: "x"}) { id } }`, status: 403, code: "FORBIDDEN"},
	}
	for i, p := range probes {
		for _, transport := range []string{"REST", "GraphQL"} {
			who := e.freshUser("acme", p.role)
			x := strings.NewReplacer("{self}", e.users[who], "{m2}", e.users["acme-m2"], "{new}", fmt.Sprintf("esc%d%s", i, transport)).Replace
			var ok bool
			if transport == "REST" {
				status, out := e.do(who, p.method, x(p.path), x(p.body))
				ok = status == p.status
				if !ok {
					t.Errorf("%s %s %s %s as %s: %d %v, want %d", transport, p.method, p.path, p.body, p.role, status, out, p.status)
				}
			} else {
				_, _, codes := e.gql(who, x(p.gql))
				ok = cmp.Equal(codes, []string{p.code})
				if !ok {
					t.Errorf("%s %s as %s: codes %v, want %s", transport, p.gql, p.role, codes, p.code)
				}
			}
			if rows := e.deniedRows(who); ok && len(rows) != 1 {
				t.Errorf("%s %s %s as %s: denied rows %v, want 1", transport, p.method, p.path, p.role, rows)
			}
		}
	}
	// Nothing changed: no Administrator was made or promoted.
	for _, tn := range []string{"acme", "beta"} {
		for _, u := range e.must("admin", "GET", "/admin/v1/tenants/"+tn+"/users?limit=1000", "")["data"].([]any) {
			if u.(map[string]any)["role"] == "administrator" {
				t.Errorf("tenant %s has an Administrator now: %v", tn, u)
			}
		}
	}

	// An AI Manager's token may not exceed the AI Manager's own limit.
	aim := e.freshUser("acme", "ai_manager")
	e.must("admin", "PATCH", "/admin/v1/users/"+e.users[aim], `{"rate_limit":{"requests_per_minute":10}}`)
	status, out := e.do(aim, "POST", "/admin/v1/me/tokens", `{"name":"wide","rate_limit":{"requests_per_minute":1000}}`)
	if status != 400 || out["error"].(map[string]any)["param"] != "rate_limit.requests_per_minute" {
		t.Errorf("AI Manager's wider token: %d %v, want 400 naming rate_limit.requests_per_minute", status, out)
	}
	toks := e.must("admin", "GET", "/admin/v1/users/"+e.users[aim]+"/tokens", "")["data"].([]any)
	if slices.ContainsFunc(toks, func(x any) bool { return x.(map[string]any)["name"] == "wide" }) {
		t.Error("the wider token was minted")
	}
}
