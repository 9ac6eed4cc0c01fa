package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestCredentialChangesTakeEffect is security checklist item 27 on the
// admin API, which keeps no credential cache (the proxy's snapshot takes
// at most 2 s, CONTRACT §4, tested in package snapshot): the request after
// a revocation, an expiry, a role change, a disabled user, a sign-out or
// a password change already sees it. Sessions end on sign-out (REST and
// GraphQL), on a password change (except the session that made it) and on
// a role change.
func TestCredentialChangesTakeEffect(t *testing.T) {
	e := newScopeEnv(t)
	status := func(user, method, path string) int {
		t.Helper()
		s, _ := e.do(user, method, path, "")
		return s
	}
	want := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s: status %d, want %d", what, got, want)
		}
	}
	signIn := func(email, pw string) string {
		t.Helper()
		name := fmt.Sprintf("session-%d", len(e.creds))
		e.creds[name] = e.must("", "POST", "/admin/v1/session", fmt.Sprintf(`{"email":%q,"password":%q}`, email, pw))["token"].(string)
		return name
	}

	// Revocation.
	m := e.freshUser("acme", "member")
	want("member token", status(m, "GET", "/admin/v1/me"), 200)
	tokID := e.must(m, "GET", "/admin/v1/me/tokens", "")["data"].([]any)[0].(map[string]any)["id"].(string)
	e.must("admin", "PATCH", "/admin/v1/users/"+e.users[m]+"/tokens/"+tokID, `{"revoked":true}`)
	want("revoked token", status(m, "GET", "/admin/v1/me"), 401)

	// Expiry.
	exp := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	short := e.must("admin", "POST", "/admin/v1/users/"+e.users["acme-m1"]+"/tokens",
		fmt.Sprintf(`{"name":"short","expires_at":%q}`, exp.Format(time.RFC3339)))
	e.creds["short"] = short["secret"].(string)
	want("token before its expiry", status("short", "GET", "/admin/v1/me"), 200)
	time.Sleep(time.Until(exp) + 10*time.Millisecond)
	_, out := e.do("short", "GET", "/admin/v1/me", "")
	if code := out["error"].(map[string]any)["code"]; code != "token_expired" {
		t.Errorf("token after its expiry: %v, want token_expired", out)
	}

	// Role change: the API token acts with the new role at once, and the
	// user's sessions end.
	ta := e.freshUser("acme", "tenant_administrator")
	taSession := signIn(ta+"@fresh.test", "correct horse battery")
	want("tenant administrator lists users", status(ta, "GET", "/admin/v1/tenants/acme/users"), 200)
	e.must("admin", "PATCH", "/admin/v1/users/"+e.users[ta], `{"role":"member"}`)
	want("demoted token lists users", status(ta, "GET", "/admin/v1/tenants/acme/users"), 403)
	want("session after a role change", status(taSession, "GET", "/admin/v1/me"), 401)

	// Disabled user.
	e.must("admin", "PATCH", "/admin/v1/users/"+e.users[ta], `{"status":"disabled"}`)
	want("token of a disabled user", status(ta, "GET", "/admin/v1/me"), 401)

	// Sign-out, over REST and over GraphQL.
	v := e.freshUser("acme", "viewer")
	want("viewer session", status(v, "GET", "/admin/v1/stats"), 200)
	if s, out := e.do(v, "DELETE", "/admin/v1/session", ""); s != 204 {
		t.Fatalf("sign out: %d %v", s, out)
	}
	want("session after sign-out", status(v, "GET", "/admin/v1/stats"), 401)
	g := signIn(v+"@fresh.test", "correct horse battery")
	if _, _, codes := e.gql(g, `mutation { signOut }`); len(codes) != 0 {
		t.Fatalf("GraphQL sign out: %v", codes)
	}
	want("session after GraphQL sign-out", status(g, "GET", "/admin/v1/stats"), 401)

	// Password change: the user's other sessions end; the session that
	// made the change stays.
	f := e.freshUser("acme", "tenant_administrator")
	s1, s2 := signIn(f+"@fresh.test", "correct horse battery"), signIn(f+"@fresh.test", "correct horse battery")
	if s, out := e.do(s1, "PATCH", "/admin/v1/users/"+e.users[f], `{"password":"a brand new password"}`); s != 200 {
		t.Fatalf("own password change: %d %v", s, out)
	}
	want("the session that changed the password", status(s1, "GET", "/admin/v1/me"), 200)
	want("another session after a password change", status(s2, "GET", "/admin/v1/me"), 401)
	e.must("admin", "PATCH", "/admin/v1/users/"+e.users[f], `{"password":"an administrator's new one"}`)
	want("every session after a password change by another", status(s1, "GET", "/admin/v1/me"), 401)
}

