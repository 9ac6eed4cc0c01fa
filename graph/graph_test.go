package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// env is a GraphQL handler over a real admin service on a fresh SQLite
// store, with tenant "platform" and an Administrator principal.
type env struct {
	t     *testing.T
	svc   *admin.Service
	st    *store.Store
	h     http.Handler
	admin *auth.Principal
	logs  *syncBuffer
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with the admin configuration changed by set (nil:
// as it is).
func newEnvWith(t *testing.T, set func(*admin.Config)) *env {
	t.Helper()
	st := testenv.Store(t, testenv.SQLite)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true}
	if set != nil {
		set(&cfg)
	}
	svc, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	err = store.Insert(context.Background(), st.DB, &store.Tenant{ID: "platform", Name: "Platform",
		Status: store.TenantActive, Settings: admin.DefaultTenantSettings(), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	return &env{
		t: t, svc: svc, st: st, logs: logs,
		h:     NewHandler(svc, Options{Logger: log}),
		admin: &auth.Principal{UserID: "usr_root", Email: "root@test", Role: auth.Administrator, TenantID: "platform", RequestID: "req-1"},
	}
}

// syncBuffer is a bytes.Buffer safe for the handler's concurrent resolvers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gqlError is one error of a GraphQL response.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type response struct {
	status int
	Data   map[string]any `json:"data"`
	Errors []gqlError     `json:"errors"`
	raw    string
}

// authenticated stands in for the authentication middleware.
func authenticated(p *auth.Principal, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p != nil {
			r = r.WithContext(auth.With(r.Context(), p))
		}
		h.ServeHTTP(w, r)
	})
}

// post sends a raw body as p.
func (e *env) post(p *auth.Principal, body string) response {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/admin/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	authenticated(p, e.h).ServeHTTP(rec, req)
	res := response{status: rec.Code, raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		e.t.Fatalf("decode response %q: %v", rec.Body.String(), err)
	}
	return res
}

// do runs query with variables as p.
func (e *env) do(p *auth.Principal, query string, vars map[string]any) response {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.post(p, string(b))
}

// mustDo runs query and fails the test on any error.
func (e *env) mustDo(p *auth.Principal, query string, vars map[string]any) map[string]any {
	e.t.Helper()
	res := e.do(p, query, vars)
	if res.status != http.StatusOK || len(res.Errors) > 0 {
		e.t.Fatalf("query failed: HTTP %d: %s", res.status, res.raw)
	}
	return res.Data
}

