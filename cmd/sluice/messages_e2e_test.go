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
// mock (compatMatrix). internal/e2e/node/messages.test.mjs runs
// messages.create plain and streamed per provider, a tool call round trip
// and a streamed tool call, an image block, JSON output by
// output_config.format (refused on Bedrock) and by a forced tool,
// count_tokens, and the SDK's exceptions for 401, 404, 429 and 400. The
// mock's log then shows that the translated requests reached each
// provider's native path.
func TestMessagesClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "@anthropic-ai", "sdk")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	matrix := compatMatrix()
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gwID := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)["id"].(string)
	addMatrixKeys(t, base, gwID, mockURL, matrix)
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
	if want := 7*len(matrix) + 2; tests < want || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least %d, all passing", tests, pass, want)
	}

	// Each provider's native chat path was called, translated.
	checkTranslatedUpstreams(t, mock.Requests(), matrix)
}

// compatMatrix is the provider matrix of the translating doors' end-to-end
// tests: every adapter, each with a key on the mock. Every one calls
// tools and takes images; all but Bedrock take JSON output.
func compatMatrix() []e2eProvider {
	return []e2eProvider{
		{Provider: "openai", Chat: "gpt-4o-mini", Tools: true, Vision: true, JSON: true, key: e2eOpenAIKey},
		{Provider: "anthropic", Chat: "claude-sonnet-4-5", Tools: true, Vision: true, JSON: true, key: e2eAnthropicKey},
		{Provider: "google", Chat: "gemini-2.5-flash", Tools: true, Vision: true, JSON: true, key: e2eGoogleKey},
		{Provider: "bedrock", Chat: "amazon.nova-lite-v1:0", Tools: true, Vision: true, key: providertest.MockSecretAccessKey,
			options: fmt.Sprintf(`{"region":"us-east-1","access_key_id":%q}`, providertest.MockAccessKeyID)},
		{Provider: "azure-openai", Chat: "gpt-4o-mini", Tools: true, Vision: true, JSON: true, key: e2eAzureKey,
			options: `{"api_version":"2024-10-21","deployments":{"gpt-4o-mini":"chat-dep"}}`},
		{Provider: "cohere", Chat: "command-a-03-2025", Tools: true, Vision: true, JSON: true, key: e2eCohereKey},
	}
}

// addMatrixKeys gives gateway gwID a key for each provider of matrix, on
// the mock at mockURL.
func addMatrixKeys(t *testing.T, base, gwID, mockURL string, matrix []e2eProvider) {
	t.Helper()
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
}

// upstreamProvider names the provider whose native chat path a mock
// request was sent to, "" for any other path.
func upstreamProvider(path string) string {
	switch {
	case path == "/v1/chat/completions":
		return "openai"
	case path == "/v1/messages":
		return "anthropic"
	case strings.HasPrefix(path, "/v1beta/models/gemini-2.5-flash:"):
		return "google"
	case strings.HasPrefix(path, "/model/amazon.nova-lite-v1:0/converse"):
		return "bedrock"
	case strings.HasPrefix(path, "/openai/deployments/chat-dep/"):
		return "azure-openai"
	case path == "/v2/chat":
		return "cohere"
	}
	return ""
}

// checkTranslatedUpstreams checks that each provider of matrix was called
// on its native chat path, that the image of the node tests (a PNG,
// base64 in every wire) reached each provider that takes images, and that
// nothing went to OpenAI's /responses.
func checkTranslatedUpstreams(t *testing.T, reqs []providertest.Recorded, matrix []e2eProvider) {
	t.Helper()
	const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
	seen, image := map[string]bool{}, map[string]bool{}
	for _, r := range reqs {
		p := upstreamProvider(r.Path)
		seen[p] = true
		image[p] = image[p] || strings.Contains(string(r.Body), pngBase64)
		if strings.HasSuffix(r.Path, "/responses") {
			t.Errorf("a translated request went to %s", r.Path)
		}
	}
	for _, p := range matrix {
		if !seen[p.Provider] {
			t.Errorf("the mock saw no %s chat request", p.Provider)
		}
		if p.Vision && !image[p.Provider] {
			t.Errorf("no %s request carried the image", p.Provider)
		}
	}
}
