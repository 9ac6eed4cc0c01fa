// Package openaischema checks JSON documents against OpenAI's published
// API schema (github.com/openai/openai-openapi), for tests: every answer
// shape Sluice produces — chat completions, stream chunks, legacy
// completions, embeddings, error bodies and SSE error events — must be
// what the OpenAI SDKs expect, for every provider it translates.
//
// The schemas it knows are a subset of the spec, extracted into
// testdata/openai-subset.json by `go test ./internal/openaischema -update
// -spec <path to openai-openapi.json>` and embedded, so that the tests run
// on a clean clone.
//
// The validator is small and written here rather than taken from a JSON
// Schema library: the spec is OpenAPI 3.1 but still marks optional values
// with the 3.0 keyword `nullable`, which JSON Schema 2020-12 validators
// ignore (they would refuse the nulls the spec allows), and the subset
// needs only $ref, type, nullable, enum, required, properties,
// additionalProperties, items, anyOf, oneOf, allOf and a few bounds.
package openaischema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The schema names tests check against.
const (
	ChatCompletion      = "CreateChatCompletionResponse"
	ChatCompletionChunk = "CreateChatCompletionStreamResponse"
	Completion          = "CreateCompletionResponse"
	Embeddings          = "CreateEmbeddingResponse"
	Error               = "ErrorResponse"
	ListModels          = "ListModelsResponse"
	// Response is a Responses API answer; ResponseStreamEvent one event
	// of its stream (the data of an SSE event).
	Response            = "Response"
	ResponseStreamEvent = "ResponseStreamEvent"
)

// Roots are the schemas the subset is extracted for; it holds them and
// every schema they refer to.
var Roots = []string{ChatCompletion, ChatCompletionChunk, Completion, Embeddings, Error, ListModels, Response, ResponseStreamEvent}

//go:embed testdata/openai-subset.json
var subsetJSON []byte

// Subset is the extracted part of the spec.
type Subset struct {
	// Source names the spec the subset was extracted from.
	Source  string                     `json:"source"`
	Schemas map[string]json.RawMessage `json:"schemas"`
}

var load = sync.OnceValues(func() (map[string]any, error) {
	var s struct {
		Schemas map[string]any `json:"schemas"`
	}
	dec := json.NewDecoder(bytes.NewReader(subsetJSON))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("read the embedded OpenAI schema subset: %w", err)
	}
	return s.Schemas, nil
})

// Validate checks doc against the named schema and returns what does not
// conform, one entry per problem with its JSON path; nil when doc
// conforms.
func Validate(name string, doc []byte) ([]string, error) {
	defs, err := load()
	if err != nil {
		return nil, err
	}
	root, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("schema %q is not in the subset (add it to Roots and regenerate)", name)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{fmt.Sprintf("$: not JSON: %v", err)}, nil
	}
	if dec.More() {
		return []string{"$: more than one JSON value"}, nil
	}
	c := checker{defs: defs}
	return c.check(root, v, "$"), nil
}

// Check fails tb for every way doc does not conform to the named schema;
// what names the document in the failure.
func Check(tb testing.TB, name, what string, doc []byte) {
	tb.Helper()
	problems, err := Validate(name, doc)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range problems {
		tb.Errorf("%s does not conform to OpenAI's %s: %s\n\t%s", what, name, p, short(doc))
	}
}

func short(doc []byte) string {
	if len(doc) > 600 {
		return string(doc[:600]) + "…"
	}
	return string(doc)
}

type checker struct {
	defs map[string]any
}

// check returns the problems of v against schema s at path.
func (c checker) check(s any, v any, path string) []string {
	m, ok := s.(map[string]any)
	if !ok {
		if b, ok := s.(bool); ok && !b {
			return []string{path + ": no value is allowed here"}
		}
		return nil
	}
	if v == nil && m["nullable"] == true {
		return nil
	}
	var out []string
	if ref, ok := m["$ref"].(string); ok {
		// In OpenAPI 3.1 the keywords beside a $ref apply too.
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		def, ok := c.defs[name]
		if !ok {
			return []string{fmt.Sprintf("%s: the subset lacks %s", path, ref)}
		}
		out = c.check(def, v, path)
	}
	if t, ok := m["type"]; ok {
		if !typeMatches(t, v) {
			return append(out, fmt.Sprintf("%s: %s is not of type %v", path, kind(v), t))
		}
	}
	if e, ok := m["enum"].([]any); ok && !inEnum(e, v) {
		out = append(out, fmt.Sprintf("%s: %s is not one of %v", path, show(v), e))
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		subs, ok := m[kw].([]any)
		if !ok {
			continue
		}
		matched := 0
		var first []string
		for i, sub := range subs {
			p := c.check(sub, v, path)
			if len(p) == 0 {
				matched++
			} else if kw == "allOf" {
				out = append(out, p...)
			} else if first == nil {
				first = append(p, fmt.Sprintf("(and %d more alternatives)", len(subs)-1-i))
			}
		}
		switch {
		case kw == "anyOf" && matched == 0, kw == "oneOf" && matched == 0:
			out = append(out, fmt.Sprintf("%s: matches none of %s; the first: %s", path, kw, strings.Join(first, "; ")))
		case kw == "oneOf" && matched > 1:
			out = append(out, fmt.Sprintf("%s: matches %d alternatives of oneOf, want exactly one", path, matched))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		out = append(out, c.object(m, x, path)...)
	case []any:
		if items, ok := m["items"]; ok {
			for i, e := range x {
				out = append(out, c.check(items, e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		if n, ok := number(m["minItems"]); ok && float64(len(x)) < n {
			out = append(out, fmt.Sprintf("%s: %d items, want at least %v", path, len(x), n))
		}
		if n, ok := number(m["maxItems"]); ok && float64(len(x)) > n {
			out = append(out, fmt.Sprintf("%s: %d items, want at most %v", path, len(x), n))
		}
	case json.Number:
		f, _ := x.Float64()
		if n, ok := number(m["minimum"]); ok && f < n {
			out = append(out, fmt.Sprintf("%s: %s is below the minimum %v", path, x, n))
		}
		if n, ok := number(m["maximum"]); ok && f > n {
			out = append(out, fmt.Sprintf("%s: %s is above the maximum %v", path, x, n))
		}
	}
	return out
}

func (c checker) object(m map[string]any, x map[string]any, path string) []string {
	var out []string
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if k, _ := r.(string); k != "" {
				if _, present := x[k]; !present {
					out = append(out, fmt.Sprintf("%s: the required property %q is missing", path, k))
				}
			}
		}
	}
	props, _ := m["properties"].(map[string]any)
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := props[k]; ok {
			out = append(out, c.check(ps, x[k], path+"."+k)...)
			continue
		}
		switch ap := m["additionalProperties"].(type) {
		case bool:
			if !ap {
				out = append(out, fmt.Sprintf("%s: the property %q is not allowed", path, k))
			}
		case map[string]any:
			out = append(out, c.check(ap, x[k], path+"."+k)...)
		}
	}
	return out
}

// typeMatches reports whether v is of type t, a type name or a list.
func typeMatches(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return isType(t, v)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && isType(s, v) {
				return true
			}
		}
	}
	return false
}

func isType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(string(n))
		return ok && r.IsInt()
	}
	return true // an unknown type name constrains nothing
}

func inEnum(e []any, v any) bool {
	for _, x := range e {
		if show(x) == show(v) {
			return true
		}
	}
	return false
}

func number(x any) (float64, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