// get walks a decoded JSON value along keys (object keys or list indexes).
func get(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

// onlyError returns the single error of res, failing otherwise.
func onlyError(t *testing.T, res response) gqlError {
	t.Helper()
	if len(res.Errors) != 1 {
		t.Fatalf("got %d errors, want 1: %s", len(res.Errors), res.raw)
	}
	return res.Errors[0]
}

func checkCode(t *testing.T, e gqlError, want string) {
	t.Helper()
	if got := e.Extensions["code"]; got != want {
		t.Errorf("extensions.code = %v, want %s (error %+v)", got, want, e)
	}
}

// setupTenant creates tenant id with gateway "prod" over GraphQL as the
// Administrator and returns the gateway id.
func (e *env) setupTenant(id string) string {
	e.t.Helper()
	e.mustDo(e.admin, `mutation($id: ID!) { createTenant(input: {id: $id, name: "T"}) { id } }`, map[string]any{"id": id})
	d := e.mustDo(e.admin, `mutation($t: ID!) { createGateway(tenantId: $t, input: {slug: "prod"}) { id } }`, map[string]any{"t": id})
	return str(d, "createGateway", "id")
}

func TestCreateTenantGatewayKeyUserToken(t *testing.T) {
	e := newEnv(t)
	d := e.mustDo(e.admin, `mutation { createTenant(input: {id: "acme", name: "Acme"}) {
		id name status settings { logRetentionDays logBodiesDefault allowedProviders } } }`, nil)
	if got := str(d, "createTenant", "status"); got != "active" {
		t.Errorf("tenant status = %q, want active", got)
	}
	if got := get(d, "createTenant", "settings", "logRetentionDays"); got != float64(30) {
		t.Errorf("logRetentionDays = %v, want 30", got)
	}

	d = e.mustDo(e.admin, `mutation($in: GatewayInput!) { createGateway(tenantId: "acme", input: $in) {
		id tenantId slug name requestTimeoutMs cache { enabled ttlSeconds } retry { maxAttempts backoffMs }
		routes { name strategy targets { provider model keyAlias weight } }
		circuitBreaker { failureThreshold cooldownSeconds }
		budget { amountUsd period hard spentUsd remainingUsd } } }`,
		map[string]any{"in": map[string]any{
			"slug": "prod", "name": "Production",
			"budget": map[string]any{"amountUsd": 100, "period": "monthly"},
			"routes": []any{map[string]any{"name": "smart", "targets": []any{
				map[string]any{"provider": "openai", "model": "gpt-4o"}}}},
		}})
	gw := str(d, "createGateway", "id")
	if !strings.HasPrefix(gw, "gw_") || str(d, "createGateway", "tenantId") != "acme" {
		t.Fatalf("gateway = %v", d["createGateway"])
	}
	if got := get(d, "createGateway", "budget", "hard"); got != true {
		t.Errorf("budget.hard = %v, want true (the default)", got)
	}
	if got := get(d, "createGateway", "budget", "amountUsd"); got != float64(100) {
		t.Errorf("budget.amountUsd = %v, want 100", got)
	}
	if got := str(d, "createGateway", "routes", 0, "strategy"); got != "fallback" {
		t.Errorf("route strategy = %q, want fallback", got)
	}

	d = e.mustDo(e.admin, `mutation($g: ID!) { addProviderKey(gatewayId: $g,
		input: {provider: "openai", alias: "main", key: "sk-test-0123456789abcd"}) { id provider alias last4 weight } }`,
		map[string]any{"g": gw})
	if got := str(d, "addProviderKey", "last4"); got != "abcd" {
		t.Errorf("key last4 = %q, want abcd", got)
	}
	// The key is write-only: the schema has no field for it.
	res := e.do(e.admin, `query($g: ID!) { providerKeys(gatewayId: $g) { data { key } } }`, map[string]any{"g": gw})
	if res.status != http.StatusBadRequest || len(res.Errors) == 0 || strings.Contains(res.raw, "0123456789") {
		t.Errorf("query of a key field: HTTP %d %s", res.status, res.raw)
	}

	d = e.mustDo(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "Ann@Example.com", name: "Ann", role: "member",
		budget: {amountUsd: 5, period: "daily", hard: false}}) { id email role status budget { hard period } } }`, nil)
	user := str(d, "createUser", "id")
	if str(d, "createUser", "role") != "member" || get(d, "createUser", "budget", "hard") != false {
		t.Errorf("user = %v", d["createUser"])
	}
	e.mustDo(e.admin, `mutation($u: ID!, $g: ID!) { assignGateway(userId: $u, gatewayId: $g) }`, map[string]any{"u": user, "g": gw})

	d = e.mustDo(e.admin, `mutation($u: ID!) { createUserToken(userId: $u, input: {name: "laptop", allowedModels: ["gpt-4o"]}) {
		id name prefix last4 userId allowedModels secret } }`, map[string]any{"u": user})
	secretValue := str(d, "createUserToken", "secret")
	if !strings.HasPrefix(secretValue, "sk-sl-") || str(d, "createUserToken", "userId") != user {
		t.Fatalf("created token = %v", d["createUserToken"])
	}
	if got := str(d, "createUserToken", "last4"); got != secretValue[len(secretValue)-4:] {
		t.Errorf("last4 = %q, want the end of the secret", got)
	}

	// Nested fields call the same domain functions.
	d = e.mustDo(e.admin, `{ tenant(id: "acme") { gateways { data { slug keys { data { alias } } } } }
		user(id: "`+user+`") { tokens { data { name } } gateways { data { id } } } }`, nil)
	if got := str(d, "tenant", "gateways", "data", 0, "keys", "data", 0, "alias"); got != "main" {
		t.Errorf("tenant.gateways.keys alias = %q, want main (%v)", got, d)
	}
	if got := str(d, "user", "tokens", "data", 0, "name"); got != "laptop" {
		t.Errorf("user.tokens name = %q, want laptop", got)
	}
	if got := str(d, "user", "gateways", "data", 0, "id"); got != gw {
		t.Errorf("user.gateways id = %q, want %s", got, gw)
	}
	if strings.Contains(fmt.Sprint(d), secretValue) {
		t.Error("a listing shows the token secret")
	}
}

func TestOmittableBudget(t *testing.T) {
	e := newEnv(t)
	e.mustDo(e.admin, `mutation { createTenant(input: {id: "acme"}) { id } }`, nil)
	d := e.mustDo(e.admin, `mutation { createGateway(tenantId: "acme", input: {slug: "prod", budget: {amountUsd: 10, period: "total"}}) { id } }`, nil)
	gw := str(d, "createGateway", "id")

	// Absent: the budget stays.
	d = e.mustDo(e.admin, `mutation($g: ID!) { updateGateway(id: $g, input: {name: "P"}) { name budget { amountUsd } } }`, map[string]any{"g": gw})
	if get(d, "updateGateway", "budget", "amountUsd") != float64(10) {
		t.Errorf("budget after a patch without it = %v, want kept", get(d, "updateGateway", "budget"))
	}
	// null: the budget is removed.
	d = e.mustDo(e.admin, `mutation($g: ID!) { updateGateway(id: $g, input: {budget: null}) { budget { amountUsd } } }`, map[string]any{"g": gw})
	if b := get(d, "updateGateway", "budget"); b != nil {
		t.Errorf("budget after budget: null = %v, want null", b)
	}
}

func TestMemberForbiddenOnTenants(t *testing.T) {
	e := newEnv(t)
	member := &auth.Principal{UserID: "usr_m", TenantID: "platform", Role: auth.Member}
	res := e.do(member, `{ tenants { data { id } } }`, nil)
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d, want 200: %s", res.status, res.raw)
	}
	err := onlyError(t, res)
	checkCode(t, err, "FORBIDDEN")
	if err.Extensions["status"] != float64(403) || err.Extensions["errorCode"] != "forbidden" {
		t.Errorf("extensions = %v", err.Extensions)
	}
	if get(res.Data, "tenants") != nil {
		t.Errorf("data.tenants = %v, want null", res.Data["tenants"])
	}
}

func TestTenantAdminSeesOtherTenantAsNotFound(t *testing.T) {
	e := newEnv(t)
	e.setupTenant("tenant-a")
	gwB := e.setupTenant("tenant-b")
	ta := &auth.Principal{UserID: "usr_ta", TenantID: "tenant-a", Role: auth.TenantAdministrator}

	res := e.do(ta, `query($g: ID!) { gateway(id: $g) { id } }`, map[string]any{"g": gwB})
	err := onlyError(t, res)
	checkCode(t, err, "NOT_FOUND")
	if res.status != http.StatusOK || err.Message != "gateway not found" {
		t.Errorf("HTTP %d, message %q", res.status, err.Message)
	}
	res = e.do(ta, `query($g: ID!) { updateGateway: gateway(id: $g) { id } }`, map[string]any{"g": gwB})
	checkCode(t, onlyError(t, res), "NOT_FOUND")
}

func TestDeniedNestedFieldLeavesSiblings(t *testing.T) {
	e := newEnv(t)
	e.mustDo(e.admin, `mutation { createTenant(input: {id: "acme"}) { id } }`, nil)
	d := e.mustDo(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "m@acme.test", role: "ai_manager"}) { id } }`, nil)
	aim := &auth.Principal{UserID: str(d, "createUser", "id"), TenantID: "acme", Role: auth.AIManager}

	res := e.do(aim, `{ me { email tokens { data { id } } } providers { data { id } } }`, nil)
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", res.status, res.raw)
	}
	err := onlyError(t, res)
	checkCode(t, err, "FORBIDDEN")
	if fmt.Sprint(err.Path) != "[me tokens]" {
		t.Errorf("error path = %v, want [me tokens]", err.Path)
	}
	if got := str(res.Data, "me", "email"); got != "m@acme.test" {
		t.Errorf("me.email = %q, want it resolved", got)
	}
	if l, _ := get(res.Data, "providers", "data").([]any); len(l) == 0 {
		t.Error("providers did not resolve beside the denied field")
	}
}

