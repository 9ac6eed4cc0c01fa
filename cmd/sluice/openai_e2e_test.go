package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestOpenAIClientEndToEnd drives `sluice serve` with the official openai
// npm client (internal/e2e/node), against the project's mock provider: chat plain
// and streamed, completions and embeddings, through /compat and a provider
// path, and a bad token. scripts/test.sh installs the client (npm ci).
func TestOpenAIClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	_, tok := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "e2e")

	out, err := runNodeTests(ctx, t, nodeDir, "openai.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok)
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	if !strings.Contains(string(out), "pass 8") {
		t.Fatalf("expected 8 passing openai client tests")
	}
	if n := mock.Count(); n < 8 {
		t.Fatalf("mock provider saw %d requests, want at least 8", n)
	}
	for _, r := range mock.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-mock-upstream-key-0001" {
			t.Fatalf("upstream Authorization %q, want the provider key", got)
		}
	}
}

// nodeE2EDir returns internal/e2e/node, where the end-to-end tests with
// the official npm clients live, once node and the npm package pkg (its
// path under node_modules) are installed; needTool otherwise.
func nodeE2EDir(t *testing.T, pkg ...string) string {
	t.Helper()
	dir, err := filepath.Abs("../../internal/e2e/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		needTool(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(append([]string{dir, "node_modules"}, pkg...)...)); err != nil {
		needTool(t, fmt.Sprintf("the %s npm package is not installed: run `npm ci` in internal/e2e/node (make test does)", strings.Join(pkg, "/")))
	}
	return dir
}

// runNodeTests runs `node --test` on file in dir with env added to the
// environment, logs what it printed and returns it with node's error.
func runNodeTests(ctx context.Context, t *testing.T, dir, file string, env ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-reporter=spec", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s:\n%s", file, out)
	return out, err
}

// needTool skips a test that needs a tool the test command installs, and
// fails it under CI=true, where nothing may be skipped.
func needTool(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// startServe runs `sluice serve` in-process on a free port with a fresh
// data dir and returns its base URL.
func startServe(t *testing.T, ctx context.Context) string {
	t.Helper()
	addr := freePort(t)
	t.Setenv("SLUICE_ADMIN_TOKEN", testAdminToken)
	t.Setenv("SLUICE_DATA_DIR", filepath.Join(t.TempDir(), "data"))
	t.Setenv("SLUICE_LISTEN", addr)
	t.Setenv("SLUICE_ALLOW_PRIVATE_UPSTREAMS", "true")
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"serve"})
		done <- cmd.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	base := "http://" + addr
	waitHealthy(t, base)
	return base
}

// startMockServe starts the mock provider and `sluice serve`, both
// stopped when the test ends, and returns the mock, its URL and serve's
// base URL.
func startMockServe(t *testing.T, ctx context.Context) (*providertest.Server, string, string) {
	t.Helper()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	return mock, mockURL, startServe(t, ctx)
}

// serveGateway creates the tenant acme and its gateway (gateway is the
// gateway's JSON, its slug "prod"), an openai key to the mock (waitServing
// sends a chat to openai) and the keys of more, and a token tokenName;
// it waits until the gateway serves and returns its id and the token.
func serveGateway(t *testing.T, base, mockURL, gateway, tokenName string, more ...e2eProvider) (gwID, token string) {
	t.Helper()
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gwID = call(t, base, "POST", "/admin/v1/tenants/acme/gateways", gateway, 201)["id"].(string)
	addMatrixKeys(t, base, gwID, mockURL, append([]e2eProvider{{Provider: "openai", key: e2eOpenAIKey}}, more...))
	token = call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", fmt.Sprintf(`{"name":%q}`, tokenName), 201)["secret"].(string)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", token)
	return gwID, token
}

// waitServing waits until the proxy's snapshot has the new gateway and
// token (it refreshes right after each admin write, asynchronously).
func waitServing(t *testing.T, url, token string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		status := postJSON(t, url, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"ping"}]}`)
		if status == 200 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the gateway did not start serving the new configuration")
}
