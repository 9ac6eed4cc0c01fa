package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOversizedBodyRealClients sends an 11 MiB request to `sluice serve`
// with real clients: Python's standard library, which writes the whole
// body before reading the answer (internal/e2e/python/oversized_body.py; it saw
// "Connection reset by peer" when the server closed the connection it had
// not read), and the official openai npm client (internal/e2e/node/limits.test.mjs).
// Each must read the 413 body_too_large, not fail with a connection error
// (which the SDKs retry).
func TestOversizedBodyRealClients(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, mockURL, base := startMockServe(t, ctx)
	_, tok := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "e2e")

	t.Run("python", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			needTool(t, "python3 is not installed")
		}
		script, err := filepath.Abs("../../internal/e2e/python/oversized_body.py")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, "python3", script, base+"/v1/acme/prod/compat/chat/completions", tok).CombinedOutput()
		if err != nil {
			t.Fatalf("python3 oversized_body.py: %v\n%s", err, out)
		}
	})

	t.Run("openai npm client", func(t *testing.T) {
		nodeDir := nodeE2EDir(t, "openai")
		out, err := runNodeTests(ctx, t, nodeDir, "limits.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok)
		if err != nil {
			t.Fatalf("the openai client tests failed: %v", err)
		}
		if tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass"); tests != 2 || pass != 2 {
			t.Fatalf("node ran %d tests, %d passed; want 2 passing", tests, pass)
		}
	})
}
