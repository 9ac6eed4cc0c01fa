package anthropic

import (
	"strings"
	"testing"
)

// TestAnswerThinkingBlocks: an answer's thinking blocks become
// message.thinking_blocks, signatures included, only when the door asks
// for them; the content is the same either way.
func TestAnswerThinkingBlocks(t *testing.T) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"thinking","thinking":"Hmm \"x\".","signature":"sig=="},{"type":"redacted_thinking","data":"ZW5j"},{"type":"text","text":"4"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`)
	const blocks = `"thinking_blocks":[{"type":"thinking","thinking":"Hmm \"x\".","signature":"sig=="},{"type":"redacted_thinking","data":"ZW5j"}]`
	for _, on := range []bool{false, true} {
		out, _, _, err := answer(body, answerContext{created: 1, model: "m", thinkingBlocks: on})
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if !strings.Contains(s, `"content":"4"`) || strings.Contains(s, "thinking_blocks") != on || (on && !strings.Contains(s, blocks)) {
			t.Errorf("thinkingBlocks=%v: %s", on, s)
		}
	}
	// Only thinking: content stays "" as for any empty answer.
	out, _, _, err := answer([]byte(`{"id":"m","type":"message","content":[{"type":"thinking","thinking":"t","signature":"s"}],"stop_reason":"end_turn"}`),
		answerContext{thinkingBlocks: true})
	if err != nil || !strings.Contains(string(out), `"content":"","refusal":null,"thinking_blocks":[{"type":"thinking","thinking":"t","signature":"s"}]`) {
		t.Errorf("%s %v", out, err)
	}
}
