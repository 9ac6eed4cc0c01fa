package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const testAdminToken = "sk-sl-cmdTestAdminToken000000000000000000"

// TestServeFreshDataDir runs `sluice serve` as the README's first command
// does (embedded stores, no flags but a free port) and walks the issue's
// acceptance path: /healthz, then the bootstrap Administrator creates a
// tenant, a gateway, a provider key, a user and a token over REST and the
// same over GraphQL.
func TestServeFreshDataDir(t *testing.T) {
	dir := t.TempDir()
	addr := freePort(t)
	t.Setenv("SLUICE_ADMIN_TOKEN", testAdminToken)
	t.Setenv("SLUICE_DATA_DIR", filepath.Join(dir, "sluice-data"))
	t.Setenv("SLUICE_LISTEN", addr)
	t.Setenv("SLUICE_ALLOW_PRIVATE_UPSTREAMS", "true")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"serve"})
		done <- cmd.ExecuteContext(ctx)
	}()
	base := "http://" + addr
	waitHealthy(t, base)

	// REST.
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod","name":"Production"}`, 201)
	key := call(t, base, "POST", "/admin/v1/gateways/"+gw["id"].(string)+"/keys",
		`{"provider":"openai","alias":"main","key":"sk-live-abcdefghijklmnop1234","base_url":"http://127.0.0.1:9/v1"}`, 201)
	if key["last4"] != "1234" || key["key"] != nil {
		t.Errorf("key response %v: want last4 1234 and no key", key)
	}
	u := call(t, base, "POST", "/admin/v1/tenants/acme/users", `{"email":"dev@acme.test","name":"Dev","role":"member"}`, 201)
	tok := call(t, base, "POST", "/admin/v1/users/"+u["id"].(string)+"/tokens", `{"name":"laptop"}`, 201)
	if s, _ := tok["secret"].(string); len(s) != 46 {
		t.Errorf("token secret %q: want sk-sl- and 40 characters", s)
	}

	// GraphQL.
	gql := func(q string) map[string]any {
		body, _ := json.Marshal(map[string]string{"query": q})
		out := call(t, base, "POST", "/admin/graphql", string(body), 200)
		if out["errors"] != nil {
			t.Fatalf("GraphQL %s: %v", q, out["errors"])
		}
		return out["data"].(map[string]any)
	}
	gql(`mutation { createTenant(input: {id: "beta", name: "Beta"}) { id } }`)
	g := gql(`mutation { createGateway(tenantId: "beta", input: {slug: "prod"}) { id slug } }`)["createGateway"].(map[string]any)
	gid := g["id"].(string)
	k := gql(fmt.Sprintf(`mutation { addProviderKey(gatewayId: %q, input: {provider: "openai", alias: "main", key: "sk-live-zyxwvutsrqpo9876", baseUrl: "http://127.0.0.1:9/v1"}) { alias last4 } }`, gid))
	if k["addProviderKey"].(map[string]any)["last4"] != "9876" {
		t.Errorf("GraphQL key: %v", k)
	}
	nu := gql(`mutation { createUser(tenantId: "beta", input: {email: "dev@beta.test", role: "member"}) { id } }`)["createUser"].(map[string]any)
	nt := gql(fmt.Sprintf(`mutation { createUserToken(userId: %q, input: {name: "ci"}) { id secret } }`, nu["id"]))
	if s, _ := nt["createUserToken"].(map[string]any)["secret"].(string); len(s) != 46 {
		t.Errorf("GraphQL token: %v", nt)
	}

	// The data dir holds the store and the master key, owner-only.
	for _, f := range []string{"sluice.db", "master.key"} {
		fi, err := os.Stat(filepath.Join(dir, "sluice-data", f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("sluice did not become healthy")
}

func call(t *testing.T, base, method, path, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

// TestMigrateAndTokenCreate covers `sluice migrate` and the recovery path
// `sluice token create --user EMAIL`.
func TestMigrateAndTokenCreate(t *testing.T) {
	t.Setenv("SLUICE_DATA_DIR", t.TempDir())
	t.Setenv("SLUICE_ADMIN_TOKEN", "")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := newRootCmd()
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		err := cmd.ExecuteContext(context.Background())
		return out.String(), err
	}
	if out, err := run("migrate"); err != nil || out == "" {
		t.Fatalf("migrate: %q %v", out, err)
	}
	if _, err := run("token", "create", "--user", "admin@localhost"); err == nil {
		t.Fatal("token create for a user that does not exist: got no error")
	}
	var c config
	c.DataDir = os.Getenv("SLUICE_DATA_DIR")
	c.LogLevel, c.LogFormat = "info", "text"
	svc, closeFn, err := openService(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	closeFn()
	out, err := run("token", "create", "--user", "admin@localhost", "--name", "recovery")
	if err != nil {
		t.Fatal(err)
	}
	secret := string(bytes.TrimSpace([]byte(out)))
	if len(secret) != 46 || secret[:6] != "sk-sl-" {
		t.Fatalf("token create printed %q, want one sk-sl- token", out)
	}
	svc, closeFn, err = openService(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	p, err := svc.Authenticate(context.Background(), secret)
	if err != nil || p.Email != "admin@localhost" {
		t.Fatalf("minted token does not authenticate: %v %+v", err, p)
	}
}

func postJSON(t *testing.T, url, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}
