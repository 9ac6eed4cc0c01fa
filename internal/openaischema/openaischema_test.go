package openaischema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	update = flag.Bool("update", false, "regenerate testdata/openai-subset.json from -spec")
	spec   = flag.String("spec", "../../../shared/reference/openai-openapi.json",
		`OpenAI's spec as {"spec": <openapi document>, "where": "<source>"}`)
)

// dropped are the keywords that do not constrain a value.
var dropped = map[string]bool{"description": true, "example": true, "examples": true, "title": true,
	"default": true, "deprecated": true, "format": true, "discriminator": true}

// extract returns the subset of spec for Roots: the roots and every
// schema they refer to, without the keywords that only document.
func extract(t *testing.T, raw []byte) []byte {
	t.Helper()
	var doc struct {
		Spec struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		} `json:"spec"`
		Where string `json:"where"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("read the spec: %v", err)
	}
	all := doc.Spec.Components.Schemas
	out := map[string]any{}
	var visit func(name string)
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := map[string]any{}
			for k, e := range x {
				if dropped[k] || strings.HasPrefix(k, "x-") {
					continue
				}
				if k == "properties" { // names of properties are data, not keywords
					props := map[string]any{}
					for pk, pv := range e.(map[string]any) {
						props[pk] = strip(pv)
					}
					m[k] = props
					continue
				}
				if k == "$ref" {
					visit(strings.TrimPrefix(e.(string), "#/components/schemas/"))
				}
				m[k] = strip(e)
			}
			return m
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	visit = func(name string) {
		if _, done := out[name]; done {
			return
		}
		s, ok := all[name]
		if !ok {
			t.Fatalf("the spec has no schema %s", name)
		}
		out[name] = nil // mark before recursing: schemas refer to each other
		out[name] = strip(s)
	}
	for _, r := range Roots {
		visit(r)
	}
	b, err := json.MarshalIndent(map[string]any{"source": doc.Where, "schemas": out}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestSubset regenerates the subset with -update, and otherwise checks
// that it is what the spec gives, when the spec is at hand.
func TestSubset(t *testing.T) {
	raw, err := os.ReadFile(*spec)
	if err != nil {
		if *update {
			t.Fatalf("read -spec: %v", err)
		}
		t.Skipf("the spec is not at %s (pass -spec): the embedded subset is not compared with it", *spec)
	}
	got := extract(t, raw)
	if *update {
		if err := os.WriteFile("testdata/openai-subset.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, subsetJSON) {
		t.Errorf("testdata/openai-subset.json is not what %s gives: run go test -update -spec %s", *spec, *spec)
	}
}

func TestSubsetComplete(t *testing.T) {
	defs, err := load()
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if _, ok := defs[strings.TrimPrefix(ref, "#/components/schemas/")]; !ok {
					missing = append(missing, ref)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, d := range defs {
		walk(d)
	}
	for _, r := range Roots {
		if _, ok := defs[r]; !ok {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the subset lacks %v", missing)
	}
}

func TestValidate(t *testing.T) {
	chat := func(msg string) string {
		return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":` +
			msg + `}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	}
	for _, tc := range []struct {
		name, schema, doc string
		problems          []string
	}{
		{"chat ok", ChatCompletion, chat(`{"role":"assistant","content":"hi","refusal":null}`), nil},
		{"chat without refusal", ChatCompletion, chat(`{"role":"assistant","content":"hi"}`),
			[]string{`$.choices[0].message: the required property "refusal" is missing`}},
		{"chat with a number as content", ChatCompletion, chat(`{"role":"assistant","content":5,"refusal":null}`),
			[]string{`$.choices[0].message.content: matches none of anyOf; the first: $.choices[0].message.content: a number is not of type string; (and 1 more alternatives)`}},
		{"chat with a bad role", ChatCompletion, chat(`{"role":"bot","content":null,"refusal":null}`),
			[]string{`$.choices[0].message.role: "bot" is not one of [assistant]`}},
		{"tokens as a float", ChatCompletion, strings.Replace(chat(`{"role":"assistant","content":"","refusal":null}`), `"total_tokens":2`, `"total_tokens":2.5`, 1),
			[]string{`$.usage.total_tokens: a number is not of type integer`}},
		{"error ok", Error, `{"error":{"type":"api_error","code":"x","message":"m","param":null}}`, nil},
		{"error without param", Error, `{"error":{"type":"api_error","code":"x","message":"m"}}`,
			[]string{`$.error: the required property "param" is missing`}},
		{"not JSON", Error, `{`, []string{"$: not JSON: unexpected EOF"}},
		{"chunk with null usage", ChatCompletionChunk, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","usage":null,"choices":[]}`, nil},
		{"chunk with a bad usage", ChatCompletionChunk, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","usage":{"prompt_tokens":1},"choices":[]}`,
			[]string{`$.usage: the required property "completion_tokens" is missing`, `$.usage: the required property "total_tokens" is missing`}},
		{"chunk with null finish", ChatCompletionChunk, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`, nil},
		{"embedding", Embeddings, `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.1,-2e-3]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Validate(tc.schema, []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.problems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Validate("Nope", []byte(`{}`)); err == nil {
		t.Error("an unknown schema name gave no error")
	}
}
