package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestCompatResponsesClientEndToEnd drives `sluice serve`'s translated
// Responses door (/compat/responses) with the official openai npm client
// (internal/e2e/node/compat-responses.test.mjs) against the mock, for an
// OpenAI-wire and an Anthropic target: responses.create plain and
// streamed, the stream helper, a function call round trip and a streamed
// function call on Anthropic, the SDK's exceptions (401, 429, unknown
// model, refused stateful and built-in features) and a stream cut short.
// The mock's log then shows the translated requests reached each
// provider's chat path, never /responses.
func TestCompatResponsesClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	matrix := []e2eProvider{
		{Provider: "openai", Chat: "gpt-4o-mini", key: e2eOpenAIKey},
		{Provider: "anthropic", Chat: "claude-sonnet-4-5", Tools: true, key: e2eAnthropicKey},
	}
	base := startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gwID := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)["id"].(string)
	for _, p := range matrix {
		baseURL := mockURL
		if p.Provider == "openai" {
			baseURL += "/v1"
		}
		call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
			fmt.Sprintf(`{"provider":%q,"alias":"mock","key":%q,"base_url":%q}`, p.Provider, p.key, baseURL), 201)
	}
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"e2e"}`, 201)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", tok["secret"].(string))
	mock.Reset()

	m, err := json.Marshal(matrix)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNodeTests(ctx, t, nodeDir, "compat-responses.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string),
		"SLUICE_PROVIDERS="+string(m))
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass")
	if want := 3*len(matrix) + 2 + 2; tests < want || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least %d, all passing", tests, pass, want)
	}
	seen := map[string]int{}
	for _, r := range mock.Requests() {
		seen[r.Path]++
	}
	if seen["/v1/chat/completions"] == 0 || seen["/v1/messages"] == 0 || seen["/v1/responses"] != 0 {
		t.Errorf("upstream paths %v: want chat completions and messages, no /responses", seen)
	}
}
