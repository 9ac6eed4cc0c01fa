package bedrock

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
)

// cachedChat is a chat body with cache_control on the system, a user
// text and a tool result, and a tool.
const cachedChat = `{"model":"m","messages":[` +
	`{"role":"system","content":[{"type":"text","text":"rules","cache_control":{"type":"ephemeral"}},{"type":"text","text":"today"}]},` +
	`{"role":"user","content":[{"type":"text","text":"read it","cache_control":{"type":"ephemeral"}}]},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"read","arguments":"{}"}}]},` +
	`{"role":"tool","tool_call_id":"t1","content":[{"type":"text","text":"no such file","cache_control":{"type":"ephemeral"}}]}],` +
	`"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}],"stop":["END"]}`

// TestConverseCachePoints: cache_control on the system, messages, tool
// results and (through the door's neutral request) tools become Converse
// cachePoint blocks after the block they close, for Claude and Nova; a
// model without prompt caching gets none. A tool result marked as an
// error has status "error".
func TestConverseCachePoints(t *testing.T) {
	n, err := llm.DecodeOpenAIChat([]byte(cachedChat))
	if err != nil {
		t.Fatal(err)
	}
	n.Tools[0].CacheControl = json.RawMessage(`{"type":"ephemeral"}`)
	n.Messages[3].IsError = true
	for _, tt := range []struct {
		model string
		want  int // cache points
	}{
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", 4},
		{"us.amazon.nova-pro-v1:0", 4},
		{"meta.llama3-70b-instruct-v1:0", 0},
	} {
		t.Run(tt.model, func(t *testing.T) {
			b, err := converseBody([]byte(cachedChat), n, call{model: tt.model})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				System []map[string]any `json:"system"`
				Msgs   []struct {
					Content []map[string]any `json:"content"`
				} `json:"messages"`
				ToolConfig struct {
					Tools []map[string]any `json:"tools"`
				} `json:"toolConfig"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if c := bytes.Count(b, []byte(`{"cachePoint":{"type":"default"}}`)); c != tt.want {
				t.Errorf("%d cache points, want %d:\n%s", c, tt.want, b)
			}
			if tt.want == 0 {
				return
			}
			keys := func(blocks []map[string]any) []string {
				var k []string
				for _, b := range blocks {
					for name := range b {
						k = append(k, name)
					}
				}
				return k
			}
			if diff := cmp.Diff([]string{"text", "cachePoint", "text"}, keys(got.System)); diff != "" {
				t.Errorf("system (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"text", "cachePoint"}, keys(got.Msgs[0].Content)); diff != "" {
				t.Errorf("user message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"toolResult", "cachePoint"}, keys(got.Msgs[2].Content)); diff != "" {
				t.Errorf("tool result message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"toolSpec", "cachePoint"}, keys(got.ToolConfig.Tools)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(b), `"status":"error"`) {
				t.Errorf("the failed tool result has no status error:\n%s", b)
			}
		})
	}
}

// TestConverseToolResultStatus: a tool message with IsError (the Messages
// door's is_error) is a toolResult with status "error"; without, none.
func TestConverseToolResultStatus(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"a","content":"ok"},{"role":"tool","tool_call_id":"b","content":"boom"}],` +
		`"tools":[{"type":"function","function":{"name":"f"}}]}`
	n, err := llm.DecodeOpenAIChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	n.Messages[3].IsError = true
	b, err := converseBody([]byte(body), n, call{model: "meta.llama3"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"toolResult":{"toolUseId":"a","content":[{"text":"ok"}]}},{"toolResult":{"toolUseId":"b","content":[{"text":"boom"}],"status":"error"}}`
	if !strings.Contains(string(b), want) {
		t.Errorf("got %s\nwant it to hold %s", b, want)
	}
}

// TestConverseClaudeFields: for Claude, the client's anthropic-beta
// features that Bedrock knows go in additionalModelRequestFields
// (others are left out), and stop sequences ask for the matched one
// (/stop_sequence, /delta/stop_sequence streamed); other models get
// neither.
func TestConverseClaudeFields(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":["END"]}`)
	beta := "claude-code-20250219, interleaved-thinking-2025-05-14,oauth-2025-04-20,context-1m-2025-08-07"
	for _, tt := range []struct {
		name string
		c    call
		want string
	}{
		{"claude", call{model: "anthropic.claude-sonnet-4-5-20250929-v1:0", beta: beta},
			`"additionalModelRequestFields":{"anthropic_beta":["interleaved-thinking-2025-05-14","context-1m-2025-08-07"]},"additionalModelResponseFieldPaths":["/stop_sequence"]}`},
		{"claude streamed", call{model: "us.anthropic.claude-haiku-4-5", stream: true},
			`"inferenceConfig":{"stopSequences":["END"]},"additionalModelResponseFieldPaths":["/delta/stop_sequence"]}`},
		{"other", call{model: "amazon.nova-pro-v1:0", beta: beta}, `"inferenceConfig":{"stopSequences":["END"]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := converseBody(body, nil, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), tt.want) {
				t.Errorf("got %s\nwant it to end in %s", b, tt.want)
			}
		})
	}
}

// TestBedrockStopSequence: Claude's matched stop sequence
// (additionalModelResponseFields) comes back as the choice's
// stop_sequence, in an answer and in a stream's finish chunk.
func TestBedrockStopSequence(t *testing.T) {
	body := []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"one two"}]}},"stopReason":"stop_sequence",` +
		`"additionalModelResponseFields":{"stop_sequence":"END"},"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}`)
	var p fastjson.Parser
	out, _, err := chatAnswer(&p, body, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"finish_reason":"stop","stop_sequence":"END"}`) {
		t.Errorf("answer: %s", out)
	}
	frames := encodeBedrockFrames(t, []frame{
		ev("messageStart", `{"role":"assistant"}`),
		ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"one two"}}`),
		ev("contentBlockStop", `{"contentBlockIndex":0}`),
		ev("messageStop", `{"stopReason":"stop_sequence","additionalModelResponseFields":{"delta":{"stop_sequence":"END"}}}`),
		ev("metadata", `{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}`),
	})
	got := runBedrockStream(t, newBedrockStream(bytes.NewReader(frames), testMeta, true, cred("")))
	if !strings.Contains(got, `"finish_reason":"stop","stop_sequence":"END"}`) {
		t.Errorf("stream:\n%s", got)
	}
}

// TestConverseUnsignedThinking: unsigned thinking is left out of an
// earlier Claude turn; signed thinking is a reasoningContent block.
func TestConverseUnsignedThinking(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"},{"role":"user","content":"and 3+3?"}]}`
	n, err := llm.DecodeOpenAIChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	n.Messages[1].Parts = append([]llm.Part{{Kind: llm.PartThinking, Text: "unsigned"}, {Kind: llm.PartThinking, Text: "signed", Signature: "sig=="}},
		n.Messages[1].Parts...)
	b, err := converseBody([]byte(body), n, call{model: "anthropic.claude-sonnet-4-5-v1:0"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"signed","signature":"sig=="}}},{"text":"4"}]}`
	if !strings.Contains(string(b), want) || strings.Contains(string(b), "unsigned") {
		t.Errorf("got %s\nwant it to hold %s and no unsigned thinking", b, want)
	}
}
