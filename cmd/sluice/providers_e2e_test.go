package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// e2eProvider is one provider of the end-to-end matrix, as
// internal/e2e/node/providers.test.mjs reads it from SLUICE_PROVIDERS.
type e2eProvider struct {
	Provider string `json:"provider"`
	// Chat and Embedding are the provider's own model ids; Embedding is ""
	// for a provider without embeddings.
	Chat      string `json:"chat"`
	Embedding string `json:"embedding"`
	// Tools is true when the tests call tools: every wire format's mock
	// answers a request whose tool choice forces a call by calling the
	// tool (Anthropic and Cohere whenever there are tools).
	Tools bool `json:"tools"`
	// Vision and JSON say whether the adapter takes images in user
	// messages and a json_object response_format (Bedrock refuses it).
	Vision bool `json:"vision"`
	JSON   bool `json:"json"`

	// The key's create body fields; not part of the JSON.
	key     string
	options string // JSON, "" for none
}

// The provider keys: each its own, so that the upstream requests show
// which key each adapter sent.
const (
	e2eOpenAIKey    = "sk-mock-upstream-key-0001"
	e2eAnthropicKey = "sk-ant-mock-key-00000001"
	e2eGoogleKey    = "AIzaMockGoogleKey000000001"
	e2eAzureKey     = "azuremockkey00000000000001"
	e2eCohereKey    = "co-mock-cohere-key-000001"
)

// TestProvidersClientEndToEnd drives `sluice serve` with the official
// openai npm client against every native provider's wire format, spoken
// by the project's mock provider: one gateway with a key for each of
// openai, anthropic, google, bedrock, azure-openai and cohere, all
// pointing at the mock. internal/e2e/node/providers.test.mjs runs chat (plain and
// streamed, with and without the usage chunk), a tool call round trip
// where the mock calls tools, embeddings where the provider has them, and
// the 400s of features a provider cannot serve, through each provider
// path and through /compat. Then the mock's log shows that each adapter
// called its provider's native path with its native authentication.
func TestProvidersClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	matrix := []e2eProvider{
		{Provider: "openai", Chat: "gpt-4o-mini", Embedding: "text-embedding-3-small", Tools: true, Vision: true, JSON: true,
			key: e2eOpenAIKey},
		{Provider: "anthropic", Chat: "claude-sonnet-4-5", Tools: true, Vision: true, JSON: true, key: e2eAnthropicKey},
		{Provider: "google", Chat: "gemini-2.5-flash", Embedding: "gemini-embedding-001", Tools: true, Vision: true, JSON: true,
			key: e2eGoogleKey},
		{Provider: "bedrock", Chat: "amazon.nova-lite-v1:0", Embedding: "amazon.titan-embed-text-v2:0", Tools: true, Vision: true,
			key:     providertest.MockSecretAccessKey,
			options: fmt.Sprintf(`{"region":"us-east-1","access_key_id":%q}`, providertest.MockAccessKeyID)},
		{Provider: "azure-openai", Chat: "gpt-4o-mini", Embedding: "text-embedding-3-small", Tools: true, Vision: true, JSON: true,
			key:     e2eAzureKey,
			options: `{"api_version":"2024-10-21","deployments":{"gpt-4o-mini":"chat-dep","text-embedding-3-small":"emb-dep"}}`},
		{Provider: "cohere", Chat: "command-a-03-2025", Embedding: "embed-v4.0", Tools: true, Vision: true, JSON: true,
			key: e2eCohereKey},
	}

	base := startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)
	gwID := gw["id"].(string)
	for _, p := range matrix {
		baseURL := mockURL
		if p.Provider == "openai" {
			baseURL += "/v1" // OpenAI-style base URLs carry the version
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
	out, err := runNodeTests(ctx, t, nodeDir, "providers.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string),
		"SLUICE_PROVIDERS="+string(m))
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	// Every test that was registered passed, and there are at least chat
	// and a stream per provider and surface: a matrix the script did not
	// read would run nothing and still exit 0.
	tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass")
	if want := 2 * 2 * len(matrix); tests < want || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least %d, all passing", tests, pass, want)
	}

	checkUpstreamCalls(t, mock.Requests())
}

