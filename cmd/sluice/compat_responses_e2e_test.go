package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestCompatResponsesClientEndToEnd drives `sluice serve`'s translated
// Responses door (/compat/responses) with the official openai npm client
// (internal/e2e/node/compat-responses.test.mjs) against the mock, for
// every adapter (compatMatrix): responses.create plain and streamed, the
// stream helper, a function call round trip and a streamed function call,
// an input_image, text.format json_schema (refused on Bedrock), the SDK's
// exceptions (401, 429, unknown model, refused stateful and built-in
// features) and a stream cut short. The mock's log then shows the
// translated requests reached each provider's chat path, never
// /responses.
func TestCompatResponsesClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
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
	out, err := runNodeTests(ctx, t, nodeDir, "compat-responses.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string),
		"SLUICE_PROVIDERS="+string(m))
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass")
	if want := 7*len(matrix) + 2; tests < want || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least %d, all passing", tests, pass, want)
	}
	// Each provider's native chat path was called, translated, never
	// /responses; the JSON output asked for reached each in its own form.
	reqs := mock.Requests()
	checkTranslatedUpstreams(t, reqs, matrix)
	jsonAsked := map[string]string{ // how each wire asks for the answer's schema
		"openai":       `"response_format":{"type":"json_schema"`,
		"azure-openai": `"response_format":{"type":"json_schema"`,
		"anthropic":    `"tool_choice":{"type":"tool","name":"answer"`,
		"google":       `"responseMimeType":"application/json"`,
		"cohere":       `"response_format":{"type":"json_object","json_schema":`,
	}
	for _, r := range reqs {
		if m, ok := jsonAsked[upstreamProvider(r.Path)]; ok && strings.Contains(string(r.Body), m) {
			delete(jsonAsked, upstreamProvider(r.Path))
		}
	}
	for p, m := range jsonAsked {
		t.Errorf("no %s request asked for JSON output (%s)", p, m)
	}
}
