package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/testenv"
)

// row is one row of the endpoint × role table (CONTRACT §5): a REST call
// and the matching GraphQL field, and which roles are answered.
type row struct {
	name  string
	allow string // one letter per role in auth.Roles order (Adm TA AIM Fin Mem Vie Demo): Y answered, N 403
	// method and path of the REST call; {x} are placeholders.
	method, path, body string
	gql                string
	// prep creates, as Administrator, resources the call consumes (so that
	// each role's call acts on its own) and returns extra placeholders.
	prep func(e *env, role auth.Role) map[string]string
	// lookup marks reads of analytics records by id: with no such record an
	// answered role gets 404, which is not a denial.
	lookup bool
}

func freshTenant(e *env, _ auth.Role) map[string]string {
	id := "t-" + e.fresh()
	e.must("POST", "/admin/v1/tenants", fmt.Sprintf(`{"id":%q}`, id), auth.Administrator)
	return map[string]string{"ft": id}
}

func freshGateway(e *env, _ auth.Role) map[string]string {
	g := e.must("POST", "/admin/v1/tenants/acme/gateways", fmt.Sprintf(`{"slug":"g-%s"}`, e.fresh()), auth.Administrator)
	return map[string]string{"fg": g["id"].(string)}
}

func freshKey(e *env, _ auth.Role) map[string]string {
	alias := "k" + e.fresh()
	e.must("POST", "/admin/v1/gateways/"+e.vars["gw"]+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":%q,"key":"sk-test-1234567890abcdef","base_url":"http://127.0.0.1:9/v1"}`, alias), auth.Administrator)
	return map[string]string{"fk": alias}
}

func freshRule(e *env, _ auth.Role) map[string]string {
	r := e.must("POST", "/admin/v1/gateways/"+e.vars["gw"]+"/rules",
		`{"name":"tmp","kind":"keyword","patterns":["x"],"action":"flag"}`, auth.Administrator)
	return map[string]string{"fr": r["id"].(string)}
}

func freshGatewayToken(e *env, _ auth.Role) map[string]string {
	t := e.must("POST", "/admin/v1/gateways/"+e.vars["gw"]+"/tokens", `{"name":"tmp"}`, auth.Administrator)
	return map[string]string{"ftok": t["id"].(string)}
}

func freshUserToken(e *env, _ auth.Role) map[string]string {
	t := e.must("POST", "/admin/v1/users/"+e.vars["user"]+"/tokens", `{"name":"tmp"}`, auth.Administrator)
	return map[string]string{"fut": t["id"].(string)}
}

func freshUser(e *env, _ auth.Role) map[string]string {
	u := e.must("POST", "/admin/v1/tenants/acme/users", fmt.Sprintf(`{"email":"u%s@acme.test","role":"member"}`, e.fresh()), auth.Administrator)
	return map[string]string{"fu": u["id"].(string)}
}

func freshAssignment(e *env, role auth.Role) map[string]string {
	v := freshGateway(e, role)
	e.must("POST", "/admin/v1/users/"+e.vars["user"]+"/gateways/"+v["fg"], "", auth.Administrator)
	return v
}

func freshPrice(e *env, _ auth.Role) map[string]string {
	m := "m-" + e.fresh()
	e.must("PUT", "/admin/v1/model-prices", fmt.Sprintf(`[{"provider":"openai","model":%q,"input_per_mtok":1,"output_per_mtok":2}]`, m), auth.Administrator)
	return map[string]string{"fm": m}
}

// ownToken mints a user token for the caller's own user, when its role may
// hold one; others get an id that does not exist (they are refused first).
func ownToken(e *env, role auth.Role) map[string]string {
	if !role.CanHoldTokens() {
		return map[string]string{"mt": "tok_none"}
	}
	t := e.must("POST", "/admin/v1/users/"+e.ids[role]+"/tokens", `{"name":"mine"}`, auth.Administrator)
	return map[string]string{"mt": t["id"].(string)}
}

// passwordChange gives the caller's password change its current password
// and a new one, and keeps the new one as the current for the next call.
// The Administrator (the bootstrap user, which has none) is given one first.
func passwordChange(e *env, role auth.Role) map[string]string {
	key := "pw-" + string(role)
	cur, ok := e.vars[key]
	switch {
	case ok:
	case role == auth.Administrator:
		cur = "admin password " + e.fresh()
		e.must("PATCH", "/admin/v1/users/"+e.ids[role], fmt.Sprintf(`{"password":%q}`, cur), auth.Administrator)
	default:
		cur = "correct horse battery"
	}
	next := "a new password " + e.fresh()
	e.vars[key] = next
	return map[string]string{"pwcur": cur, "pwnew": next}
}

var table = []row{
	{name: "list tenants", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants", gql: `{ tenants { data { id } } }`},
	{name: "read tenant", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants/acme", gql: `{ tenant(id: "acme") { id } }`},
	{name: "create tenant", allow: "YNNNNNN", method: "POST", path: "/admin/v1/tenants", body: `{"id":"{new}"}`,
		gql: `mutation { createTenant(input: {id: "{new}"}) { id } }`},
	{name: "change tenant (own)", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/tenants/acme", body: `{"name":"Acme"}`,
		gql: `mutation { updateTenant(id: "acme", input: {name: "Acme"}) { id } }`},
	{name: "delete tenant", allow: "YNNNNNN", method: "DELETE", path: "/admin/v1/tenants/{ft}", prep: freshTenant,
		gql: `mutation { deleteTenant(id: "{ft}") }`},
	{name: "purge tenant", allow: "YNNNNNN", method: "DELETE", path: "/admin/v1/tenants/{ft}?purge=true", prep: freshTenant,
		gql: `mutation { deleteTenant(id: "{ft}", purge: true) }`},
	{name: "list gateways", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants/acme/gateways", gql: `{ gateways(tenantId: "acme") { data { id } } }`},
	{name: "create gateway", allow: "YYNNNNN", method: "POST", path: "/admin/v1/tenants/acme/gateways", body: `{"slug":"{new}"}`,
		gql: `mutation { createGateway(tenantId: "acme", input: {slug: "{new}"}) { id } }`},
	{name: "read gateway", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}", gql: `{ gateway(id: "{gw}") { id } }`},
	{name: "change gateway", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/gateways/{gw}", body: `{"name":"Prod"}`,
		gql: `mutation { updateGateway(id: "{gw}", input: {name: "Prod"}) { id } }`},
	{name: "delete gateway", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/gateways/{fg}", prep: freshGateway,
		gql: `mutation { deleteGateway(id: "{fg}") }`},
	{name: "list keys", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/keys", gql: `{ providerKeys(gatewayId: "{gw}") { data { alias } } }`},
	{name: "add key", allow: "YYNNNNN", method: "POST", path: "/admin/v1/gateways/{gw}/keys",
		body: `{"provider":"openai","alias":"{new}","key":"sk-test-1234567890abcdef","base_url":"http://127.0.0.1:9/v1"}`,
		gql:  `mutation { addProviderKey(gatewayId: "{gw}", input: {provider: "openai", alias: "{new}", key: "sk-test-1234567890abcdef", baseUrl: "http://127.0.0.1:9/v1"}) { alias last4 } }`},
	{name: "delete key", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/gateways/{gw}/keys/openai/{fk}", prep: freshKey,
		gql: `mutation { deleteProviderKey(gatewayId: "{gw}", provider: "openai", alias: "{fk}") }`},
	{name: "change key", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/gateways/{gw}/keys/openai/{fk}", prep: freshKey, body: `{"weight":3}`,
		gql: `mutation { updateProviderKey(gatewayId: "{gw}", provider: "openai", alias: "{fk}", input: {weight: 3}) { weight } }`},
	{name: "test key", allow: "YYNNNNN", method: "POST", path: "/admin/v1/gateways/{gw}/keys/openai/{fk}/test", prep: freshKey, body: `{}`,
		gql: `mutation { testProviderKey(gatewayId: "{gw}", provider: "openai", alias: "{fk}") { ok } }`},
	{name: "list rules", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/rules", gql: `{ rules(gatewayId: "{gw}") { data { id } } }`},
	{name: "create rule", allow: "YYNNNNN", method: "POST", path: "/admin/v1/gateways/{gw}/rules",
		body: `{"name":"r","kind":"regex","patterns":["a+b"],"action":"redact"}`,
		gql:  `mutation { createRule(gatewayId: "{gw}", input: {name: "r", kind: "regex", direction: "both", patterns: ["a+b"], action: "redact"}) { id } }`},
	{name: "change rule", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/gateways/{gw}/rules", body: `{"id":"{rule}","enabled":false}`,
		gql: `mutation { updateRule(gatewayId: "{gw}", input: {id: "{rule}", enabled: false}) { id } }`},
	{name: "delete rule", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/gateways/{gw}/rules?id={fr}", prep: freshRule,
		gql: `mutation { deleteRule(gatewayId: "{gw}", id: "{fr}") }`},
	{name: "delete gateway budget", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/gateways/{gw}/budget",
		gql: `mutation { deleteGatewayBudget(id: "{gw}") }`},
	{name: "list gateway tokens", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/tokens",
		gql: `{ gatewayTokens(gatewayId: "{gw}") { data { id } } }`},
	{name: "create gateway token", allow: "YYNNNNN", method: "POST", path: "/admin/v1/gateways/{gw}/tokens", body: `{"name":"x"}`,
		gql: `mutation { createGatewayToken(gatewayId: "{gw}", input: {name: "x"}) { id secret } }`},
	{name: "change gateway token", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/gateways/{gw}/tokens/{gwtoken}", body: `{"name":"y"}`,
		gql: `mutation { updateGatewayToken(gatewayId: "{gw}", tokenId: "{gwtoken}", input: {name: "y"}) { id } }`},
	{name: "delete gateway token", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/gateways/{gw}/tokens/{ftok}", prep: freshGatewayToken,
		gql: `mutation { deleteGatewayToken(gatewayId: "{gw}", tokenId: "{ftok}") }`},
	{name: "list users", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants/acme/users", gql: `{ users(tenantId: "acme") { data { id } } }`},
	{name: "create user", allow: "YYNNNNN", method: "POST", path: "/admin/v1/tenants/acme/users", body: `{"email":"{new}@acme.test","role":"viewer"}`,
		gql: `mutation { createUser(tenantId: "acme", input: {email: "{new}@acme.test", role: "viewer"}) { id } }`},
	{name: "read user", allow: "YYNNNNN", method: "GET", path: "/admin/v1/users/{user}", gql: `{ user(id: "{user}") { id } }`},
	{name: "change user", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/users/{user}", body: `{"name":"Target"}`,
		gql: `mutation { updateUser(id: "{user}", input: {name: "Target"}) { id } }`},
	{name: "delete user", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/users/{fu}", prep: freshUser,
		gql: `mutation { deleteUser(id: "{fu}") }`},
	{name: "list user tokens", allow: "YYNNNNN", method: "GET", path: "/admin/v1/users/{user}/tokens", gql: `{ userTokens(userId: "{user}") { data { id } } }`},
	{name: "create user token", allow: "YYNNNNN", method: "POST", path: "/admin/v1/users/{user}/tokens", body: `{"name":"x"}`,
		gql: `mutation { createUserToken(userId: "{user}", input: {name: "x"}) { id secret } }`},
	{name: "change user token (extension)", allow: "YYNNNNN", method: "PATCH", path: "/admin/v1/users/{user}/tokens/{fut}", body: `{"name":"z"}`,
		prep: freshUserToken, gql: `mutation { updateUserToken(userId: "{user}", tokenId: "{fut}", input: {name: "z"}) { id } }`},
	{name: "delete user token (extension)", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/users/{user}/tokens/{fut}",
		prep: freshUserToken, gql: `mutation { deleteUserToken(userId: "{user}", tokenId: "{fut}") }`},
	{name: "delete user budget", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/users/{user}/budget", gql: `mutation { deleteUserBudget(id: "{user}") }`},
	{name: "list user gateways", allow: "YYNNNNN", method: "GET", path: "/admin/v1/users/{user}/gateways", gql: `{ userGateways(userId: "{user}") { data { id } } }`},
	{name: "assign gateway", allow: "YYNNNNN", method: "POST", path: "/admin/v1/users/{user}/gateways/{fg}", prep: freshGateway,
		gql: `mutation { assignGateway(userId: "{user}", gatewayId: "{fg}") }`},
	{name: "unassign gateway", allow: "YYNNNNN", method: "DELETE", path: "/admin/v1/users/{user}/gateways/{fg}", prep: freshAssignment,
		gql: `mutation { unassignGateway(userId: "{user}", gatewayId: "{fg}") }`},
	{name: "stats", allow: "YYYYYYN", method: "GET", path: "/admin/v1/stats", gql: `{ stats { requests } }`},
	{name: "stats timeseries", allow: "YYYYYYN", method: "GET", path: "/admin/v1/stats/timeseries?interval=hour", gql: `{ timeseries(interval: "hour") { interval } }`},
	{name: "stats analytics", allow: "YYYNNNN", method: "GET", path: "/admin/v1/stats/analytics?group_by=model", gql: `{ analytics(groupBy: "model") { groupBy } }`},
	{name: "stats series by group", allow: "YYYNNNN", method: "GET", path: "/admin/v1/stats/series?group_by=model&interval=hour", gql: `{ seriesByGroup(groupBy: "model", interval: "hour") { groupBy } }`},
	{name: "tenant guardrail stats", allow: "YYNNNNN", method: "GET", path: "/admin/v1/stats/guardrails", gql: `{ tenantGuardrailStats { total } }`},
	{name: "gateway spend", allow: "YYNYNNN", method: "GET", path: "/admin/v1/gateways/{gw}/spend", gql: `{ gatewaySpend(gatewayId: "{gw}") { totalUsd } }`},
	{name: "tenant spend", allow: "YYNYNNN", method: "GET", path: "/admin/v1/tenants/acme/spend", gql: `{ tenantSpend(tenantId: "acme") { totalUsd } }`},
	{name: "tenant analytics", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants/acme/analytics", gql: `{ tenantAnalytics(tenantId: "acme") { requests } }`},
	{name: "tenant alerts", allow: "YYNNNNN", method: "GET", path: "/admin/v1/tenants/acme/alerts", gql: `{ tenant(id: "acme") { alerts { data { id } } } }`},
	{name: "logs", allow: "YYNNNNN", method: "GET", path: "/admin/v1/logs", gql: `{ logs { data { id } } }`},
	{name: "one log", allow: "YYNNNNN", method: "GET", path: "/admin/v1/logs/0192f000-0000-7000-8000-000000000000", lookup: true,
		gql: `{ log(id: "0192f000-0000-7000-8000-000000000000") { id } }`},
	{name: "gateway traces", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/traces", gql: `{ gatewayTraces(gatewayId: "{gw}") { data { id } } }`},
	{name: "one trace", allow: "YYNNNNN", method: "GET", path: "/admin/v1/traces/trace-none", lookup: true, gql: `{ trace(id: "trace-none") { id } }`},
	{name: "playground token", allow: "YYNNYNN", method: "POST", path: "/admin/v1/playground/token", body: `{"gateway_id":"{gw}"}`,
		gql: `mutation { createPlaygroundToken(gatewayId: "{gw}") { token } }`},
	{name: "playground search", allow: "YYNNYNN", method: "GET", path: "/admin/v1/playground/search?q=gpt", gql: `{ playgroundSearch(q: "gpt") { data { model } } }`},
	{name: "playground trace", allow: "YYNNNNN", method: "GET", path: "/admin/v1/playground/trace/trace-none", lookup: true,
		gql: `{ playgroundTrace(id: "trace-none") { id } }`},
	{name: "playground request (extension)", allow: "YYNNYNN", method: "GET", path: "/admin/v1/playground/requests/req-none", lookup: true,
		gql: `{ playgroundRequest(id: "req-none") { id } }`},
	{name: "unpriced models (extension)", allow: "YYNYNNN", method: "GET", path: "/admin/v1/unpriced-models", gql: `{ unpricedModels { data { model } } }`},
	{name: "read model prices", allow: "YYNYNNN", method: "GET", path: "/admin/v1/model-prices", gql: `{ modelPrices { data { model } } }`},
	{name: "write model prices", allow: "YNNNNNN", method: "PUT", path: "/admin/v1/model-prices",
		body: `[{"provider":"openai","model":"{new}","input_per_mtok":1,"output_per_mtok":2}]`,
		gql:  `mutation { putModelPrices(input: [{provider: "openai", model: "{new}", inputPerMtok: 1, outputPerMtok: 2}]) { data { model } } }`},
	{name: "delete model price", allow: "YNNNNNN", method: "DELETE", path: "/admin/v1/model-prices/openai/{fm}", prep: freshPrice,
		gql: `mutation { deleteModelPrice(provider: "openai", model: "{fm}") }`},
	{name: "providers", allow: "YYYYYYN", method: "GET", path: "/admin/v1/providers", gql: `{ providers { data { id } } }`},
	{name: "models", allow: "YYYYYYN", method: "GET", path: "/admin/v1/models", gql: `{ models { data { id } } }`},
	{name: "guardrail stats", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/guardrail-stats", gql: `{ guardrailStats(gatewayId: "{gw}") { total } }`},
	{name: "guardrail events", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/guardrail-events", gql: `{ guardrailEvents(gatewayId: "{gw}") { data { id } } }`},
	{name: "circuit breaker", allow: "YYNNNNN", method: "GET", path: "/admin/v1/gateways/{gw}/circuit-breaker", gql: `{ circuitBreaker(gatewayId: "{gw}") { data { state } } }`},
	{name: "audit log", allow: "YNNNNNN", method: "GET", path: "/admin/v1/audit-log", gql: `{ auditLog { data { action } } }`},
	{name: "report client error", allow: "YYNYYYN", method: "POST", path: "/admin/v1/client-errors", body: `{"message":"boom {new}"}`,
		gql: `mutation { reportClientError(input: {message: "boom {new}"}) { id } }`},
	{name: "read client errors", allow: "YNNNNNN", method: "GET", path: "/admin/v1/client-errors", gql: `{ clientErrors { data { message } } }`},
	{name: "my account", allow: "YYYNYNN", method: "GET", path: "/admin/v1/me", gql: `{ me { id } }`},
	{name: "my tokens", allow: "YYYNYNN", method: "GET", path: "/admin/v1/me/tokens", gql: `{ myTokens { data { id } } }`},
	{name: "create my token", allow: "YYYNYNN", method: "POST", path: "/admin/v1/me/tokens", body: `{"name":"mine"}`,
		gql: `mutation { createMyToken(input: {name: "mine"}) { id secret } }`},
	{name: "change my password (extension)", allow: "YYYYYYN", method: "POST", path: "/admin/v1/me/password", prep: passwordChange,
		body: `{"current_password":"{pwcur}","new_password":"{pwnew}"}`,
		gql:  `mutation { changeMyPassword(currentPassword: "{pwcur}", newPassword: "{pwnew}") }`},
	{name: "delete my token", allow: "YYYNYNN", method: "DELETE", path: "/admin/v1/me/tokens/{mt}", prep: ownToken,
		gql: `mutation { deleteMyToken(tokenId: "{mt}") }`},
}

// expand replaces {x} placeholders.
func (e *env) expand(s string, extra map[string]string) string {
	s = strings.ReplaceAll(s, "{new}", e.fresh())
	for k, v := range extra {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	for k, v := range e.vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// TestEndpointRoleTable calls every row of CONTRACT §5's endpoint × role
// table as each of the seven roles, over REST and over GraphQL, on SQLite
// and on PostgreSQL.
func TestEndpointRoleTable(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			e := newEnv(t, b)
			for _, r := range table {
				if len(r.allow) != len(auth.Roles) {
					t.Fatalf("row %q: allow has %d letters, want %d", r.name, len(r.allow), len(auth.Roles))
				}
				for i, role := range auth.Roles {
					want := r.allow[i] == 'Y'
					t.Run(r.name+"/"+string(role), func(t *testing.T) {
						checkREST(t, e, r, role, want)
						checkGraphQL(t, e, r, role, want)
					})
				}
			}
		})
	}
}

func (r row) vars(e *env, role auth.Role) map[string]string {
	if r.prep == nil {
		return nil
	}
	return r.prep(e, role)
}

func checkREST(t *testing.T, e *env, r row, role auth.Role, want bool) {
	t.Helper()
	v := r.vars(e, role)
	path, body := e.expand(r.path, v), e.expand(r.body, v)
	status, out := e.do(r.method, path, body, role)
	switch {
	case !want && status != 403:
		t.Errorf("REST %s %s as %s: status %d, want 403 (%v)", r.method, path, role, status, out)
	case !want:
		if code := out["error"].(map[string]any)["type"]; code != "permission_error" {
			t.Errorf("REST %s %s as %s: error type %v, want permission_error", r.method, path, role, code)
		}
	case r.lookup && status == 404:
	case status < 200 || status > 299:
		t.Errorf("REST %s %s as %s: status %d, want 2xx (%v)", r.method, path, role, status, out)
	}
}

func checkGraphQL(t *testing.T, e *env, r row, role auth.Role, want bool) {
	t.Helper()
	v := r.vars(e, role)
	q := e.expand(r.gql, v)
	status, data, codes := e.gql(q, role)
	if status != 200 {
		t.Fatalf("GraphQL %s as %s: HTTP %d, want 200", q, role, status)
	}
	forbidden := slices.Contains(codes, "FORBIDDEN")
	switch {
	case !want && !forbidden:
		t.Errorf("GraphQL %s as %s: errors %v, want FORBIDDEN", q, role, codes)
	case want && r.lookup && len(codes) == 1 && codes[0] == "NOT_FOUND":
	case want && len(codes) > 0:
		t.Errorf("GraphQL %s as %s: errors %v, want none (data %v)", q, role, codes, data)
	}
}