// nodeCount reads a count ("tests", "pass") from the summary of node's
// spec reporter ("ℹ pass 12"); -1 when it is missing.
func nodeCount(out []byte, name string) int {
	m := regexp.MustCompile(`(?m)^\S* ?` + name + ` (\d+)$`).FindSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// upstreamCall is what one provider's adapter must have sent: an
// operation on its native path, with its native authentication.
type upstreamCall struct {
	provider, op string
	match        func(path, query string) bool
}

// checkUpstreamCalls asserts that each provider's native paths were
// called (chat, stream and embeddings where the matrix has them) and that
// every request to a native path carried that provider's credential, in
// that provider's header, and no other.
func checkUpstreamCalls(t *testing.T, reqs []providertest.Recorded) {
	prefix := strings.HasPrefix
	want := []upstreamCall{
		{"openai", "chat", func(p, _ string) bool { return p == "/v1/chat/completions" }},
		{"openai", "embeddings", func(p, _ string) bool { return p == "/v1/embeddings" }},
		{"anthropic", "chat", func(p, _ string) bool { return p == "/v1/messages" }},
		{"google", "chat", func(p, _ string) bool { return p == "/v1beta/models/gemini-2.5-flash:generateContent" }},
		{"google", "stream", func(p, q string) bool {
			return p == "/v1beta/models/gemini-2.5-flash:streamGenerateContent" && q == "alt=sse"
		}},
		{"google", "embeddings", func(p, _ string) bool {
			return p == "/v1beta/models/gemini-embedding-001:embedContent" ||
				p == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
		}},
		{"bedrock", "chat", func(p, _ string) bool { return p == "/model/amazon.nova-lite-v1:0/converse" }},
		{"bedrock", "stream", func(p, _ string) bool { return p == "/model/amazon.nova-lite-v1:0/converse-stream" }},
		{"bedrock", "embeddings", func(p, _ string) bool { return p == "/model/amazon.titan-embed-text-v2:0/invoke" }},
		{"azure-openai", "chat", func(p, q string) bool {
			return p == "/openai/deployments/chat-dep/chat/completions" && q == "api-version=2024-10-21"
		}},
		{"azure-openai", "embeddings", func(p, q string) bool {
			return p == "/openai/deployments/emb-dep/embeddings" && q == "api-version=2024-10-21"
		}},
		{"cohere", "chat", func(p, _ string) bool { return p == "/v2/chat" }},
		{"cohere", "embeddings", func(p, _ string) bool { return p == "/v2/embed" }},
	}
	seen := map[string]int{}
	for _, r := range reqs {
		provider := ""
		switch {
		case r.Path == "/v1/chat/completions", r.Path == "/v1/embeddings", r.Path == "/v1/completions":
			provider = "openai"
		case r.Path == "/v1/messages":
			provider = "anthropic"
		case prefix(r.Path, "/v1beta/models/"):
			provider = "google"
		case prefix(r.Path, "/model/"):
			provider = "bedrock"
		case prefix(r.Path, "/openai/deployments/"):
			provider = "azure-openai"
		case prefix(r.Path, "/v2/"):
			provider = "cohere"
		default:
			t.Errorf("upstream request to an unknown path %s %s", r.Method, r.Path)
			continue
		}
		if msg := wrongAuth(provider, r); msg != "" {
			t.Errorf("%s request %s: %s", provider, r.Path, msg)
		}
		for _, w := range want {
			if w.provider == provider && w.match(r.Path, r.Query) {
				seen[w.provider+" "+w.op]++
			}
		}
		for _, tr := range translations {
			if tr.provider == provider && strings.Contains(string(r.Body), tr.body) {
				seen[tr.provider+" "+tr.what]++
			}
		}
	}
	for _, w := range want {
		if seen[w.provider+" "+w.op] == 0 {
			t.Errorf("the mock saw no %s %s request on the native path", w.provider, w.op)
		}
	}
	for _, tr := range translations {
		if seen[tr.provider+" "+tr.what] == 0 {
			t.Errorf("no %s request carried %s as %s", tr.provider, tr.what, tr.body)
		}
	}
	// The providers whose stream is the chat path with "stream": true.
	for _, p := range []string{"openai", "anthropic", "azure-openai", "cohere"} {
		if seen[p+" chat"] < 2 {
			t.Errorf("the mock saw %d %s chat requests, want plain and streamed", seen[p+" chat"], p)
		}
	}
}

// translations are what the upstream bodies must show of the translation
// rules docs/providers.md states (the system message, max_tokens and its
// Anthropic default, stop, images, JSON mode, tool choices and results),
// each in the provider's own form.
var translations = []struct{ provider, what, body string }{
	{"anthropic", "the system message", `"system":"You are terse."`},
	{"anthropic", "the default max_tokens", `"max_tokens":4096,`},
	{"anthropic", "max_tokens", `"max_tokens":200,`},
	{"anthropic", "stop", `"stop_sequences":["END"],"temperature":0.5`},
	{"anthropic", "an image", `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR`},
	{"anthropic", "JSON mode", `"tool_choice":{"type":"tool","name":"json_response","disable_parallel_tool_use":true}`},
	{"anthropic", "a tool result", `{"type":"tool_result","tool_use_id":"toolu_mock_1","content":"{\"echoed\":\"gateways\"}"}`},
	{"google", "max_tokens and stop", `"generationConfig":{"temperature":0.5,"maxOutputTokens":200,"stopSequences":["END"]}`},
	{"google", "the system message", `"systemInstruction":{"parts":[{"text":"You are terse."}]}`},
	{"google", "an image", `"inlineData":{"mimeType":"image/png","data":"iVBOR`},
	{"google", "JSON mode", `"responseMimeType":"application/json"`},
	{"bedrock", "max_tokens and stop", `"inferenceConfig":{"maxTokens":200,"temperature":0.5,"stopSequences":["END"]}`},
	{"bedrock", "the system message", `"system":[{"text":"You are terse."}]`},
	{"bedrock", "an image", `{"image":{"format":"png","source":{"bytes":"iVBOR`},
	{"bedrock", "tool_choice required", `"toolChoice":{"any":{}}`},
	{"cohere", "max_tokens and stop", `"max_tokens":200,"temperature":0.5,"stop_sequences":["END"]`},
	{"cohere", "the system message", `{"role":"system","content":"You are terse."}`},
	{"cohere", "an image", `{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR`},
	{"cohere", "JSON mode", `"response_format":{"type":"json_object"}`},
	{"cohere", "tool_choice required", `"tool_choice":"REQUIRED"`},
}

// wrongAuth returns why r does not carry provider's native credential,
// or "".
func wrongAuth(provider string, r providertest.Recorded) string {
	h := r.Header
	bearer := func(key string) string {
		if got := h.Get("Authorization"); got != "Bearer "+key {
			return fmt.Sprintf("Authorization %q, want the %s key as a bearer token", got, provider)
		}
		return ""
	}
	only := func(header, key string) string {
		if got := h.Get(header); got != key {
			return fmt.Sprintf("%s %q, want the %s key", header, got, provider)
		}
		if got := h.Get("Authorization"); got != "" {
			return fmt.Sprintf("unexpected Authorization %q next to %s", got, header)
		}
		return ""
	}
	switch provider {
	case "openai":
		return bearer(e2eOpenAIKey)
	case "cohere":
		return bearer(e2eCohereKey)
	case "anthropic":
		if v := h.Get("Anthropic-Version"); v == "" {
			return "no anthropic-version header"
		}
		return only("X-Api-Key", e2eAnthropicKey)
	case "google":
		if strings.Contains(r.Query, "key=") {
			return "the key is in the query string"
		}
		return only("X-Goog-Api-Key", e2eGoogleKey)
	case "azure-openai":
		return only("Api-Key", e2eAzureKey)
	case "bedrock":
		auth := h.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+providertest.MockAccessKeyID+"/") ||
			!strings.Contains(auth, "/us-east-1/bedrock/aws4_request") || h.Get("X-Amz-Date") == "" {
			return fmt.Sprintf("Authorization %q, want a SigV4 signature of the mock's access key for us-east-1", auth)
		}
		for name, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, providertest.MockSecretAccessKey) {
					return "the secret access key was sent in " + name
				}
			}
		}
	}
	return ""
}
