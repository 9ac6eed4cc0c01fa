package bedrock

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

// thinkingFrames is Claude's streamed reasoning on ConverseStream:
// reasoningContent text deltas, then its signature, a redacted block, and
// the text.
var thinkingFrames = []frame{
	ev("messageStart", `{"role":"assistant"}`),
	ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Add 2 and 2."}}}`),
	ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":" It is 4."}}}`),
	ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}}`),
	ev("contentBlockStop", `{"contentBlockIndex":0}`),
	ev("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"ZW5jcnlwdGVk"}}}`),
	ev("contentBlockStop", `{"contentBlockIndex":1}`),
	ev("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"text":"4"}}`),
	ev("contentBlockStop", `{"contentBlockIndex":2}`),
	ev("messageStop", `{"stopReason":"end_turn"}`),
	ev("metadata", `{"usage":{"inputTokens":12,"outputTokens":20,"totalTokens":32},"metrics":{"latencyMs":100}}`),
}

// TestBedrockStreamThinking: asked (providers.Request.ThinkingBlocks), the
// stream relays reasoningContent as reasoning_content and the signature
// and redacted content as thinking_blocks; not asked, neither, as before.
func TestBedrockStreamThinking(t *testing.T) {
	b := encodeBedrockFrames(t, thinkingFrames)
	for _, tt := range []struct {
		name  string
		asked bool
	}{{"thinking", false}, {"thinking_blocks", true}} {
		t.Run(tt.name, func(t *testing.T) {
			m := testMeta
			m.thinkingBlocks = tt.asked
			got := runBedrockStream(t, newBedrockStream(bytes.NewReader(b), m, true, cred("")))
			if has := strings.Contains(got, "reasoning_content") || strings.Contains(got, "thinking_blocks"); has != tt.asked {
				t.Errorf("thinking relayed=%v, want %v:\n%s", has, tt.asked, got)
			}
			codectest.Golden(t, filepath.Join("testdata", "stream_"+tt.name+".golden"), []byte(got))
		})
	}
}
