package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestOpenAIClientModelsList drives `sluice serve` with the official openai
// npm client's models.list() (internal/e2e/node/models.test.mjs): the
// /compat and provider lists, a restricted token's, and a bad token's
// AuthenticationError. No request reaches the provider.
func TestOpenAIClientModelsList(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	base := startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways",
		`{"slug":"prod","routes":[{"name":"smart","strategy":"fallback","targets":[{"provider":"openai","model":"gpt-4o-mini"}]}]}`, 201)
	gwID := gw["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"mock","key":"sk-mock-upstream-key-0001","base_url":%q}`, mockURL+"/v1"), 201)
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"e2e"}`, 201)
	restricted := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens",
		`{"name":"restricted","allowed_models":["openai/gpt-4o-mini"]}`, 201)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", tok["secret"].(string))
	before := mock.Count()

	out, err := runNodeTests(ctx, t, nodeDir, "models.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string),
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
