package main

import (
	"context"
	"strings"
	"testing"
)

// TestOpenAIClientModelsList drives `sluice serve` with the official openai
// npm client's models.list() (internal/e2e/node/models.test.mjs): the
// /compat and provider lists, a restricted token's, and a bad token's
// AuthenticationError. No request reaches the provider.
func TestOpenAIClientModelsList(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	gwID, tok := serveGateway(t, base, mockURL,
		`{"slug":"prod","routes":[{"name":"smart","strategy":"fallback","targets":[{"provider":"openai","model":"gpt-4o-mini"}]}]}`, "e2e")
	restricted := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens",
		`{"name":"restricted","allowed_models":["openai/gpt-4o-mini"]}`, 201)
	before := mock.Count()

	out, err := runNodeTests(ctx, t, nodeDir, "models.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok,
		"SLUICE_RESTRICTED_TOKEN="+restricted["secret"].(string))
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	if !strings.Contains(string(out), "pass 4") {
		t.Fatalf("expected 4 passing openai client tests")
	}
	if n := mock.Count() - before; n != 0 {
		t.Fatalf("mock provider saw %d requests for model listings, want 0", n)
	}
}