func TestDepthLimit(t *testing.T) {
	e := newEnv(t)
	// trace(1) root(2) children×11 (13) name(14)
	q := `{ trace(id: "x") { root { ` + strings.Repeat("children { ", 11) + "name" + strings.Repeat(" }", 11) + " } } }"
	res := e.do(e.admin, q, nil)
	if res.status != http.StatusBadRequest {
		t.Errorf("HTTP %d, want 400", res.status)
	}
	err := onlyError(t, res)
	checkCode(t, err, "QUERY_TOO_COMPLEX")
	if err.Message != "query depth 14 exceeds the limit of 10" {
		t.Errorf("message = %q", err.Message)
	}

	// Fragments count where they are spread.
	q = `{ trace(id: "x") { root { ...Deep } } } fragment Deep on Span { ` +
		strings.Repeat("children { ", 9) + "name" + strings.Repeat(" }", 9) + " }"
	checkCode(t, onlyError(t, e.do(e.admin, q, nil)), "QUERY_TOO_COMPLEX")

	// Depth 10 is allowed.
	q = `{ trace(id: "x") { root { ` + strings.Repeat("children { ", 7) + "name" + strings.Repeat(" }", 7) + " } } }"
	if res := e.do(e.admin, q, nil); res.status != http.StatusOK {
		t.Errorf("depth 10: HTTP %d: %s", res.status, res.raw)
	}
}

