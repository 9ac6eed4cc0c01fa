package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
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
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	base := startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)
	gwID := gw["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"mock","key":"sk-mock-upstream-key-0001","base_url":%q}`, mockURL+"/v1"), 201)
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"e2e"}`, 201)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", tok["secret"].(string))

	out, err := runNodeTests(ctx, t, nodeDir, "responses.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok["secret"].(string))
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
