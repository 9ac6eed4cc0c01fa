package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestResponsesToOpenAIChat decodes each testdata/responses/*.json
// Responses body and encodes it as an OpenAI chat body, compared with its
// .openai golden file.
func TestResponsesToOpenAIChat(t *testing.T) {
	files, _ := filepath.Glob("testdata/responses/*.json")
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".openai.json") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := DecodeOpenAIResponses(in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if r.Wire != WireOpenAIResponses || !bytes.Equal(r.Raw, in) {
				t.Errorf("wire %v, raw kept %v", r.Wire, bytes.Equal(r.Raw, in))
			}
			got, err := EncodeOpenAIChat(r)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			var ind bytes.Buffer
			_ = json.Indent(&ind, got, "", "  ")
			golden := strings.TrimSuffix(f, ".json") + ".openai.json"
			if *update {
				_ = os.WriteFile(golden, append(ind.Bytes(), '\n'), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != ind.String()+"\n" {
				t.Errorf("got\n%s\nwant\n%s", ind.String(), want)
			}
			if _, err := DecodeOpenAIChat(got); err != nil {
				t.Errorf("the encoded body does not decode: %v", err)
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden inputs")
	}
}

func TestDecodeOpenAIResponsesRefuses(t *testing.T) {
	tests := []struct {
		name, body, param string // param "" is a schema error
	}{
		{"previous_response_id", `{"model":"m","input":"x","previous_response_id":"resp_1"}`, "previous_response_id"},
		{"store", `{"model":"m","input":"x","store":true}`, "store"},
		{"conversation", `{"model":"m","input":"x","conversation":"conv_1"}`, "conversation"},
		{"background", `{"model":"m","input":"x","background":true}`, "background"},
		{"web_search", `{"model":"m","input":"x","tools":[{"type":"web_search_preview"}]}`, "tools[0].type"},
		{"file_search", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"},{"type":"file_search","vector_store_ids":["v"]}]}`, "tools[1].type"},
		{"code_interpreter", `{"model":"m","input":"x","tools":[{"type":"code_interpreter"}]}`, "tools[0].type"},
		{"computer_use", `{"model":"m","input":"x","tools":[{"type":"computer_use_preview"}]}`, "tools[0].type"},
		{"hosted tool_choice", `{"model":"m","input":"x","tool_choice":{"type":"web_search_preview"}}`, "tool_choice"},
		{"item_reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].type"},
		{"file image", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]}`, "input[0].content[0]"},
		{"input_file", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, "input[0].content[0]"},
		{"image output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"u"}]}]}`, "input[0].output[0]"},
		{"effort", `{"model":"m","input":"x","reasoning":{"effort":"extreme"}}`, "reasoning.effort"},
		{"format", `{"model":"m","input":"x","text":{"format":{"type":"grammar"}}}`, "text.format.type"},
		{"no input", `{"model":"m"}`, ""},
		{"bad input", `{"model":"m","input":5}`, ""},
		{"bad role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, ""},
		{"call without id", `{"model":"m","input":[{"type":"function_call","name":"f"}]}`, ""},
		{"bad tool_choice", `{"model":"m","input":"x","tool_choice":"always"}`, ""},
		{"schema without name", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, ""},
		{"unknown include", `{"model":"m","input":"x","include":["message.output_text.logprobs","usage.secrets"]}`, ""},
		{"top_logprobs", `{"model":"m","input":"x","top_logprobs":21}`, ""},
		{"truncation", `{"model":"m","input":"x","truncation":"sometimes"}`, ""},
		{"service_tier", `{"model":"m","input":"x","service_tier":"cheap"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeOpenAIResponses([]byte(tt.body))
			var ue *UnsupportedError
			var se *SchemaError
			switch {
			case tt.param != "" && (!errors.As(err, &ue) || ue.Param != tt.param):
				t.Errorf("got %v, want an unsupported %s", err, tt.param)
			case tt.param == "" && !errors.As(err, &se):
				t.Errorf("got %v, want a schema error", err)
			}
		})
	}
	// An explicit store: false is the stateless door's own mode.
	if _, err := DecodeOpenAIResponses([]byte(`{"model":"m","input":"x","store":false,"previous_response_id":null}`)); err != nil {
		t.Errorf("store false: %v", err)
	}
}

// TestResponsesReasoningItems: a reasoning item whose encrypted_content
// the door wrote is the signed thinking (or redacted thinking) of the
// assistant turn after it — a message or a function call — and comes
// back unchanged; a reasoning item with a summary only, or another
// system's encrypted_content, is left out; the chat body carries none.
func TestResponsesReasoningItems(t *testing.T) {
	signed := string(AppendThinkingContent(nil, &Part{Kind: PartThinking, Text: "Add \"them\".", Signature: "sig-abc=="}))
	redacted := string(AppendThinkingContent(nil, &Part{Kind: PartRedactedThinking, Data: "ZW5j"}))
	body := `{"model":"m","input":[{"role":"user","content":"2+2?"},` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Add them."}],"encrypted_content":"` + signed + `"},` +
		`{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"` + redacted + `"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"4"}]},` +
		`{"role":"user","content":"and 3+3?"},` +
		`{"type":"reasoning","id":"rs_3","summary":[],"encrypted_content":"` + signed + `"},` +
		`{"type":"function_call","call_id":"c1","name":"calc","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"ok"},` +
		`{"type":"reasoning","id":"rs_4","summary":[{"type":"summary_text","text":"x"}]},` +
		`{"type":"reasoning","id":"rs_5","summary":[],"encrypted_content":"gAAAAABopenai"},` +
		`{"type":"function_call","call_id":"c2","name":"calc","arguments":"{}"}]}`
	r, err := DecodeOpenAIResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	thinking := Part{Kind: PartThinking, WireType: "reasoning", Text: `Add "them".`, Signature: "sig-abc=="}
	want := [][]Part{
		{thinking, {Kind: PartRedactedThinking, WireType: "reasoning", Data: "ZW5j"}, {Kind: PartText, WireType: "output_text", Text: "4"}},
		{thinking},
		nil,
	}
	var got [][]Part
	for _, m := range r.Messages {
		if m.Role == RoleAssistant {
			got = append(got, m.Parts)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assistant parts\n got %+v\nwant %+v", got, want)
	}
	if !HasThinking(r) {
		t.Error("HasThinking false")
	}
	chat, err := EncodeOpenAIChat(r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(chat, []byte("sig-abc")) || bytes.Contains(chat, []byte("ZW5j")) {
		t.Errorf("the chat body carries thinking: %s", chat)
	}
	n, err := DecodeOpenAIChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	CarryThinking(n, r)
	if p := n.Messages[3].Parts; len(p) != 1 || !reflect.DeepEqual(p[0], thinking) {
		t.Errorf("carried parts %+v", p)
	}
}

// FuzzDecodeOpenAIResponses: client bytes never panic the decoder or the
// encoder, and whatever encodes is a chat body that decodes.
func FuzzDecodeOpenAIResponses(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOpenAIResponses(b)
		if err != nil {
			return
		}
		out, err := EncodeOpenAIChat(r)
		if err != nil {
			return
		}
		if _, err := DecodeOpenAIChat(out); err != nil {
			t.Fatalf("encoded %s does not decode: %v", out, err)
		}
	})
}
