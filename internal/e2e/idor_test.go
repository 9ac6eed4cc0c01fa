package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// gql runs a GraphQL operation as user and returns the HTTP status, the
// data and the extension codes of the errors.
func (e *scopeEnv) gql(user, query string) (int, map[string]any, []string) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	status, out := e.do(user, "POST", "/admin/graphql", string(body))
	var codes []string
	if errs, ok := out["errors"].([]any); ok {
		for _, x := range errs {
			ext, _ := x.(map[string]any)["extensions"].(map[string]any)
			code, _ := ext["code"].(string)
			codes = append(codes, code)
		}
	}
	data, _ := out["data"].(map[string]any)
	return status, data, codes
}

// freshUser creates a user of role in tenant with an API token (or, for the
// roles that hold none, a session) and returns its name in e.creds.
func (e *scopeEnv) freshUser(tenant, role string) string {
	e.t.Helper()
	name := fmt.Sprintf("%s-%s-%d", tenant, role, len(e.creds))
	email := name + "@fresh.test"
	u := e.must("admin", "POST", "/admin/v1/tenants/"+tenant+"/users",
		fmt.Sprintf(`{"email":%q,"role":%q,"password":"correct horse battery"}`, email, role))
	e.users[name] = u["id"].(string)
	switch role {
	case "finance", "viewer", "demo_user":
		s := e.must("", "POST", "/admin/v1/session", fmt.Sprintf(`{"email":%q,"password":"correct horse battery"}`, email))
		e.creds[name] = s["token"].(string)
	default:
		tok := e.must("admin", "POST", "/admin/v1/users/"+e.users[name]+"/tokens", `{"name":"main"}`)
		e.creds[name] = tok["secret"].(string)
	}
	return name
}

// auditOf returns the audit rows whose actor is user.
func (e *scopeEnv) auditOf(user string) []map[string]any {
	e.t.Helper()
	out := e.must("admin", "GET", "/admin/v1/audit-log?actor="+e.users[user]+"&limit=1000", "")
	var rows []map[string]any
	for _, x := range out["data"].([]any) {
		rows = append(rows, x.(map[string]any))
	}
	return rows
}

// idorFixture is tenant beta's objects that acme's users reach for.
type idorFixture struct {
	gw, acmeGW, rule, gwToken, user, userToken, acmeUser, log, trace string
}

