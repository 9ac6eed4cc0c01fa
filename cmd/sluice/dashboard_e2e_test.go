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
)

// chromiumPath is Debian's Chromium, which the dashboard's end-to-end test
// drives through playwright-core (no browser download).
const chromiumPath = "/usr/bin/chromium"

// TestDashboardEndToEnd runs the dashboard's browser test (web/e2e/run.mjs)
// against `sluice serve` with the embedded dashboard and the mock provider:
// sign-in by token and by password, tenant (with its budget), gateway, key, route, rule,
// token (with its budget) and budget created through the UI, a streamed Playground chat, one
// Playground request through each door (chat, Messages and Responses on
// /compat, the native Anthropic and OpenAI doors) found in Logs with its
// operation, a log and its trace, the Overview figures, the Member view, Finance landing on
// Spend and exporting last week's spend per token as CSV, and the
// read-only demo. It builds nothing: scripts/test.sh builds web/dist and
// installs web/node_modules first; without them (or Chromium) it skips, and
// under CI=true it fails.
func TestDashboardEndToEnd(t *testing.T) {
	webDir, err := filepath.Abs("../../web")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		needTool(t, "node is not installed")
	}
	for _, need := range []struct{ path, why string }{
		{filepath.Join(webDir, "dist", "index.html"), "the dashboard is not built: run `make web` (cd web && npm ci && npm run build)"},
		{filepath.Join(webDir, "node_modules", "playwright-core"), "playwright-core is not installed: run `npm ci` in web/"},
		{chromiumPath, "Chromium is not installed: apt-get install chromium (scripts/test.sh does)"},
	} {
		if _, err := os.Stat(need.path); err != nil {
			needTool(t, need.why)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	const password = "admin-password-for-e2e"
	me := call(t, base, "GET", "/admin/v1/me", "", 200)
	call(t, base, "PATCH", "/admin/v1/users/"+me["id"].(string), fmt.Sprintf(`{"password":%q}`, password), 200)

	artifacts := filepath.Join(webDir, "e2e", "artifacts")
	runCtx, stop := context.WithTimeout(ctx, 8*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, "node", filepath.Join("e2e", "run.mjs"))
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(),
		"SLUICE_URL="+base,
		"SLUICE_ADMIN_TOKEN="+testAdminToken,
		"SLUICE_ADMIN_PASSWORD="+password,
		"MOCK_URL="+mockURL,
		"E2E_ARTIFACTS="+artifacts,
		"CHROMIUM="+chromiumPath,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node e2e/run.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the dashboard end-to-end test failed (%v); screenshots in %s", err, artifacts)
	}
	if !strings.Contains(string(out), "steps passed") {
		t.Fatal("run.mjs ended without reporting its steps")
	}
	if n := mock.Count(); n < 2 {
		t.Errorf("the mock provider saw %d requests, want the Playground's chats", n)
	}
}