func TestAliasLimit(t *testing.T) {
	e := newEnv(t)
	aliases := func(n int) string {
		var b strings.Builder
		b.WriteString("{ ")
		for i := range n {
			fmt.Fprintf(&b, "a%d: providers { nextCursor } ", i)
		}
		b.WriteString("}")
		return b.String()
	}
	res := e.do(e.admin, aliases(51), nil)
	if res.status != http.StatusBadRequest {
		t.Errorf("HTTP %d, want 400", res.status)
	}
	err := onlyError(t, res)
	checkCode(t, err, "QUERY_TOO_COMPLEX")
	if err.Message != "query has 51 aliases, which exceeds the limit of 50" {
		t.Errorf("message = %q", err.Message)
	}
	if res := e.do(e.admin, aliases(50), nil); res.status != http.StatusOK || len(res.Errors) > 0 {
		t.Errorf("50 aliases: HTTP %d: %s", res.status, res.raw)
	}

	// Aliases inside a fragment count once per spread.
	q := `{ ...F ...G } fragment F on Query { `
	for i := range 30 {
		q += fmt.Sprintf("f%d: providers { nextCursor } ", i)
	}
	q += `} fragment G on Query { `
	for i := range 30 {
		q += fmt.Sprintf("g%d: models { nextCursor } ", i)
	}
	q += "}"
	checkCode(t, onlyError(t, e.do(e.admin, q, nil)), "QUERY_TOO_COMPLEX")
}

func TestComplexityLimit(t *testing.T) {
	e := newEnv(t)
	q := `{ tenants(limit: 1000) { data { id name gateways(limit: 1000) { data { id slug name } } } } }`
	res := e.do(e.admin, q, nil)
	err := onlyError(t, res)
	checkCode(t, err, "QUERY_TOO_COMPLEX")
	if res.status != http.StatusBadRequest || !strings.Contains(err.Message, "exceeds the limit of 1000") {
		t.Errorf("HTTP %d, message %q", res.status, err.Message)
	}
	// The same selection at the default page size is fine.
	q = `{ tenants { data { id name gateways { data { id slug name } } } } }`
	if res := e.do(e.admin, q, nil); res.status != http.StatusOK || len(res.Errors) > 0 {
		t.Errorf("default page: HTTP %d: %s", res.status, res.raw)
	}
}

