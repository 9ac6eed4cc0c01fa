package bedrock

import (
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// TestAnswerThinkingBlocks: Claude's reasoningContent becomes
// message.thinking_blocks, signature and redacted content included, only
// when the door asks for them; the content is the same either way.
func TestAnswerThinkingBlocks(t *testing.T) {
	body := []byte(`{"output":{"message":{"role":"assistant","content":[` +
		`{"reasoningContent":{"reasoningText":{"text":"Add.","signature":"sig=="}}},{"reasoningContent":{"redactedContent":"ZW5j"}},{"text":"4"}]}},` +
		`"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}`)
	const blocks = `"thinking_blocks":[{"type":"thinking","thinking":"Add.","signature":"sig=="},{"type":"redacted_thinking","data":"ZW5j"}]`
	for _, on := range []bool{false, true} {
		var p fastjson.Parser
		out, _, err := chatAnswer(&p, body, meta{id: "x", model: "m", thinkingBlocks: on})
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if !strings.Contains(s, `"content":"4"`) || strings.Contains(s, "thinking_blocks") != on || (on && !strings.Contains(s, blocks)) {
			t.Errorf("thinkingBlocks=%v: %s", on, s)
		}
	}
}
