package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestMessagesClientEndToEnd drives `sluice serve` with the official
// @anthropic-ai/sdk npm client on the Anthropic Messages door
// (/compat/v1/messages): one gateway with a key for each of openai,
// anthropic, google, bedrock, azure-openai and cohere, all pointing at the
// mock. internal/e2e/node/messages.test.mjs runs messages.create plain and
// streamed per provider, a tool call round trip and a streamed tool call
// where the mock calls tools, count_tokens, and the SDK's exceptions for
// 401, 404, 429 and 400. The mock's log then shows that the translated
// requests reached each provider's native path.
func TestMessagesClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "@anthropic-ai", "sdk")
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
		{Provider: "google", Chat: "gemini-2.5-flash", key: e2eGoogleKey},
		{Provider: "bedrock", Chat: "amazon.nova-lite-v1:0", Tools: true, key: providertest.MockSecretAccessKey,
			options: fmt.Sprintf(`{"region":"us-east-1","access_key_id":%q}`, providertest.MockAccessKeyID)},
		{Provider: "azure-openai", Chat: "gpt-4o-mini", key: e2eAzureKey,
			options: `{"api_version":"2024-10-21","deployments":{"gpt-4o-mini":"chat-dep"}}`},
		{Provider: "cohere", Chat: "command-a-03-2025", Tools: true, key: e2eCohereKey},
	}
	base := startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gwID := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)["id"].(string)
	for _, p := range matrix {
		baseURL := mockURL
		if p.Provider == "openai" {
			baseURL += "/v1"
		}
		body := fmt.Sprintf(`{"provider":%q,"alias":"mock","key":%q,"base_url":%q`, p.Provider, p.key, baseURL)
		if p.options != "" {
			body += `,"options":` + p.options
		}
		call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys", body+"}", 201)
	}
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"e2e"}`, 201)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", tok["secret"].(string))
	mock.Reset()

	m, err := json.Marshal(matrix)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNodeTests(ctx, t, nodeDir, "messages.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string),
		"SLUICE_PROVIDERS="+string(m))
	if err != nil {
		t.Fatalf("the @anthropic-ai/sdk client tests failed: %v", err)
	}
	tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass")
	if want := 2*len(matrix) + 2; tests < want || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least %d, all passing", tests, pass, want)
	}

	// Each provider's native chat path was called, translated.
	seen := map[string]bool{}
	for _, r := range mock.Requests() {
		switch {
		case r.Path == "/v1/chat/completions":
			seen["openai"] = true
		case r.Path == "/v1/messages":
			seen["anthropic"] = true
		case strings.HasPrefix(r.Path, "/v1beta/models/gemini-2.5-flash:"):
			seen["google"] = true
		case strings.HasPrefix(r.Path, "/model/amazon.nova-lite-v1:0/converse"):
			seen["bedrock"] = true
		case strings.HasPrefix(r.Path, "/openai/deployments/chat-dep/"):
			seen["azure-openai"] = true
		case r.Path == "/v2/chat":
			seen["cohere"] = true
		}
	}
	for _, p := range matrix {
		if !seen[p.Provider] {
			t.Errorf("the mock saw no %s chat request", p.Provider)
		}
	}
}
