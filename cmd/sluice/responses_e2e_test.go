package main

import (
	"context"
	"strings"
	"testing"
)

// TestResponsesClientEndToEnd drives `sluice serve`'s native Responses
// door (/openai/responses) with the official openai npm client
// (internal/e2e/node/responses.test.mjs) against the mock provider:
// responses.create plain and streamed, the stream helper, a function call
// round trip and a streamed function call, an input_image, text.format
// json_schema plain and streamed, a bad token, an upstream error and a
// stream cut short. The body reaches OpenAI as the client wrote it.
func TestResponsesClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	_, tok := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "e2e")

	out, err := runNodeTests(ctx, t, nodeDir, "responses.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok)
	if err != nil {
		t.Fatalf("the openai client tests failed: %v", err)
	}
	if tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass"); tests != 8 || pass != 8 {
		t.Fatalf("node ran %d tests, %d passed; want 8 passing", tests, pass)
	}
	responses, image, tools, format := 0, false, false, false
	for _, r := range mock.Requests() {
		if r.Path == "/v1/responses" {
			responses++
			// The client's body reached OpenAI as written.
			b := string(r.Body)
			image = image || strings.Contains(b, `"type":"input_image","image_url":"data:image/png;base64,`)
			tools = tools || strings.Contains(b, `"type":"function_call_output"`)
			format = format || strings.Contains(b, `"text":{"format":{"type":"json_schema"`)
		}
	}
	if !image || !tools || !format {
		t.Errorf("the image (%v), the function call output (%v) or the JSON format (%v) did not reach OpenAI", image, tools, format)
	}
	if responses < 4 {
		t.Fatalf("mock provider saw %d /v1/responses requests, want at least 4", responses)
	}
}