// TestGraphQLRateLimitsCountOperations is the rate-limit half of security
// checklist item 28: one GraphQL request cannot buy many operations with
// aliases, because the admin API's limits count domain operations, not
// HTTP requests — 40 aliased error reports in one request get the 30 a
// minute of the limit, and the other 10 are RATE_LIMITED.
func TestGraphQLRateLimitsCountOperations(t *testing.T) {
	e := newScopeEnv(t)
	var q strings.Builder
	q.WriteString("mutation { ")
	for i := range 40 {
		fmt.Fprintf(&q, `r%d: reportClientError(input: {message: "boom %d"}) { id } `, i, i)
	}
	q.WriteString("}")
	status, data, codes := e.gql("acme-m1", q.String())
	if status != 200 {
		t.Fatalf("HTTP %d", status)
	}
	ok := 0
	for _, v := range data {
		if v != nil {
			ok++
		}
	}
	limited := 0
	for _, c := range codes {
		if c == "RATE_LIMITED" {
			limited++
		}
	}
	if ok != 30 || limited != 10 || len(codes) != 10 {
		t.Errorf("40 aliased operations: %d answered, %d RATE_LIMITED (codes %v); want 30 and 10", ok, limited, codes)
	}
}

// outageEnv is the admin API over a PostgreSQL store reached through a TCP
// proxy, which the test can cut.
func outageEnv(t *testing.T) (*httptest.Server, *testenv.TCPProxy) {
	t.Helper()
	ctx := context.Background()
	base := testenv.Store(t, testenv.Postgres)
	u, err := url.Parse(base.DSN())
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	st, err := store.Open(ctx, store.Config{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rest.NewAdmin(svc, rest.AdminOptions{GraphQL: graph.NewHandler(svc, graph.Options{})}))
	t.Cleanup(srv.Close)
	return srv, proxy
}

// TestStoreOutageAnswers503 checks defect 15 of issue 12 over REST: while
// the database cannot be reached, admin requests answer 503 unavailable
// (type api_error) with Retry-After — not 500 api_error — on every path,
// GraphQL's included; when it is back, they succeed again without a
// restart.
func TestStoreOutageAnswers503(t *testing.T) {
	srv, proxy := outageEnv(t)
	call := func(method, path, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return res, out
	}
	if res, out := call("GET", "/admin/v1/tenants", ""); res.StatusCode != 200 {
		t.Fatalf("before the outage: %d %v", res.StatusCode, out)
	}
	proxy.Break()
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/admin/v1/tenants", ""},
		{"POST", "/admin/v1/tenants", `{"id":"acme"}`},
		{"POST", "/admin/graphql", `{"query":"{ tenants { data { id } } }"}`},
	} {
		res, out := call(c.method, c.path, c.body)
		e, _ := out["error"].(map[string]any)
		if res.StatusCode != 503 || e["code"] != "unavailable" || e["type"] != "api_error" || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s while the database is down: %d %v (Retry-After %q), want 503 unavailable with Retry-After",
				c.method, c.path, res.StatusCode, out, res.Header.Get("Retry-After"))
		}
	}
	// Sign-in meets the outage after its limits: 503 as well.
	req, _ := http.NewRequest("POST", srv.URL+"/admin/v1/session", strings.NewReader(`{"email":"a@b.test","password":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 503 {
		t.Errorf("sign-in while the database is down: %v %v, want 503", res.StatusCode, err)
	} else {
		res.Body.Close()
	}
	proxy.Restore()
	if res, out := call("GET", "/admin/v1/tenants", ""); res.StatusCode != 200 {
		t.Errorf("after the outage: %d %v", res.StatusCode, out)
	}
}

// TestAuthStampedeOverHTTP is security checklist item 57 over HTTP on both
// stores: 100 concurrent requests with one session token, then 100 with
// 100 different unknown tokens, against the bounded pool (4 connections on
// SQLite, 20 on PostgreSQL): every answer is the right 200 or 401, never a
// 500. (That concurrent lookups of one token are coalesced into one query
// is TestAuthenticateStampedeIsCoalesced in package admin.)
func TestAuthStampedeOverHTTP(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			e := newEnv(t, b)
			var wg sync.WaitGroup
			statuses := make(chan int, 200)
			for i := range 200 {
				role := e.creds["viewer"]
				if i >= 100 {
					role = fmt.Sprintf("sk-sl-unknown%034d", i)
				}
				wg.Go(func() {
					req, _ := http.NewRequest("GET", e.srv.URL+"/admin/v1/stats", nil)
					req.Header.Set("Authorization", "Bearer "+role)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if i < 100 {
						statuses <- res.StatusCode
					} else {
						statuses <- res.StatusCode + 1000 // unknown tokens
					}
				})
			}
			wg.Wait()
			close(statuses)
			counts := map[int]int{}
			for s := range statuses {
				counts[s]++
			}
			if counts[200] != 100 || counts[1401] != 100 {
				t.Errorf("statuses %v, want 100 × 200 (session) and 100 × 401 (unknown, as 1401)", counts)
			}
		})
	}
}
