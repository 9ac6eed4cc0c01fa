package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

// scopeEnv is the admin API over a relational store and the embedded
// analytics backend, with two tenants, their users and tokens.
type scopeEnv struct {
	t       *testing.T
	srv     *httptest.Server
	backend *embedded.Store
	// creds maps a user name of the test ("acme-m1") to a bearer secret.
	creds map[string]string
	// users maps a user name to its id, tokens a token name to its id.
	users, tokens map[string]string
	gws           map[string]string // tenant → gateway id
}

func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t, testenv.SQLite)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	an, err := embedded.Open(ctx, filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = an.Close() })
	svc, err := admin.New(admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true, Analytics: an})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	h := rest.NewAdmin(svc, rest.AdminOptions{GraphQL: graph.NewHandler(svc, graph.Options{})})
	e := &scopeEnv{t: t, srv: httptest.NewServer(h), backend: an, creds: map[string]string{"admin": adminToken},
		users: map[string]string{}, tokens: map[string]string{}, gws: map[string]string{}}
	t.Cleanup(e.srv.Close)

	e.must("admin", "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`)
	e.must("admin", "POST", "/admin/v1/tenants", `{"id":"beta","name":"Beta"}`)
	for _, tn := range []string{"acme", "beta"} {
		gw := e.must("admin", "POST", "/admin/v1/tenants/"+tn+"/gateways", `{"slug":"prod"}`)
		e.gws[tn] = gw["id"].(string)
		tok := e.must("admin", "POST", "/admin/v1/gateways/"+e.gws[tn]+"/tokens", `{"name":"service"}`)
		e.tokens[tn+"-gateway"] = tok["id"].(string)
	}
	// Users who hold tokens sign in with a user token of their own; the
	// others (Finance, Viewer) with a session.
	for _, u := range []struct{ name, tenant, role string }{
		{"acme-ta", "acme", "tenant_administrator"},
		{"acme-m1", "acme", "member"},
		{"acme-m2", "acme", "member"},
		{"acme-aim", "acme", "ai_manager"},
		{"acme-fin", "acme", "finance"},
		{"acme-viewer", "acme", "viewer"},
		{"beta-ta", "beta", "tenant_administrator"},
		{"beta-m1", "beta", "member"},
	} {
		email := u.name + "@scope.test"
		created := e.must("admin", "POST", "/admin/v1/tenants/"+u.tenant+"/users",
			fmt.Sprintf(`{"email":%q,"role":%q,"password":"correct horse battery"}`, email, u.role))
		e.users[u.name] = created["id"].(string)
		switch u.role {
		case "finance", "viewer":
			s := e.must("", "POST", "/admin/v1/session", fmt.Sprintf(`{"email":%q,"password":"correct horse battery"}`, email))
			e.creds[u.name] = s["token"].(string)
		default:
			tok := e.must("admin", "POST", "/admin/v1/users/"+e.users[u.name]+"/tokens", `{"name":"main"}`)
			e.creds[u.name] = tok["secret"].(string)
			e.tokens[u.name] = tok["id"].(string)
		}
	}
	// A second token of acme-m1: a Member's scope is every token of its own.
	tok := e.must("admin", "POST", "/admin/v1/users/"+e.users["acme-m1"]+"/tokens", `{"name":"laptop"}`)
	e.tokens["acme-m1-laptop"] = tok["id"].(string)
	return e
}

// do sends a request with the credentials of user ("" for none).
func (e *scopeEnv) do(user, method, path, body string) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+e.creds[user])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return res.StatusCode, out
}

func (e *scopeEnv) must(user, method, path, body string) map[string]any {
	e.t.Helper()
	status, out := e.do(user, method, path, body)
	if status >= 300 {
		e.t.Fatalf("%s %s as %s: status %d: %v", method, path, user, status, out)
	}
	return out
}

// usage is what a set of records adds up to.
type usage struct {
	requests, errors, tokensIn int64
	cost                       money.USD
}

func (u *usage) add(r *analytics.Record) {
	u.requests++
	if r.Status >= 400 {
		u.errors++
	}
	u.tokensIn += r.TokensIn
	u.cost += r.CostUSD
}

