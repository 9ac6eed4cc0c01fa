package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// TestRequestToolExtras: the Messages door's neutral request carries a
// tool result's is_error and a tool's cache_control, which the chat body
// cannot; both reach Anthropic as the client wrote them.
func TestRequestToolExtras(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"a","content":"boom"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	n, err := llm.DecodeOpenAIChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	n.Messages[2].IsError = true
	n.Tools[0].CacheControl = json.RawMessage(`{"type":"ephemeral"}`)
	out, _, err := requestBody([]byte(body), n, "claude-sonnet-4-5", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"tool_result","tool_use_id":"a","content":"boom","is_error":true}`,
		`"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("got %s\nwant it to hold %s", out, want)
		}
	}
	plain, _, err := requestBody([]byte(body), nil, "claude-sonnet-4-5", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "is_error") || strings.Contains(string(plain), "cache_control") {
		t.Errorf("without the neutral request: %s", plain)
	}
}

// TestAnthropicBetaHeader: the Messages door's anthropic-beta goes to
// Anthropic as its header; without one, none is sent.
func TestAnthropicBetaHeader(t *testing.T) {
	req := &providers.Request{AnthropicBeta: "interleaved-thinking-2025-05-14,claude-code-20250219"}
	if got := httpRequest(req, nil).Header.Get("Anthropic-Beta"); got != req.AnthropicBeta {
		t.Errorf("Anthropic-Beta = %q, want %q", got, req.AnthropicBeta)
	}
	if got := httpRequest(&providers.Request{}, nil).Header.Values("Anthropic-Beta"); got != nil {
		t.Errorf("Anthropic-Beta = %q without one from the client", got)
	}
}

// TestAnthropicStreamStopSequence: message_delta's stop_sequence comes
// back on the finish chunk; a stop for another reason has none.
func TestAnthropicStreamStopSequence(t *testing.T) {
	for _, tt := range []struct {
		reason, seq, want string
	}{
		{"stop_sequence", `"END"`, `"finish_reason":"stop","stop_sequence":"END"}`},
		{"end_turn", `null`, `"finish_reason":"stop"}`},
	} {
		sse := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"one\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + tt.reason + "\",\"stop_sequence\":" + tt.seq + "},\"usage\":{\"output_tokens\":2}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		got := string(translateStream(t, []byte(sse), streamContext{created: 1, model: "m"}))
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: got\n%s\nwant a chunk ending in %s", tt.reason, got, tt.want)
		}
	}
}

// TestRequestUnsignedThinking: thinking the Messages door gave back
// unsigned (another provider's reasoning_content) is left out of an
// earlier turn sent to Anthropic, which refuses a thinking block without
// a valid signature; signed thinking goes as written.
func TestRequestUnsignedThinking(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"},{"role":"user","content":"and 3+3?"}]}`
	n, err := llm.DecodeOpenAIChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	n.Messages[1].Parts = append([]llm.Part{{Kind: llm.PartThinking, Text: "unsigned"}, {Kind: llm.PartThinking, Text: "signed", Signature: "sig=="}},
		n.Messages[1].Parts...)
	out, _, err := requestBody([]byte(body), n, "claude-sonnet-4-5", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"signed","signature":"sig=="},{"type":"text","text":"4"}]}`
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "unsigned") {
		t.Errorf("got %s\nwant it to hold %s and no unsigned thinking", out, want)
	}
}
