package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestMessagesThinkingRelayed: on the translating Messages door, thinking
// blocks of earlier assistant turns reach Anthropic and Claude on Bedrock
// with their signatures, redacted thinking with its data, and thinking's
// budget reaches them as thinking, not as reasoning_effort.
func TestMessagesThinkingRelayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
	body := func(model string) string {
		return `{"model":"` + model + `","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` +
			`{"role":"user","content":"2+2?"},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"Add them.","signature":"sig-abc=="},` +
			`{"type":"redacted_thinking","data":"ZW5jcnlwdGVk"},{"type":"text","text":"4"},` +
			`{"type":"tool_use","id":"tu_1","name":"calc","input":{"x":1}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"ok"},{"type":"text","text":"and 3+3?"}]}],` +
			`"tools":[{"name":"calc","input_schema":{"type":"object"}}]}`
	}
	for _, tt := range []struct {
		name, model string
		// want are the JSON fragments the upstream must receive.
		want []string
	}{
		{"anthropic", "anthropic/claude-sonnet-4-5", []string{
			`"thinking":{"type":"enabled","budget_tokens":1024}`,
			`{"role":"assistant","content":[{"type":"thinking","thinking":"Add them.","signature":"sig-abc=="},` +
				`{"type":"redacted_thinking","data":"ZW5jcnlwdGVk"},{"type":"text","text":"4"},{"type":"tool_use","id":"tu_1","name":"calc","input":{"x":1}}]}`,
		}},
		{"bedrock", "bedrock/anthropic.claude-sonnet-4-5-v1:0", []string{
			`"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}`,
			`{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Add them.","signature":"sig-abc=="}}},` +
				`{"reasoningContent":{"redactedContent":"ZW5jcnlwdGVk"}},{"text":"4"},{"toolUse":{"toolUseId":"tu_1","name":"calc","input":{"x":1}}}]}`,
		}},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				b := body(tt.model)
				if stream {
					b = strings.Replace(b, `"max_tokens":2048`, `"max_tokens":2048,"stream":true`, 1)
				}
				out := relayOnce(t, h, messagesPath, hdr, b, tt.want, []string{"reasoning_effort"})
				if !stream && !json.Valid(out) {
					t.Errorf("answer %s", out)
				}
			})
		}
	}
}

// TestMessagesThinkingOpenAI: an OpenAI-wire target still gets the plain
// chat body, thinking left out and the budget as reasoning_effort.
func TestMessagesThinkingOpenAI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
	before := len(h.mock.Requests())
	resp, out := h.do("POST", messagesPath, hdr, `{"model":"openai/gpt-4o-mini","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[`+
		`{"role":"user","content":"2+2?"},{"role":"assistant","content":[{"type":"thinking","thinking":"Add them.","signature":"sig-abc=="},{"type":"text","text":"4"}]},`+
		`{"role":"user","content":"and 3+3?"}]}`)
	wantStatus(t, resp, out, 200)
	reqs := h.mock.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("upstream requests %+v", reqs)
	}
	sent := string(reqs[0].Body)
	if strings.Contains(sent, "sig-abc") || strings.Contains(sent, "Add them.") || !strings.Contains(sent, `"reasoning_effort":"low"`) {
		t.Errorf("upstream body %s", sent)
	}
}