// TestStatsAndLogsScope checks the scope rule (CONTRACT §5) end to end over
// the REST API and the embedded analytics backend: a Member (and every
// role below Tenant Administrator) counts only the requests made with its
// own tokens, a Tenant Administrator its whole tenant, an Administrator
// any tenant (?tenant=) and every tenant by default. Logs: a Tenant
// Administrator lists its tenant's, an Administrator any.
func TestStatsAndLogsScope(t *testing.T) {
	e := newScopeEnv(t)
	ctx := context.Background()

	// The records: per tenant, per user token (and gateway token), a few
	// requests each, some failed, with distinct token and cost amounts.
	type source struct {
		tenant, user, token string
		n                   int
	}
	sources := []source{
		{"acme", "acme-m1", "acme-m1", 3},
		{"acme", "acme-m1", "acme-m1-laptop", 2},
		{"acme", "acme-m2", "acme-m2", 4},
		{"acme", "acme-ta", "acme-ta", 1},
		{"acme", "acme-aim", "acme-aim", 2},
		{"acme", "", "acme-gateway", 6},
		{"beta", "beta-m1", "beta-m1", 7},
		{"beta", "beta-ta", "beta-ta", 1},
		{"beta", "", "beta-gateway", 3},
	}
	byUser := map[string]*usage{}
	byTenant := map[string]*usage{}
	var all usage
	var recs []*analytics.Record
	ids := map[string][]string{} // tenant → record ids
	now := time.Now().UTC()
	seq := 0
	for _, s := range sources {
		for i := range s.n {
			seq++
			r := &analytics.Record{
				ID: fmt.Sprintf("rec-%03d", seq), TS: now.Add(-time.Duration(seq) * time.Minute),
				TenantID: s.tenant, GatewayID: e.gws[s.tenant], TokenID: e.tokens[s.token],
				Provider: "openai", Model: "gpt-4o-mini", Route: "chat", Status: 200, Attempts: 1,
				LatencyMS: int64(10 * seq), TokensIn: int64(seq), TokensOut: 2, CostUSD: money.USD(1000 * seq),
				Cache: "MISS", Metadata: map[string]string{"source": s.token},
			}
			if s.user != "" {
				r.UserID = e.users[s.user]
			}
			if i == 0 {
				r.Status, r.ErrorCode = 429, "rate_limited"
			}
			recs = append(recs, r)
			ids[s.tenant] = append(ids[s.tenant], r.ID)
			for _, u := range []*usage{&all, usageOf(byTenant, s.tenant), usageOf(byUser, s.user)} {
				u.add(r)
			}
		}
	}
	if err := e.backend.Write(ctx, &analytics.Batch{ID: "batch-scope", Records: recs}); err != nil {
		t.Fatal(err)
	}

	checkStats := func(user, query string, want *usage) {
		t.Helper()
		path := "/admin/v1/stats"
		if query != "" {
			path += "?" + query
		}
		status, st := e.do(user, "GET", path, "")
		if status != 200 {
			t.Errorf("GET %s as %s: status %d %v, want 200", path, user, status, st)
			return
		}
		if want == nil {
			want = &usage{}
		}
		got := usage{requests: int64(st["requests"].(float64)), errors: int64(st["errors"].(float64)),
			tokensIn: int64(st["tokens_in"].(float64)), cost: money.FromFloat(st["cost_usd"].(float64))}
		if got != *want {
			t.Errorf("GET %s as %s: requests %d, errors %d, tokens_in %d, cost %v; want %d, %d, %d, %v",
				path, user, got.requests, got.errors, got.tokensIn, got.cost, want.requests, want.errors, want.tokensIn, want.cost)
		}
		// The time series follows the same scope.
		tsPath := "/admin/v1/stats/timeseries?interval=hour"
		if query != "" {
			tsPath += "&" + query
		}
		status, ts := e.do(user, "GET", tsPath, "")
		if status != 200 {
			t.Errorf("GET %s as %s: status %d, want 200", tsPath, user, status)
			return
		}
		var n, in int64
		for _, p := range ts["points"].([]any) {
			n += int64(p.(map[string]any)["requests"].(float64))
			in += int64(p.(map[string]any)["tokens_in"].(float64))
		}
		if n != want.requests || in != want.tokensIn {
			t.Errorf("GET %s as %s: %d requests and %d tokens in over the points, want %d and %d", tsPath, user, n, in, want.requests, want.tokensIn)
		}
	}
	notFound := func(user, path string) {
		t.Helper()
		if status, out := e.do(user, "GET", path, ""); status != 404 {
			t.Errorf("GET %s as %s: status %d %v, want 404", path, user, status, out)
		}
	}
	forbidden := func(user, path string) {
		t.Helper()
		if status, out := e.do(user, "GET", path, ""); status != 403 {
			t.Errorf("GET %s as %s: status %d %v, want 403", path, user, status, out)
		}
	}

	t.Run("member", func(t *testing.T) {
		// Both of acme-m1's tokens, nothing of acme-m2, the gateway token
		// or the tenant administrator.
		checkStats("acme-m1", "", byUser["acme-m1"])
		checkStats("acme-m1", "tenant=acme", byUser["acme-m1"])
		checkStats("acme-m2", "", byUser["acme-m2"])
		checkStats("beta-m1", "", byUser["beta-m1"])
		notFound("acme-m1", "/admin/v1/stats?tenant=beta")
		notFound("acme-m1", "/admin/v1/stats/timeseries?tenant=beta")
		forbidden("acme-m1", "/admin/v1/logs")
	})
	t.Run("other roles below tenant administrator", func(t *testing.T) {
		// The AI Manager (View analytics dashboards) and Finance (View
		// cost breakdowns) see their whole tenant (docs/decisions.md,
		// "Stats scope for roles that read cost or analytics"); the Viewer holds neither and
		// no tokens, so it sees nothing.
		checkStats("acme-aim", "", byTenant["acme"])
		checkStats("acme-fin", "", byTenant["acme"])
		checkStats("acme-viewer", "", nil)
		notFound("acme-fin", "/admin/v1/stats?tenant=beta")
		notFound("acme-viewer", "/admin/v1/stats?tenant=beta")
	})
	t.Run("tenant administrator", func(t *testing.T) {
		checkStats("acme-ta", "", byTenant["acme"])
		checkStats("acme-ta", "tenant=acme", byTenant["acme"])
		checkStats("beta-ta", "", byTenant["beta"])
		notFound("acme-ta", "/admin/v1/stats?tenant=beta")
		notFound("acme-ta", "/admin/v1/stats/timeseries?tenant=beta")
		notFound("beta-ta", "/admin/v1/stats?tenant=acme")
	})
	t.Run("administrator", func(t *testing.T) {
		checkStats("admin", "", &all)
		checkStats("admin", "tenant=acme", byTenant["acme"])
		checkStats("admin", "tenant=beta", byTenant["beta"])
		checkStats("admin", "tenant=platform", nil)
		notFound("admin", "/admin/v1/stats?tenant=nope")
	})

	// listLogs reads every log of path (following cursors) and returns
	// their ids.
	listLogs := func(user, path string) []string {
		t.Helper()
		var out []string
		cursor := ""
		for {
			p := path
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			p += sep + "limit=7"
			if cursor != "" {
				p += "&cursor=" + url.QueryEscape(cursor)
			}
			status, body := e.do(user, "GET", p, "")
			if status != 200 {
				t.Fatalf("GET %s as %s: status %d %v", p, user, status, body)
			}
			for _, x := range body["data"].([]any) {
				out = append(out, x.(map[string]any)["id"].(string))
			}
			next, _ := body["next_cursor"].(string)
			if next == "" {
				return out
			}
			cursor = next
		}
	}
	sameIDs := func(what string, got, want []string) {
		t.Helper()
		g, w := map[string]bool{}, map[string]bool{}
		for _, id := range got {
			if g[id] {
				t.Errorf("%s: log %s listed twice", what, id)
			}
			g[id] = true
		}
		for _, id := range want {
			w[id] = true
			if !g[id] {
				t.Errorf("%s: log %s missing", what, id)
			}
		}
		for id := range g {
			if !w[id] {
				t.Errorf("%s: log %s listed, not in scope", what, id)
			}
		}
	}
	t.Run("logs", func(t *testing.T) {
		sameIDs("acme tenant administrator", listLogs("acme-ta", "/admin/v1/logs"), ids["acme"])
		sameIDs("acme tenant administrator, ?tenant=acme", listLogs("acme-ta", "/admin/v1/logs?tenant=acme"), ids["acme"])
		sameIDs("beta tenant administrator", listLogs("beta-ta", "/admin/v1/logs"), ids["beta"])
		notFound("acme-ta", "/admin/v1/logs?tenant=beta")
		// A user filter stays inside the tenant: another tenant's user
		// matches nothing.
		if got := listLogs("acme-ta", "/admin/v1/logs?user="+e.users["acme-m1"]); len(got) != int(byUser["acme-m1"].requests) {
			t.Errorf("acme tenant administrator, ?user=acme-m1: %d logs, want %d", len(got), byUser["acme-m1"].requests)
		}
		if got := listLogs("acme-ta", "/admin/v1/logs?user="+e.users["beta-m1"]); len(got) != 0 {
			t.Errorf("acme tenant administrator, ?user=beta-m1: %d logs, want none", len(got))
		}
		// One log of the other tenant by id: 404.
		notFound("acme-ta", "/admin/v1/logs/"+ids["beta"][0])
		if status, _ := e.do("acme-ta", "GET", "/admin/v1/logs/"+ids["acme"][0], ""); status != 200 {
			t.Errorf("acme tenant administrator reads an acme log: status %d", status)
		}

		sameIDs("administrator", listLogs("admin", "/admin/v1/logs"), append(append([]string{}, ids["acme"]...), ids["beta"]...))
		sameIDs("administrator, ?tenant=beta", listLogs("admin", "/admin/v1/logs?tenant=beta"), ids["beta"])
		if status, _ := e.do("admin", "GET", "/admin/v1/logs/"+ids["beta"][0], ""); status != 200 {
			t.Errorf("administrator reads a beta log: status %d", status)
		}
		notFound("admin", "/admin/v1/logs?tenant=nope")
		forbidden("acme-aim", "/admin/v1/logs")
		forbidden("acme-fin", "/admin/v1/logs")
	})
}

// usageOf returns m[k], adding it when missing.
func usageOf(m map[string]*usage, k string) *usage {
	u, ok := m[k]
	if !ok {
		u = &usage{}
		m[k] = u
	}
	return u
}
