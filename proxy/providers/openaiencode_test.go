package providers

import (
	"encoding/json"
	"testing"

	"github.com/sluicehq/sluice/internal/llm"
)

func TestChunkEncoder(t *testing.T) {
	var e ChunkEncoder
	e.Options.ReasoningDetails = true
	steps := []struct {
		evs  []llm.Event
		want string // "" is no chunk
	}{
		{[]llm.Event{{Kind: llm.EventStart, Model: []byte("m"), Created: 7}}, ""},
		{[]llm.Event{{Kind: llm.EventRole, Role: llm.RoleAssistant}, {Kind: llm.EventText}},
			`{"id":"","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`},
		// A start without a model keeps the model; runs of one index are one choice each.
		{[]llm.Event{{Kind: llm.EventStart, ID: []byte(`c"1`), Created: 7},
			{Kind: llm.EventText, Text: []byte("a<b>")}, {Kind: llm.EventText, Text: []byte("\n")},
			{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: 0, First: true, ID: []byte("call_1"), Name: []byte("f"), Arguments: []byte(`{}`), Signature: []byte("c2ln")}},
			{Kind: llm.EventFinish, Finish: llm.FinishToolCalls},
			{Kind: llm.EventRole, Index: 1, Role: llm.RoleAssistant}},
			`{"id":"c\"1","object":"chat.completion.chunk","created":7,"model":"m","choices":[` +
				`{"index":0,"delta":{"content":"a<b>\n","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]},"logprobs":null,"finish_reason":"tool_calls"},` +
				`{"index":1,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}`},
		{[]llm.Event{{Kind: llm.EventToolCall, Index: 1, Tool: llm.ToolCallDelta{Index: 2, Arguments: []byte(`{"a"`)}}},
			`{"id":"c\"1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":1,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"a\""}}]},"logprobs":null,"finish_reason":null}]}`},
		{[]llm.Event{{Kind: llm.EventUsage, Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 5, TotalTokens: 8, CachedTokens: 1, ReasoningTokens: 2}}},
			`{"id":"c\"1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":2}}}`},
	}
	for i, s := range steps {
		got := string(e.Encode(s.evs...))
		if got != s.want {
			t.Fatalf("step %d:\n got %s\nwant %s", i, got, s.want)
		}
		if got != "" && !json.Valid([]byte(got)) {
			t.Fatalf("step %d: invalid JSON", i)
		}
	}
}

func TestChunkEncoderDoesNotAllocate(t *testing.T) {
	var e ChunkEncoder
	e.Encode(llm.Event{Kind: llm.EventStart, ID: []byte("msg_1"), Model: []byte("claude"), Created: 1})
	text := []byte("Hello there")
	e.Encode(llm.Event{Kind: llm.EventText, Text: text})
	if n := testing.AllocsPerRun(100, func() { e.Encode(llm.Event{Kind: llm.EventText, Text: text}) }); n != 0 {
		t.Errorf("a text chunk allocates %v times", n)
	}
}

func TestEncodeOpenAIResponseContent(t *testing.T) {
	r := &llm.Response{ID: "x", Model: "m", Created: 1, Choices: []llm.Choice{
		{Message: llm.Message{Parts: []llm.Part{{Kind: llm.PartText}}}, Finish: llm.FinishStop},
		{Index: 1, Message: llm.Message{}, Finish: llm.FinishContentFilter},
	}}
	got, _ := EncodeOpenAIResponse(r)
	want := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[` +
		`{"index":0,"message":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":"stop"},` +
		`{"index":1,"message":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":"content_filter"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestChunkEncoderThinking: thinking events write reasoning_content and
// LiteLLM's delta thinking_blocks, before the content, without
// allocating.
func TestChunkEncoderThinking(t *testing.T) {
	var e ChunkEncoder
	e.Encode(llm.Event{Kind: llm.EventStart, ID: []byte("msg_1"), Model: []byte("claude"), Created: 1})
	got := string(e.Encode(
		llm.Event{Kind: llm.EventThinking, Text: []byte(`a "b"`)},
		llm.Event{Kind: llm.EventThinking, Text: []byte("c")},
		llm.Event{Kind: llm.EventThinkingSignature, Text: []byte("sig==")},
		llm.Event{Kind: llm.EventRedactedThinking, Text: []byte("ZW5j")},
		llm.Event{Kind: llm.EventText, Text: []byte("4")},
	))
	want := `{"id":"msg_1","object":"chat.completion.chunk","created":1,"model":"claude","choices":[{"index":0,"delta":{` +
		`"reasoning_content":"a \"b\"c","thinking_blocks":[{"type":"thinking","thinking":"","signature":"sig=="},` +
		`{"type":"redacted_thinking","data":"ZW5j"}],"content":"4"},"logprobs":null,"finish_reason":null}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	sig := []byte("sig==")
	if n := testing.AllocsPerRun(100, func() { e.Encode(llm.Event{Kind: llm.EventThinkingSignature, Text: sig}) }); n != 0 {
		t.Errorf("a signature chunk allocates %v times", n)
	}
}