// TestMessagesThinkingAnswer: an Anthropic answer's thinking blocks reach
// the Messages client with their signatures, redacted thinking with its
// data, in the answer's order before the text.
func TestMessagesThinkingAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
	h.mock.Script(providertest.Step{Body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"thinking","thinking":"Let me add.","signature":"sig-xyz=="},{"type":"redacted_thinking","data":"ZW5j"},{"type":"text","text":"4"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`})
	resp, out := h.do("POST", messagesPath, hdr, `{"model":"anthropic/claude-sonnet-4-5","max_tokens":2048,`+
		`"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"2+2?"}]}`)
	wantStatus(t, resp, out, 200)
	want := `"content":[{"type":"thinking","thinking":"Let me add.","signature":"sig-xyz=="},{"type":"redacted_thinking","data":"ZW5j"},{"type":"text","text":"4"}]`
	if !strings.Contains(string(out), want) {
		t.Errorf("answer %s\nwant %s", out, want)
	}

	// Claude on Bedrock: reasoningContent.
	h.mock.Script(providertest.Step{Body: `{"output":{"message":{"role":"assistant","content":[` +
		`{"reasoningContent":{"reasoningText":{"text":"Let me add.","signature":"sig-xyz=="}}},{"reasoningContent":{"redactedContent":"ZW5j"}},{"text":"4"}]}},` +
		`"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}`})
	resp, out = h.do("POST", messagesPath, hdr, `{"model":"bedrock/anthropic.claude-sonnet-4-5-v1:0","max_tokens":2048,`+
		`"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"2+2?"}]}`)
	wantStatus(t, resp, out, 200)
	if !strings.Contains(string(out), want) {
		t.Errorf("bedrock answer %s\nwant %s", out, want)
	}
}

// TestMessagesStreamThinkingChunks: the chunk streams the Messages door's
// thinking goldens (testdata/messages/stream_thinking_*.chunks) start from
// are the ones the Anthropic and Bedrock codecs write for a streamed
// signed thinking block (their own goldens), so that the two goldens
// chain: codec stream → chunks → Anthropic events with thinking_delta,
// signature_delta and redacted_thinking.
func TestMessagesStreamThinkingChunks(t *testing.T) {
	for door, codec := range map[string]string{
		"testdata/messages/stream_thinking_anthropic.chunks": "providers/anthropic/testdata/streams/thinking_blocks.out",
		"testdata/messages/stream_thinking_bedrock.chunks":   "providers/bedrock/testdata/stream_thinking_blocks.golden",
	} {
		want, err := os.ReadFile(door)
		must(t, err)
		out, err := os.ReadFile(codec)
		must(t, err)
		var chunks []byte
		for _, line := range bytes.SplitAfter(out, []byte("\n")) {
			if bytes.HasPrefix(line, []byte("{")) {
				chunks = append(chunks, line...)
			}
		}
		if !bytes.Equal(chunks, want) {
			t.Errorf("%s is not the chunks of %s:\n%s", door, codec, chunks)
		}
	}
}

// TestMessagesStreamTwoSignedBlocks: thinking after a signature is a new
// thinking block, and a signature with no thinking before it opens one.
func TestMessagesStreamTwoSignedBlocks(t *testing.T) {
	d := &messagesDoor{inputTokens: 1}
	var out []byte
	for _, c := range []string{
		`{"id":"m","model":"c","choices":[{"index":0,"delta":{"reasoning_content":"one"}}]}`,
		`{"id":"m","model":"c","choices":[{"index":0,"delta":{"thinking_blocks":[{"type":"thinking","thinking":"","signature":"s1"}]}}]}`,
		`{"id":"m","model":"c","choices":[{"index":0,"delta":{"reasoning_content":"two"}}]}`,
		`{"id":"m","model":"c","choices":[{"index":0,"delta":{"thinking_blocks":[{"type":"thinking","thinking":"","signature":"s2"}]}}]}`,
		`{"id":"m","model":"c","choices":[{"index":0,"delta":{"thinking_blocks":[{"type":"thinking","thinking":"","signature":"s3"}]}}]}`,
	} {
		out = d.appendChunk(out, []byte(c))
	}
	out = d.appendEnd(out, nil)
	checkEventStream(t, out)
	for _, w := range []string{
		`"index":0,"delta":{"type":"thinking_delta","thinking":"one"}`,
		`"index":0,"delta":{"type":"signature_delta","signature":"s1"}`,
		`"index":1,"delta":{"type":"thinking_delta","thinking":"two"}`,
		`"index":1,"delta":{"type":"signature_delta","signature":"s2"}`,
		`"index":2,"delta":{"type":"signature_delta","signature":"s3"}`,
		`{"type":"content_block_stop","index":2}`,
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("stream lacks %s:\n%s", w, out)
		}
	}
	if n := strings.Count(string(out), "event: content_block_start"); n != 3 {
		t.Errorf("%d blocks started, want 3:\n%s", n, out)
	}
}

// relayOnce posts body to path with hdr and wants a 200 and one upstream
// request, whose body holds every fragment of want and none of not; it
// returns the answer.
func relayOnce(t *testing.T, h *harness, path string, hdr http.Header, body string, want, not []string) []byte {
	t.Helper()
	before := len(h.mock.Requests())
	resp, out := h.do("POST", path, hdr, body)
	wantStatus(t, resp, out, 200)
	reqs := h.mock.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("upstream requests %+v", reqs)
	}
	sent := string(reqs[0].Body)
	for _, w := range want {
		if !strings.Contains(sent, w) {
			t.Errorf("upstream body lacks %s:\n%s", w, sent)
		}
	}
	for _, w := range not {
		if strings.Contains(sent, w) {
			t.Errorf("upstream body holds %s:\n%s", w, sent)
		}
	}
	return out
}
