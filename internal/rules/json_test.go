package rules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func walkTexts(t *testing.T, body string, shape Shape) (*Doc, []string) {
	t.Helper()
	d, err := Walk([]byte(body), shape)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tx := range d.Texts {
		got = append(got, tx.Field+"="+tx.Text)
		src := body
		if tx.In >= 0 {
			src = d.args[tx.In].text
		}
		if !tx.bare && (src[tx.Start] != '"' || (src[tx.End-1] != '"' && tx.End != len(src))) {
			t.Errorf("text %q spans %q", tx.Text, src[tx.Start:tx.End])
		}
	}
	return d, got
}

func TestWalkRequest(t *testing.T) {
	body := `{"model":"sk-not-scanned","user":"u@example.com","n":1,"stop":["x"],"metadata":{"k":"v"},` +
		`"messages":[{"role":"system","content":"be \"nice\" \u00e9"},` +
		`{"role":"user","name":"bob@example.com","content":[{"type":"text","text":"part one"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}}]},` +
		`{"role":"assistant","content":null,"refusal":"no","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"ssn\": \"123-45-6789\", \"n\": 4111111111111111}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"result text"}],` +
		`"tools":[{"type":"function","function":{"name":"lookup","description":"finds a person","parameters":{"type":"object","properties":{"ssn":{"type":"string","description":"the SSN"}}}}}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object","properties":{"secret_field":{"type":"string"}}}}},` +
		`"prompt":["legacy"],"input":"embed me"}`
	_, got := walkTexts(t, body, Message)
	want := []string{
		`messages.*.content=be "nice" é`,
		`messages.*.name=bob@example.com`,
		`messages.*.content.*.text=part one`,
		`messages.*.refusal=no`,
		`messages.*.tool_calls.*.function.name=lookup`,
		`messages.*.tool_calls.*.function.arguments=ssn`,
		`messages.*.tool_calls.*.function.arguments=123-45-6789`,
		`messages.*.tool_calls.*.function.arguments=n`,
		`messages.*.tool_calls.*.function.arguments=4111111111111111`,
		`messages.*.content=result text`,
		`tools.*.function.name=lookup`,
		`tools.*.function.description=finds a person`,
		`tools.*.function.parameters.type=type`,
		`tools.*.function.parameters.type=object`,
		`tools.*.function.parameters.properties=properties`,
		`tools.*.function.parameters.properties.ssn=ssn`,
		`tools.*.function.parameters.properties.ssn.type=type`,
		`tools.*.function.parameters.properties.ssn.type=string`,
		`tools.*.function.parameters.properties.ssn.description=description`,
		`tools.*.function.parameters.properties.ssn.description=the SSN`,
		`response_format.json_schema.name=out`,
		`response_format.json_schema.schema.type=type`,
		`response_format.json_schema.schema.type=object`,
		`response_format.json_schema.schema.properties=properties`,
		`response_format.json_schema.schema.properties.secret_field=secret_field`,
		`response_format.json_schema.schema.properties.secret_field.type=type`,
		`response_format.json_schema.schema.properties.secret_field.type=string`,
		`prompt.*=legacy`,
		`input=embed me`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
}

// Replacing the leaves of tool-call arguments keeps them valid JSON, a
// number included (it becomes a string).
func TestReplaceKeepsArgumentsJSON(t *testing.T) {
	body := `{"choices":[{"index":0,"message":{"role":"assistant","content":"see \u2028 below","tool_calls":[` +
		`{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"ssn\":\"123-45-6789\",\"card\":4111111111111111,\"ok\":true}"}},` +
		`{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},"logprobs":{"content":[{"token":"x"}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":1}}`
	d, err := Walk([]byte(body), Message)
	if err != nil {
		t.Fatal(err)
	}
	repl := make([]string, len(d.Texts))
	for i, tx := range d.Texts {
		repl[i] = tx.Text
		switch tx.Text {
		case "123-45-6789":
			repl[i] = "[REDACTED:us_ssn]"
		case "4111111111111111":
			repl[i] = "[REDACTED:credit_card]"
		case "see \u2028 below":
			repl[i] = "see [REDACTED:keyword]"
		}
	}
	out := d.Replace([]byte(body), repl)
	var got struct {
		Choices []struct {
			Message struct {
				Content   string
				ToolCalls []struct {
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("Replace made invalid JSON: %v\n%s", err, out)
	}
	args := got.Choices[0].Message.ToolCalls[0].Function.Arguments
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", args, err)
	}
	wantArgs := map[string]any{"ssn": "[REDACTED:us_ssn]", "card": "[REDACTED:credit_card]", "ok": true}
	if diff := cmp.Diff(wantArgs, a); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if got.Choices[0].Message.Content != "see [REDACTED:keyword]" || got.Choices[0].Message.ToolCalls[1].Function.Arguments != "{}" {
		t.Errorf("body %s", out)
	}
	if string(d.Replace([]byte(body), textsOf(d))) != body {
		t.Errorf("Replace with the same texts changed the body")
	}
}

func textsOf(d *Doc) []string {
	out := make([]string, len(d.Texts))
	for i, tx := range d.Texts {
		out[i] = tx.Text
	}
	return out
}

func TestWalkChunk(t *testing.T) {
	body := `{"id":"c","object":"chat.completion.chunk","obfuscation":"xyz","choices":[{"index":0,"delta":{"reasoning_content":"hmm","tool_calls":[` +
		`{"index":1,"id":"call","function":{"name":"f","arguments":"{\"ss"}}]},"finish_reason":null}]}`
	_, got := walkTexts(t, body, Chunk)
	want := []string{
		"choices.*.delta.reasoning_content=hmm",
		"choices.*.delta.tool_calls.*.function.name=f",
		`choices.*.delta.tool_calls.*.function.arguments={"ss`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
}

func TestWalkInvalid(t *testing.T) {
	for _, b := range []string{``, `{`, `{"a":}`, `{"messages":[{"content":"x}]}`, `[1,2`, `{"a":1}x`, `"abc`, strings.Repeat("[", 300) + strings.Repeat("]", 300)} {
		if _, err := Walk([]byte(b), Message); err == nil {
			t.Errorf("Walk(%q): no error", b)
		}
	}
}

func TestJSONLeavesLenient(t *testing.T) {
	var got []string
	for _, l := range jsonLeaves(`{"a\u0041\ud83d\ude00": [1.5e3, true, "x\q"], garbage "open`) {
		got = append(got, l.text)
	}
	want := []string{"aA😀", "1.5e3", "true", "xq", "garbage", "open"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("leaves (-want +got):\n%s", diff)
	}
}

// FuzzWalk checks the walker on arbitrary bytes: no panic, spans within
// their source, and for valid JSON a Replace of every text (arguments'
// leaves included) that keeps the body valid JSON and its arguments
// valid JSON when they were.
func FuzzWalk(f *testing.F) {
	f.Add([]byte(`{"messages":[{"content":"a\"b","tool_calls":[{"function":{"arguments":"{\"x\":[1,\"y\"]}"}}]}],"prompt":["x"]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}`))
	f.Add([]byte(`{"tools":[{"function":{"parameters":{"a\u00e9":{"b":"c"}}}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"arguments":"not json \"open"}}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, shape := range []Shape{Message, Chunk} {
			d, err := Walk(b, shape)
			if err != nil {
				continue
			}
			repl := make([]string, len(d.Texts))
			for i, tx := range d.Texts {
				src := string(b)
				if tx.In >= 0 {
					src = d.args[tx.In].text
				}
				if tx.Start < 0 || tx.End > len(src) || tx.Start >= tx.End {
					t.Fatalf("span %d..%d of %d bytes", tx.Start, tx.End, len(src))
				}
				repl[i] = "[REDACTED:x]"
			}
			out := d.Replace(b, repl)
			if !json.Valid(b) {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("Replace made invalid JSON from %q: %q", b, out)
			}
			again, err := Walk(out, shape)
			if err != nil {
				t.Fatalf("Walk of the replaced body: %v", err)
			}
			for k, a := range d.args {
				if json.Valid([]byte(a.text)) && k < len(again.args) && !json.Valid([]byte(again.args[k].text)) {
					t.Fatalf("arguments %q became invalid JSON %q", a.text, again.args[k].text)
				}
			}
		}
	})
}
