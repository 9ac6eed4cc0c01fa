package llm

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeOpenAIChat(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Request // Raw and Wire are checked apart
	}{
		{"string content", `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi","name":"ann"}]}`,
			Request{Model: "m", Messages: []Message{
				{Role: RoleSystem, Parts: []Part{{Kind: PartText, WireType: "text", Text: "Be brief."}}},
				{Role: RoleUser, Name: "ann", Parts: []Part{{Kind: PartText, WireType: "text", Text: "Hi"}}},
			}}},
		{"parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"look","cache_control":{"type":"ephemeral"}},` +
			`{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}},{"type":"image_url","image_url":"data:image/png;base64,AA=="},` +
			`{"type":"input_audio","input_audio":{"data":"x","format":"wav"}},{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf"}},` +
			`{"type":"file","file":{"file_id":"file-1"}},{"type":"input_video","text":"t"}]},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}]}`,
			Request{Messages: []Message{
				{Role: RoleUser, Parts: []Part{
					{Kind: PartText, WireType: "text", Text: "look", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)},
					{Kind: PartImage, WireType: "image_url", ImageURL: "https://x/a.png", ImageDetail: "low"},
					{Kind: PartImage, WireType: "image_url", ImageURL: "data:image/png;base64,AA=="},
					{Kind: PartAudio, WireType: "input_audio", Data: "x", Format: "wav"},
					{Kind: PartFile, WireType: "file", Data: "data:application/pdf;base64,JVBERi0=", Filename: "a.pdf"},
					{Kind: PartFile, WireType: "file", FileID: "file-1"},
					{Kind: PartOther, WireType: "input_video", Text: "t"},
				}},
				{Role: RoleAssistant, Parts: []Part{{Kind: PartRefusal, WireType: "refusal", Text: "no"}}},
			}}},
		{"thought signature", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}},` +
			`{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"},"extra_content":"lenient"}]}]}`,
			Request{Messages: []Message{
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Type: "function", Name: "f", Arguments: `{}`, Signature: "c2ln"},
					{ID: "c2", Type: "function", Name: "g", Arguments: `{}`}}},
			}}},
		{"null content and tool calls", `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"42"}]}`,
			Request{Messages: []Message{
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Type: "function", Name: "f", Arguments: `{"a":1}`}}},
				{Role: RoleTool, ToolCallID: "c1", Parts: []Part{{Kind: PartText, WireType: "text", Text: "42"}}},
			}}},
		{"sampling", `{"temperature":0.70,"top_p":null,"stop":"END","max_tokens":10,"max_completion_tokens":20,"user":"u1","stream":true,` +
			`"parallel_tool_calls":false,"reasoning_effort":"low","metadata":{"k":"v"}}`,
			Request{Temperature: json.RawMessage(`0.70`), Stop: []string{"END"}, MaxOutputTokens: ptr(int64(20)), User: "u1", Stream: true,
				ParallelToolCalls: ptr(false), Reasoning: &Reasoning{Effort: "low"}, Metadata: map[string]string{"k": "v"}}},
		{"max_tokens alone, lenient extras", `{"max_tokens":10,"stop":["a","b"],"reasoning_effort":3,"metadata":{"k":1}}`,
			Request{MaxOutputTokens: ptr(int64(10)), Stop: []string{"a", "b"}}},
		{"tools and a named choice", `{"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g"}}],` +
			`"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			Request{Tools: []Tool{{Type: "function", Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}, {Type: "function", Name: "g"}},
				ToolChoice: &ToolChoice{Mode: ToolChoiceFunction, Name: "f", Raw: json.RawMessage(`{"type":"function","function":{"name":"f"}}`)}}},
		{"tool choice required", `{"tool_choice":"required"}`, Request{ToolChoice: &ToolChoice{Mode: ToolChoiceRequired}}},
		{"tool choice unknown", `{"tool_choice":"maybe"}`, Request{ToolChoice: &ToolChoice{Mode: ToolChoiceOther, Raw: json.RawMessage(`"maybe"`)}}},
		{"tool choice null", `{"tool_choice":null}`, Request{}},
		{"json schema", `{"response_format":{"type":"json_schema","json_schema":{"name":"n","description":"d","schema":{"type":"object"},"strict":true}}}`,
			Request{ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "n", Description: "d", Schema: json.RawMessage(`{"type":"object"}`), Strict: ptr(true)}}},
		{"json object", `{"response_format":{"type":"json_object"}}`, Request{ResponseFormat: &ResponseFormat{Type: "json_object"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeOpenAIChat([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got.Wire != WireOpenAIChat || string(got.Raw) != tt.body {
				t.Errorf("wire %v, raw %q: want the body as it came", got.Wire, got.Raw)
			}
			got.Raw = nil
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeOpenAIChatSchemaErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"messages":[{"role":"user","content":5}]}`, "the request does not fit the chat completions schema: content must be a string, an array of content parts or null"},
		{`{"max_tokens":"ten"}`, "the request does not fit the chat completions schema: the field max_tokens has the wrong type"},
		{`{"stop":5}`, "the request does not fit the chat completions schema: stop must be a string or an array of strings"},
		{`[1]`, "the request does not fit the chat completions schema: json: cannot unmarshal array into Go value of type llm.openAIChat"},
	}
	for _, tt := range tests {
		_, err := DecodeOpenAIChat([]byte(tt.body))
		var se *SchemaError
		if err == nil || !asSchemaError(err, &se) || err.Error() != tt.want {
			t.Errorf("%s: got %v, want %q", tt.body, err, tt.want)
		}
	}
}

func asSchemaError(err error, se **SchemaError) bool {
	e, ok := err.(*SchemaError)
	*se = e
	return ok
}

// FuzzDecodeOpenAIChat holds the decoder of bytes the gateway does not
// control to never panic, and to keep the body as it came.
func FuzzDecodeOpenAIChat(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"x"}]}],"tool_choice":{"type":"function"}}`))
	f.Add([]byte(`{"stop":"x","temperature":1e400,"response_format":{"type":"json_schema","json_schema":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeOpenAIChat(body)
		if err == nil && string(r.Raw) != string(body) {
			t.Errorf("Raw %q, want %q", r.Raw, body)
		}
	})
}
