// Package e2e drives the whole admin API over HTTP — REST shims and
// GraphQL on real stores — as each of the seven roles.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

const adminToken = "sk-sl-e2eAdminToken0000000000000000000000"

// env is a running admin API with one user per role in tenant "acme".
type env struct {
	t     *testing.T
	srv   *httptest.Server
	creds map[auth.Role]string // role → bearer secret
	ids   map[auth.Role]string // role → user id
	vars  map[string]string    // placeholders shared by every call
	seq   atomic.Int64
}

func newEnv(t *testing.T, b testenv.Backend) *env {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t, b)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true, KeyTester: okTester{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SeedPrices(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	h := rest.NewAdmin(svc, rest.AdminOptions{GraphQL: graph.NewHandler(svc, graph.Options{})})
	e := &env{t: t, srv: httptest.NewServer(h), creds: map[auth.Role]string{auth.Administrator: adminToken},
		ids: map[auth.Role]string{}, vars: map[string]string{}}
	t.Cleanup(e.srv.Close)

	me := e.must("GET", "/admin/v1/me", "", auth.Administrator)
	e.ids[auth.Administrator] = me["id"].(string)
	e.must("POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, auth.Administrator)
	gw := e.must("POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod","name":"Prod"}`, auth.Administrator)
	e.vars["gw"] = gw["id"].(string)
	for _, r := range auth.Roles[1:] {
		email := strings.ReplaceAll(string(r), "_", "-") + "@acme.test"
		u := e.must("POST", "/admin/v1/tenants/acme/users",
			fmt.Sprintf(`{"email":%q,"role":%q,"password":"correct horse battery"}`, email, r), auth.Administrator)
		e.ids[r] = u["id"].(string)
		s := e.must("POST", "/admin/v1/session", fmt.Sprintf(`{"email":%q,"password":"correct horse battery"}`, email), "")
		e.creds[r] = s["token"].(string)
	}
	e.must("POST", "/admin/v1/users/"+e.ids[auth.Member]+"/gateways/"+e.vars["gw"], "", auth.Administrator)
	target := e.must("POST", "/admin/v1/tenants/acme/users", `{"email":"target@acme.test","role":"member"}`, auth.Administrator)
	e.vars["user"] = target["id"].(string)
	rule := e.must("POST", "/admin/v1/gateways/"+e.vars["gw"]+"/rules",
		`{"name":"r","kind":"keyword","patterns":["secret"],"action":"flag"}`, auth.Administrator)
	e.vars["rule"] = rule["id"].(string)
	tok := e.must("POST", "/admin/v1/gateways/"+e.vars["gw"]+"/tokens", `{"name":"t"}`, auth.Administrator)
	e.vars["gwtoken"] = tok["id"].(string)
	return e
}

// fresh returns a new unique suffix for resources a call creates.
func (e *env) fresh() string { return fmt.Sprintf("n%d", e.seq.Add(1)) }

// do sends a request as role ("" for no credential) and returns the status
// and the decoded JSON body.
func (e *env) do(method, path, body string, role auth.Role) (int, map[string]any) {
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
	if role != "" {
		req.Header.Set("Authorization", "Bearer "+e.creds[role])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: body is not JSON: %s", method, path, raw)
		}
	}
	return res.StatusCode, out
}

// must sends a request that has to succeed.
func (e *env) must(method, path, body string, role auth.Role) map[string]any {
	e.t.Helper()
	status, out := e.do(method, path, body, role)
	if status >= 300 {
		e.t.Fatalf("%s %s as %s: status %d: %v", method, path, role, status, out)
	}
	return out
}

// gql runs a GraphQL operation as role and returns the HTTP status, the
// data and the extension codes of the errors.
func (e *env) gql(query string, role auth.Role) (int, map[string]any, []string) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	status, out := e.do("POST", "/admin/graphql", string(body), role)
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

// okTester answers every key test ok without calling anyone: the
// transports' tests check who may test a key, cmd/sluice's the call.
type okTester struct{}

func (okTester) TestKey(context.Context, admin.KeyProbe) error { return nil }
