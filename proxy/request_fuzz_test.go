package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/llm"
)

// FuzzParseBody checks parseBody on bytes nobody controls. Besides never
// panicking, a body it accepts must read the same to a strict JSON parser
// (encoding/json, like most upstreams): valid JSON and UTF-8, no duplicate
// key at any depth, the same model and stream flag, none of the fields
// that choose an upstream. Anything else would be a parser differential
// between what the gateway authorised and priced and what the provider
// reads. The seed corpus is in testdata/fuzz/FuzzParseBody and runs with
// every `go test`.
func FuzzParseBody(f *testing.F) {
	f.Add([]byte(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`), uint8(0))
	var parsers fastjson.ParserPool
	ops := [...]llm.Operation{llm.OpChat, llm.OpCompletions, llm.OpEmbeddings}
	f.Fuzz(func(t *testing.T, body []byte, op uint8) {
		p := parsers.Get()
		defer parsers.Put(p)
		in, e := parseBody(p, body, ops[int(op)%len(ops)])
		if e != nil {
			if e.Status != 400 || (e.Code != "invalid_json" && e.Code != "invalid_request") || e.Message == "" {
				t.Fatalf("refused with %d %s %q, want 400 invalid_json or invalid_request", e.Status, e.Code, e.Message)
			}
			return
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid JSON to encoding/json: %q", body)
		}
		if key, dup := strictDuplicate(body); dup {
			t.Fatalf("accepted a body with the key %q twice: %q", key, body)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatalf("accepted a body that is not an object: %v", err)
		}
		var model string
		if err := json.Unmarshal(top["model"], &model); err != nil || model != in.model {
			t.Fatalf("model %q, encoding/json reads %q (%v)", in.model, model, err)
		}
		if in.model == "" || len(in.model) > 256 || bytes.ContainsAny([]byte(in.model), "\r\n\x00") {
			t.Fatalf("accepted model %q", in.model)
		}
		var stream bool
		if s, ok := top["stream"]; ok && string(s) != "null" {
			if err := json.Unmarshal(s, &stream); err != nil {
				t.Fatalf("accepted stream %s", s)
			}
		}
		if stream != in.stream {
			t.Fatalf("stream %v, encoding/json reads %v", in.stream, stream)
		}
		for _, f := range forbiddenFields {
			if _, ok := top[f]; ok {
				t.Fatalf("accepted the field %s", f)
			}
		}
	})
}

// strictDuplicate reports a key that appears twice in one object, at any
// depth, as encoding/json decodes keys.
func strictDuplicate(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return "", false
		}
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return v, true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}
