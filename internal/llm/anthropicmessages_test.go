package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestMessagesToOpenAIChat decodes each testdata/messages/*.json
// Anthropic Messages body and encodes it as an OpenAI chat body, compared
// with its .openai golden file.
func TestMessagesToOpenAIChat(t *testing.T) {
	files, _ := filepath.Glob("testdata/messages/*.json")
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
			r, err := DecodeAnthropicMessages(in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if r.Wire != WireAnthropicMessages || !bytes.Equal(r.Raw, in) {
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
			// What the door hands on reads back as a chat request.
			if _, err := DecodeOpenAIChat(got); err != nil {
				t.Errorf("the encoded body does not decode: %v", err)
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden inputs")
	}
}

func TestDecodeAnthropicMessagesRefuses(t *testing.T) {
	tests := []struct {
		name, body, param string // param "" is a schema error
	}{
		{"top_k", `{"model":"m","max_tokens":1,"top_k":5,"messages":[]}`, "top_k"},
		{"mcp_servers", `{"model":"m","max_tokens":1,"mcp_servers":[{"type":"url","url":"https://x","name":"x"}],"messages":[]}`, "mcp_servers"},
		{"container", `{"model":"m","max_tokens":1,"container":"c1","messages":[]}`, "container"},
		{"context_management", `{"model":"m","max_tokens":1,"context_management":{"edits":[]},"messages":[]}`, "context_management"},
		{"effort", `{"model":"m","max_tokens":1,"output_config":{"effort":"low"},"messages":[]}`, "output_config.effort"},
		{"server tool", `{"model":"m","max_tokens":1,"messages":[],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, "tools[0].type"},
		{"file image", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type"},
		{"image result", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}]}`, "messages[0].content[0].content[0]"},
		{"bad role", `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`, ""},
		{"bad content", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":5}]}`, ""},
		{"bad tool_choice", `{"model":"m","max_tokens":1,"messages":[],"tool_choice":{"type":"all"}}`, ""},
		{"thinking without budget", `{"model":"m","max_tokens":1,"messages":[],"thinking":{"type":"enabled"}}`, ""},
		{"output format type", `{"model":"m","max_tokens":1,"messages":[],"output_config":{"format":{"type":"grammar"}}}`, "output_config.format.type"},
		{"output format without schema", `{"model":"m","max_tokens":1,"messages":[],"output_config":{"format":{"type":"json_schema"}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeAnthropicMessages([]byte(tt.body))
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
}

func TestEncodeOpenAIChatRefuses(t *testing.T) {
	r, err := DecodeAnthropicMessages([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = EncodeOpenAIChat(r)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Param != "messages[0].content[0]" || !strings.Contains(ue.Message, `"document"`) {
		t.Errorf("got %v, want the document block refused", err)
	}
}

// FuzzDecodeAnthropicMessages: client bytes never panic the decoder or
// the encoder, and whatever encodes is a chat body that decodes.
func FuzzDecodeAnthropicMessages(f *testing.F) {
	files, _ := filepath.Glob("testdata/messages/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeAnthropicMessages(b)
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

// TestToolResultCacheControl: a tool_result's cache_control rides on the
// tool message's text part; without one the content stays a string.
func TestToolResultCacheControl(t *testing.T) {
	r, err := DecodeAnthropicMessages([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},` +
		`{"type":"tool_result","tool_use_id":"b","content":"2","cache_control":{"type":"ephemeral"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	chat, err := EncodeOpenAIChat(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"role":"tool","content":"1","tool_call_id":"a"}`,
		`{"role":"tool","content":[{"type":"text","text":"2","cache_control":{"type":"ephemeral"}}],"tool_call_id":"b"}`,
	} {
		if !strings.Contains(string(chat), want) {
			t.Errorf("chat body %s\nlacks %s", chat, want)
		}
	}
}
