package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
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
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1e400,"x":[-1E+999]}`), uint8(0))
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
		// Every number is a finite double: encoding/json refuses 1e400.
		var whole any
		if err := json.Unmarshal(body, &whole); err != nil {
			t.Fatalf("accepted a body encoding/json cannot read: %v", err)
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
		if d := jsonDepth(body); d > maxDepth {
			t.Fatalf("accepted a body nested %d deep", d)
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

// TestParseBodyPathological covers checklist item 4 at the parser: 100k
// nested arrays, 10 MB strings and numbers that overflow a double are
// answered 400 without a panic, and what a parse allocates is bounded by
// the body's size, not by its shape.
func TestParseBodyPathological(t *testing.T) {
	var parsers fastjson.ParserPool
	big := strings.Repeat("a", 10_000_000)
	for _, tc := range []struct {
		name  string
		body  string
		param string // "" with code invalid_json; "-" for accepted
	}{
		{"100k nested arrays", `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, ""},
		{"129 nested arrays in 300 bytes", `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":` + strings.Repeat("[", 129) + strings.Repeat("]", 129) + `}`, ""},
		{"128 nested arrays", `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":` + strings.Repeat("[", 127) + strings.Repeat("]", 127) + `}`, "-"},
		{"brackets in strings", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat(`[{\"`, 100_000) + `"}]}`, "-"},
		{"100k nested objects", `{"model":"m","messages":` + strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000) + `}`, ""},
		{"10 MB model", `{"model":"` + big + `","messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"10 MB key", `{"model":"m","messages":[{"role":"user","content":"hi"}],"` + big + `":1}`, "-"},
		{"10 MB content", `{"model":"m","messages":[{"role":"user","content":"` + big + `"}]}`, "-"},
		{"10 MB of escapes", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat(`\u00e9`, 1_000_000) + `"}]}`, "-"},
		{"1e400", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1e400}`, "temperature"},
		{"a 100k-digit number", `{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":` + strings.Repeat("9", 100_000) + `}`, "seed"},
		{"a 100k-digit exponent", `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":1e` + strings.Repeat("9", 100_000) + `}`, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parsers.Get()
			defer parsers.Put(p)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, e := parseBody(p, []byte(tc.body), llm.OpChat)
			runtime.ReadMemStats(&after)
			switch {
			case tc.param == "-" && e != nil:
				t.Fatalf("refused: %d %s %s", e.Status, e.Code, e.Message)
			case tc.param == "" && (e == nil || e.Status != 400 || e.Code != "invalid_json"):
				t.Fatalf("got %+v, want 400 invalid_json", e)
			case tc.param != "" && tc.param != "-" && (e == nil || e.Status != 400 || e.Param != tc.param):
				t.Fatalf("got %+v, want 400 naming %s", e, tc.param)
			}
			if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*len(tc.body)+1<<20); got > limit {
				t.Errorf("parsing a %d-byte body allocated %d bytes, want at most %d", len(tc.body), got, limit)
			}
		})
	}
}

// jsonDepth is the deepest nesting of arrays and objects in valid JSON, as
// encoding/json reads it.
func jsonDepth(body []byte) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}
