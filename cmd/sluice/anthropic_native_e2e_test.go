package main

import (
	"context"
	"strings"
	"testing"
)

// TestAnthropicNativeClientEndToEnd drives `sluice serve`'s native
// Messages door (/anthropic/v1/messages) with the official
// @anthropic-ai/sdk client (internal/e2e/node/anthropic-native.test.mjs)
// against the mock provider: messages.create, messages.stream with a
// bearer token, a tool call round trip and a streamed tool call, an image
// block, JSON output by a forced tool and by output_config.format,
// countTokens, and the SDK's exceptions for a bad token, a refused body
// and a stream the upstream cut. The body reaches Anthropic as the client
// wrote it (the image included).
func TestAnthropicNativeClientEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "@anthropic-ai", "sdk")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	_, tok := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "e2e", e2eProvider{Provider: "anthropic", key: e2eAnthropicKey})

	out, err := runNodeTests(ctx, t, nodeDir, "anthropic-native.test.mjs", "SLUICE_URL="+base+"/v1/acme/prod", "SLUICE_TOKEN="+tok)
	if err != nil {
		t.Fatalf("the anthropic client tests failed: %v", err)
	}
	if tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass"); tests != 9 || pass != 9 {
		t.Fatalf("node ran %d tests, %d passed; want 9 passing", tests, pass)
	}
	messages, counts, image := 0, 0, false
	for _, r := range mock.Requests() {
		switch r.Path {
		case "/v1/messages":
			messages++
			image = image || strings.Contains(string(r.Body), `"source":{"type":"base64","media_type":"image/png"`)
			if r.Header.Get("X-Api-Key") != e2eAnthropicKey || r.Header.Get("Anthropic-Version") == "" {
				t.Errorf("upstream headers %v", r.Header)
			}
		case "/v1/messages/count_tokens":
			counts++
		}
	}
	if !image {
		t.Error("the image block did not reach Anthropic")
	}
	if messages < 3 || counts != 1 {
		t.Fatalf("mock provider saw %d /v1/messages and %d count_tokens requests", messages, counts)
	}
}