// newIDORFixture gives tenant beta one object of every type — gateway,
// provider key, rule, gateway token, user with a token and a budget,
// gateway assignment, request log with its trace and guardrail event.
func newIDORFixture(t *testing.T, e *scopeEnv) idorFixture {
	t.Helper()
	f := idorFixture{gw: e.gws["beta"], acmeGW: e.gws["acme"], gwToken: e.tokens["beta-gateway"],
		user: e.users["beta-m1"], userToken: e.tokens["beta-m1"], acmeUser: e.users["acme-m1"]}
	e.must("admin", "POST", "/admin/v1/gateways/"+f.gw+"/keys",
		`{"provider":"openai","alias":"main","key":"sk-beta-CANARY-0123456789","base_url":"http://127.0.0.1:9/v1"}`)
	r := e.must("admin", "POST", "/admin/v1/gateways/"+f.gw+"/rules", `{"name":"r","kind":"keyword","patterns":["x"],"action":"flag"}`)
	f.rule = r["id"].(string)
	e.must("admin", "PATCH", "/admin/v1/users/"+f.user, `{"budget":{"amount_usd":5,"period":"monthly"}}`)
	e.must("admin", "POST", "/admin/v1/users/"+f.user+"/gateways/"+f.gw, "")
	e.must("admin", "PATCH", "/admin/v1/gateways/"+f.gw, `{"budget":{"amount_usd":9,"period":"monthly"}}`)
	ts := time.Now().UTC().Add(-time.Minute)
	f.log, f.trace = "rec-beta-0001", "trace-beta-0001"
	rec := &analytics.Record{ID: f.log, TS: ts, TenantID: "beta", GatewayID: f.gw, TokenID: f.userToken, UserID: f.user,
		Provider: "openai", Model: "gpt-4o-mini", Route: "chat", Status: 200, Attempts: 1, Cache: "MISS", TraceID: f.trace,
		Spans:  []analytics.Span{{TraceID: f.trace, SpanID: "sp-beta", Name: "POST chat/completions", Start: ts, DurationMS: 2, Status: "ok"}},
		Events: []analytics.GuardrailEvent{{ID: "ev-beta", TS: ts, TenantID: "beta", GatewayID: f.gw, RequestID: f.log, RuleID: f.rule, Action: "flag"}},
	}
	if err := e.backend.Write(context.Background(), &analytics.Batch{ID: "batch-idor", Records: []*analytics.Record{rec}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAdminIDOR is security checklist item 21: for every object type
// (tenant, gateway, provider key, rule, gateway and user token, user,
// budget, gateway assignment, request log, trace, guardrail events), a
// Tenant Administrator of acme reads, changes and deletes beta's by id
// over REST and over GraphQL, nested fields included. Every probe answers
// 404 and leaves exactly one audit row with outcome denied; beta's objects
// are unchanged afterwards. (A fresh caller per probe, so that the per-actor
// bound on denied rows does not hide any.)
func TestAdminIDOR(t *testing.T) {
	e := newScopeEnv(t)
	f := newIDORFixture(t, e)
	x := func(s string) string {
		r := strings.NewReplacer("{gw}", f.gw, "{acmegw}", f.acmeGW, "{rule}", f.rule, "{gwtok}", f.gwToken,
			"{user}", f.user, "{utok}", f.userToken, "{acmeuser}", f.acmeUser, "{log}", f.log, "{trace}", f.trace)
		return r.Replace(s)
	}
	rest := []struct{ method, path, body string }{
		{"GET", "/admin/v1/tenants/beta", ""},
		{"PATCH", "/admin/v1/tenants/beta", `{"name":"mine"}`},
		{"GET", "/admin/v1/tenants/beta/users", ""},
		{"GET", "/admin/v1/tenants/beta/gateways", ""},
		{"GET", "/admin/v1/tenants/beta/spend", ""},
		{"GET", "/admin/v1/stats?tenant=beta", ""},
		{"GET", "/admin/v1/gateways/{gw}", ""},
		{"PATCH", "/admin/v1/gateways/{gw}", `{"name":"mine"}`},
		{"DELETE", "/admin/v1/gateways/{gw}", ""},
		{"DELETE", "/admin/v1/gateways/{gw}/budget", ""},
		{"GET", "/admin/v1/gateways/{gw}/keys", ""},
		{"POST", "/admin/v1/gateways/{gw}/keys", `{"provider":"openai","alias":"evil","key":"sk-evil-0123456789ab"}`},
		{"DELETE", "/admin/v1/gateways/{gw}/keys/openai/main", ""},
		{"GET", "/admin/v1/gateways/{gw}/rules", ""},
		{"PATCH", "/admin/v1/gateways/{gw}/rules", `{"id":"{rule}","enabled":false}`},
		{"DELETE", "/admin/v1/gateways/{gw}/rules?id={rule}", ""},
		{"PATCH", "/admin/v1/gateways/{acmegw}/rules", `{"id":"{rule}","enabled":false}`},
		{"DELETE", "/admin/v1/gateways/{acmegw}/rules?id={rule}", ""},
		{"GET", "/admin/v1/gateways/{gw}/tokens", ""},
		{"PATCH", "/admin/v1/gateways/{gw}/tokens/{gwtok}", `{"revoked":true}`},
		{"DELETE", "/admin/v1/gateways/{gw}/tokens/{gwtok}", ""},
		{"PATCH", "/admin/v1/gateways/{acmegw}/tokens/{gwtok}", `{"revoked":true}`},
		{"DELETE", "/admin/v1/gateways/{acmegw}/tokens/{gwtok}", ""},
		{"GET", "/admin/v1/gateways/{gw}/spend", ""},
		{"GET", "/admin/v1/gateways/{gw}/traces", ""},
		{"GET", "/admin/v1/gateways/{gw}/guardrail-stats", ""},
		{"GET", "/admin/v1/gateways/{gw}/guardrail-events", ""},
		{"GET", "/admin/v1/gateways/{gw}/circuit-breaker", ""},
		{"GET", "/admin/v1/users/{user}", ""},
		{"PATCH", "/admin/v1/users/{user}", `{"name":"mine"}`},
		{"DELETE", "/admin/v1/users/{user}", ""},
		{"DELETE", "/admin/v1/users/{user}/budget", ""},
		{"GET", "/admin/v1/users/{user}/tokens", ""},
		{"POST", "/admin/v1/users/{user}/tokens", `{"name":"steal"}`},
		{"PATCH", "/admin/v1/users/{user}/tokens/{utok}", `{"revoked":true}`},
		{"DELETE", "/admin/v1/users/{user}/tokens/{utok}", ""},
		{"PATCH", "/admin/v1/users/{acmeuser}/tokens/{utok}", `{"revoked":true}`},
		{"DELETE", "/admin/v1/me/tokens/{utok}", ""},
		{"GET", "/admin/v1/users/{user}/gateways", ""},
		{"DELETE", "/admin/v1/users/{user}/gateways/{gw}", ""},
		{"POST", "/admin/v1/users/{acmeuser}/gateways/{gw}", ""},
		{"GET", "/admin/v1/logs/{log}", ""},
		{"GET", "/admin/v1/logs?tenant=beta", ""},
		{"GET", "/admin/v1/traces/{trace}", ""},
		{"GET", "/admin/v1/playground/trace/{trace}", ""},
		{"POST", "/admin/v1/playground/token", `{"gateway_id":"{gw}"}`},
	}
	gql := []string{
		`{ tenant(id: "beta") { id } }`,
		`{ tenant(id: "beta") { gateways { data { id tokens { data { id } } } } } }`,
		`{ tenant(id: "beta") { users { data { id tokens { data { id } } } } } }`,
		`{ users(tenantId: "beta") { data { id } } }`,
		`{ gateways(tenantId: "beta") { data { id } } }`,
		`{ gateway(id: "{gw}") { id keys { data { alias } } rules { data { id } } } }`,
		`{ providerKeys(gatewayId: "{gw}") { data { alias } } }`,
		`{ rules(gatewayId: "{gw}") { data { id } } }`,
		`{ gatewayTokens(gatewayId: "{gw}") { data { id } } }`,
		`{ user(id: "{user}") { id tokens { data { id } } } }`,
		`{ userTokens(userId: "{user}") { data { id } } }`,
		`{ userGateways(userId: "{user}") { data { id } } }`,
		`{ log(id: "{log}") { id } }`,
		`{ trace(id: "{trace}") { id } }`,
		`{ playgroundTrace(id: "{trace}") { id } }`,
		`{ guardrailEvents(gatewayId: "{gw}") { data { id } } }`,
		`{ gatewaySpend(gatewayId: "{gw}") { totalUsd } }`,
		`{ tenantSpend(tenantId: "beta") { totalUsd } }`,
		`{ stats(tenantId: "beta") { requests } }`,
		`mutation { updateTenant(id: "beta", input: {name: "mine"}) { id } }`,
		`mutation { updateGateway(id: "{gw}", input: {name: "mine"}) { id } }`,
		`mutation { deleteGateway(id: "{gw}") }`,
		`mutation { deleteGatewayBudget(id: "{gw}") }`,
		`mutation { deleteProviderKey(gatewayId: "{gw}", provider: "openai", alias: "main") }`,
		`mutation { updateRule(gatewayId: "{acmegw}", input: {id: "{rule}", enabled: false}) { id } }`,
		`mutation { deleteRule(gatewayId: "{gw}", id: "{rule}") }`,
		`mutation { updateGatewayToken(gatewayId: "{acmegw}", tokenId: "{gwtok}", input: {revoked: true}) { id } }`,
		`mutation { deleteGatewayToken(gatewayId: "{gw}", tokenId: "{gwtok}") }`,
		`mutation { updateUser(id: "{user}", input: {name: "mine"}) { id } }`,
		`mutation { deleteUser(id: "{user}") }`,
		`mutation { deleteUserBudget(id: "{user}") }`,
		`mutation { createUserToken(userId: "{user}", input: {name: "steal"}) { id } }`,
		`mutation { updateUserToken(userId: "{acmeuser}", tokenId: "{utok}", input: {revoked: true}) { id } }`,
		`mutation { deleteUserToken(userId: "{user}", tokenId: "{utok}") }`,
		`mutation { deleteMyToken(tokenId: "{utok}") }`,
		`mutation { assignGateway(userId: "{acmeuser}", gatewayId: "{gw}") }`,
		`mutation { unassignGateway(userId: "{user}", gatewayId: "{gw}") }`,
		`mutation { createPlaygroundToken(gatewayId: "{gw}") { token } }`,
	}
	oneDeniedRow := func(t *testing.T, who, what string) {
		t.Helper()
		var denied []string
		for _, r := range e.auditOf(who) {
			if r["outcome"] == "denied" {
				denied = append(denied, fmt.Sprint(r["action"], " ", r["resource_id"]))
			}
		}
		if len(denied) != 1 {
			t.Errorf("%s: %d denied audit rows %v, want exactly 1", what, len(denied), denied)
		}
	}
	for _, p := range rest {
		who := e.freshUser("acme", "tenant_administrator")
		path := x(p.path)
		status, out := e.do(who, p.method, path, x(p.body))
		if status != 404 {
			t.Errorf("REST %s %s: status %d %v, want 404", p.method, path, status, out)
			continue
		}
		oneDeniedRow(t, who, "REST "+p.method+" "+p.path)
	}
	for _, q := range gql {
		who := e.freshUser("acme", "tenant_administrator")
		status, data, codes := e.gql(who, x(q))
		if status != 200 || len(codes) != 1 || codes[0] != "NOT_FOUND" {
			t.Errorf("GraphQL %s: HTTP %d, codes %v, data %v; want one NOT_FOUND", q, status, codes, data)
			continue
		}
		oneDeniedRow(t, who, "GraphQL "+q)
	}
	// There is no node(id:) to probe: no Node interface, no global lookup
	// by id that would bypass the per-type tenant checks.
	who := e.freshUser("acme", "tenant_administrator")
	if status, _, codes := e.gql(who, `{ node(id: "`+f.gw+`") { id } }`); status != 400 || !slices.Contains(codes, "GRAPHQL_VALIDATION_FAILED") {
		t.Errorf("node(id:): HTTP %d, codes %v; want a validation error (no such field)", status, codes)
	}
	// Nested fields stay in the parent's tenant.
	_, data, codes := e.gql(who, `{ tenant(id: "acme") { users { data { id tokens { data { userId } } } } } }`)
	if len(codes) != 0 || strings.Contains(fmt.Sprint(data), f.user) {
		t.Errorf("acme's nested users and tokens: codes %v, data %v", codes, data)
	}
	// The audit log itself is the Administrator's: 403, before any lookup.
	if status, _ := e.do(who, "GET", "/admin/v1/audit-log", ""); status != 403 {
		t.Errorf("audit log as a Tenant Administrator: %d, want 403", status)
	}

	// Nothing of beta's changed.
	gw := e.must("admin", "GET", "/admin/v1/gateways/"+f.gw, "")
	if gw["name"] == "mine" || gw["budget"] == nil {
		t.Errorf("beta's gateway changed: %v", gw)
	}
	if l := e.must("admin", "GET", "/admin/v1/gateways/"+f.gw+"/keys", "")["data"].([]any); len(l) != 1 {
		t.Errorf("beta's keys: %v", l)
	}
	if l := e.must("admin", "GET", "/admin/v1/gateways/"+f.gw+"/rules", "")["data"].([]any); len(l) != 1 || l[0].(map[string]any)["enabled"] != true {
		t.Errorf("beta's rules: %v", l)
	}
	for _, tk := range e.must("admin", "GET", "/admin/v1/gateways/"+f.gw+"/tokens", "")["data"].([]any) {
		if tk.(map[string]any)["revoked"] == true {
			t.Errorf("beta's gateway token was revoked: %v", tk)
		}
	}
	u := e.must("admin", "GET", "/admin/v1/users/"+f.user, "")
	if u["name"] == "mine" || u["budget"] == nil {
		t.Errorf("beta's user changed: %v", u)
	}
	toks := e.must("admin", "GET", "/admin/v1/users/"+f.user+"/tokens", "")["data"].([]any)
	if len(toks) != 1 || toks[0].(map[string]any)["revoked"] == true {
		t.Errorf("beta's user tokens: %v", toks)
	}
	if l := e.must("admin", "GET", "/admin/v1/users/"+f.user+"/gateways", "")["data"].([]any); len(l) != 1 {
		t.Errorf("beta's assignments: %v", l)
	}
	if l := e.must("admin", "GET", "/admin/v1/users/"+f.acmeUser+"/gateways", "")["data"].([]any); len(l) != 0 {
		t.Errorf("acme's user got beta's gateway: %v", l)
	}
}