// introspectionQuery is the query GraphiQL sends (abridged to the parts
// that nest deepest).
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name }
    types { ...FullType }
    directives { name locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

func TestIntrospectionForAdministratorOnly(t *testing.T) {
	e := newEnv(t)
	ta := &auth.Principal{UserID: "usr_ta", TenantID: "platform", Role: auth.TenantAdministrator}
	res := e.do(ta, `{ __schema { queryType { name } } }`, nil)
	if res.status != http.StatusOK {
		t.Errorf("HTTP %d, want 200", res.status)
	}
	checkCode(t, onlyError(t, res), "FORBIDDEN")
	checkCode(t, onlyError(t, e.do(ta, `{ __type(name: "Gateway") { name } }`, nil)), "FORBIDDEN")
	// __typename is not introspection of the schema.
	if res := e.do(ta, `{ __typename }`, nil); len(res.Errors) > 0 {
		t.Errorf("__typename: %s", res.raw)
	}

	d := e.mustDo(e.admin, `{ __schema { queryType { name } } }`, nil)
	if got := str(d, "__schema", "queryType", "name"); got != "Query" {
		t.Errorf("queryType = %q, want Query", got)
	}
	d = e.mustDo(e.admin, introspectionQuery, nil)
	if l, _ := get(d, "__schema", "types").([]any); len(l) < 50 {
		t.Errorf("introspection answered %d types", len(l))
	}
	if strings.Contains(fmt.Sprint(d), `"key"`) {
		t.Error("a provider key field is in the schema")
	}
}

func TestNoSuggestions(t *testing.T) {
	e := newEnv(t)
	res := e.do(e.admin, `{ tenant(id: "x") { nam } }`, nil)
	if res.status != http.StatusBadRequest || strings.Contains(res.raw, "Did you mean") {
		t.Errorf("HTTP %d: %s", res.status, res.raw)
	}
}

func TestNoPrincipal(t *testing.T) {
	e := newEnv(t)
	res := e.do(nil, `{ tenants { data { id } } }`, nil)
	if res.status != http.StatusUnauthorized {
		t.Fatalf("HTTP %d, want 401", res.status)
	}
	want := `{"error":{"type":"authentication_error","code":"missing_token",`
	if !strings.HasPrefix(res.raw, want) {
		t.Errorf("body = %s, want the contract error shape", res.raw)
	}
}

func TestTransport(t *testing.T) {
	e := newEnv(t)
	h := authenticated(e.admin, e.h)
	send := func(method, contentType, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/admin/graphql?query=%7Btenants%7Bdata%7Bid%7D%7D%7D", strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	query := `{"query":"{ providers { nextCursor } }"}`
	for _, tc := range []struct {
		name, method, contentType, body string
		status                          int
		want                            string
	}{
		{"get", http.MethodGet, "", "", http.StatusMethodNotAllowed, `"code":"method_not_allowed"`},
		{"form", http.MethodPost, "application/x-www-form-urlencoded", "query=%7B__typename%7D", http.StatusUnsupportedMediaType, `"code":"unsupported_media_type"`},
		{"multipart", http.MethodPost, "multipart/form-data; boundary=x", "", http.StatusUnsupportedMediaType, `"code":"unsupported_media_type"`},
		{"batch", http.MethodPost, "application/json", "[" + query + "," + query + "]", http.StatusBadRequest, "batched operations are not supported"},
		{"not an object", http.MethodPost, "application/json", `"secret-password"`, http.StatusBadRequest, "is not a GraphQL request"},
		{"too large", http.MethodPost, "application/json", `{"query":"` + strings.Repeat(" ", maxBodyBytes) + `{__typename}"}`, http.StatusRequestEntityTooLarge, `"code":"PAYLOAD_TOO_LARGE"`},
		{"ok", http.MethodPost, "application/json; charset=utf-8", query, http.StatusOK, `"data":{"providers":{"nextCursor":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := send(tc.method, tc.contentType, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("HTTP %d %s, want %d with %s", rec.Code, rec.Body.String(), tc.status, tc.want)
			}
			if strings.Contains(rec.Body.String(), "secret-password") {
				t.Error("the body is echoed")
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
	if allow := send(http.MethodGet, "", "").Header().Get("Allow"); allow != http.MethodPost {
		t.Errorf("Allow = %q, want POST", allow)
	}
}

func TestErrorPresentation(t *testing.T) {
	e := newEnv(t)
	e.mustDo(e.admin, `mutation { createTenant(input: {id: "acme"}) { id } }`, nil)

	t.Run("domain validation names the param", func(t *testing.T) {
		res := e.do(e.admin, `mutation { createGateway(tenantId: "acme", input: {slug: "prod", requestTimeoutMs: 5}) { id } }`, nil)
		err := onlyError(t, res)
		checkCode(t, err, "BAD_USER_INPUT")
		if err.Extensions["param"] != "request_timeout_ms" || err.Extensions["errorCode"] != "invalid_request" || err.Extensions["status"] != float64(400) {
			t.Errorf("extensions = %v", err.Extensions)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		checkCode(t, onlyError(t, e.do(e.admin, `mutation { createTenant(input: {id: "acme"}) { id } }`, nil)), "CONFLICT")
	})
	t.Run("role_cannot_hold_tokens", func(t *testing.T) {
		d := e.mustDo(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "f@acme.test", role: "finance"}) { id } }`, nil)
		res := e.do(e.admin, `mutation($u: ID!) { createUserToken(userId: $u, input: {name: "x"}) { id } }`, map[string]any{"u": str(d, "createUser", "id")})
		err := onlyError(t, res)
		checkCode(t, err, "BAD_USER_INPUT")
		if err.Extensions["errorCode"] != "role_cannot_hold_tokens" {
			t.Errorf("errorCode = %v", err.Extensions["errorCode"])
		}
	})
	t.Run("bad scalar input", func(t *testing.T) {
		res := e.do(e.admin, `mutation($b: BudgetInput) { createGateway(tenantId: "acme", input: {slug: "x", budget: $b}) { id } }`,
			map[string]any{"b": map[string]any{"amountUsd": "lots", "period": "daily"}})
		checkCode(t, onlyError(t, res), "BAD_USER_INPUT")
	})
	t.Run("unknown role", func(t *testing.T) {
		res := e.do(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "x@acme.test", role: "root"}) { id } }`, nil)
		err := onlyError(t, res)
		checkCode(t, err, "BAD_USER_INPUT")
		if err.Extensions["param"] != "role" {
			t.Errorf("param = %v, want role", err.Extensions["param"])
		}
	})
	t.Run("internal errors are logged, not answered", func(t *testing.T) {
		e := newEnv(t)
		if err := e.st.Close(); err != nil {
			t.Fatal(err)
		}
		res := e.do(e.admin, `{ tenants { data { id } } }`, nil)
		err := onlyError(t, res)
		checkCode(t, err, "INTERNAL_SERVER_ERROR")
		if err.Message != "internal error" || err.Extensions["requestId"] != "req-1" {
			t.Errorf("error = %+v", err)
		}
		if strings.Contains(res.raw, "sql") || strings.Contains(res.raw, "closed") {
			t.Errorf("response leaks the cause: %s", res.raw)
		}
		if log := e.logs.String(); !strings.Contains(log, "closed") || !strings.Contains(log, "req-1") {
			t.Errorf("log = %q, want the cause with the request id", log)
		}
	})
}

func TestPanicIsInternal(t *testing.T) {
	e := newEnv(t)
	// A nil service panics in the resolver.
	e.h = NewHandler(nil, Options{Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	res := e.do(e.admin, `{ tenants { nextCursor } }`, nil)
	err := onlyError(t, res)
	checkCode(t, err, "INTERNAL_SERVER_ERROR")
	if err.Message != "internal error" || !strings.Contains(e.logs.String(), "panic") {
		t.Errorf("error %+v, log %q", err, e.logs.String())
	}
}
