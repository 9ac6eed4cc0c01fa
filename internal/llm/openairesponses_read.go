package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/valyala/fastjson"
)

// The Responses request as DecodeOpenAIResponses reads it. The body is
// read with a pooled fastjson parser rather than encoding/json: the door
// decodes every request it serves, and reflection over nested custom
// unmarshalers (input a string or items, content a string or parts)
// scanned the body once per level. Keys match exactly, as OpenAI's API
// does; a field of the wrong type is a *SchemaError, as it was.
type (
	openAIResponses struct {
		Model              string
		Input              responsesInput
		Instructions       *string
		Tools              []responsesTool
		ToolChoice         json.RawMessage
		ParallelToolCalls  *bool
		Text               *responsesText
		Reasoning          *responsesReason
		MaxOutputTokens    *int64
		Temperature        json.RawMessage
		TopP               json.RawMessage
		Stream             bool
		Metadata           map[string]string
		User               string
		Store              *bool
		PreviousResponseID *string
		Conversation       json.RawMessage
		Background         *bool
		Prompt             json.RawMessage
		Include            []string
		TopLogprobs        *int64
		Truncation         *string
		ServiceTier        *string
	}
	responsesTool struct {
		Type, Name, Description string
		Parameters              json.RawMessage
		Strict                  *bool
	}
	responsesText struct {
		Format *responsesFormat
	}
	responsesFormat struct {
		Type, Name, Description string
		Schema                  json.RawMessage
		Strict                  *bool
	}
	responsesReason struct {
		Effort *string
	}
	responsesItem struct {
		Type, Role              string
		Content                 responsesContent
		CallID, Name, Arguments string
		Output                  responsesContent
		// EncryptedContent is a reasoning item's opaque reasoning.
		EncryptedContent *string
	}
	responsesPart struct {
		Type, Text, Refusal string
		ImageURL, FileID    *string
		Detail              string
	}
	// responsesInput is input: a string (one user message) or a list of
	// items.
	responsesInput []responsesItem
	// responsesContent is a message's content or a call output: a string
	// (one text part) or a list of parts.
	responsesContent []responsesPart
)

var responsesParsers fastjson.ParserPool

// readOpenAIResponses reads body into the request's fields.
func readOpenAIResponses(body []byte) (*openAIResponses, error) {
	p := responsesParsers.Get()
	defer responsesParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	if v.Type() != fastjson.TypeObject {
		return nil, &SchemaError{Err: errors.New("the body must be a JSON object")}
	}
	var r jsonReader
	in := &openAIResponses{
		Model: r.str(v, "model"), Instructions: r.strPtr(v, "instructions"), ToolChoice: r.raw(v, "tool_choice"),
		ParallelToolCalls: r.boolPtr(v, "parallel_tool_calls"), MaxOutputTokens: r.intPtr(v, "max_output_tokens"),
		Temperature: r.raw(v, "temperature"), TopP: r.raw(v, "top_p"), User: r.str(v, "user"),
		Store: r.boolPtr(v, "store"), PreviousResponseID: r.strPtr(v, "previous_response_id"),
		Conversation: r.raw(v, "conversation"), Background: r.boolPtr(v, "background"), Prompt: r.raw(v, "prompt"),
		TopLogprobs: r.intPtr(v, "top_logprobs"), Truncation: r.strPtr(v, "truncation"), ServiceTier: r.strPtr(v, "service_tier"),
	}
	if s := r.boolPtr(v, "stream"); s != nil {
		in.Stream = *s
	}
	in.Input = r.input(v.Get("input"))
	for i, t := range r.array(v, "tools") {
		at := "tools[" + strconv.Itoa(i) + "]"
		if r.object(t, at) {
			in.Tools = append(in.Tools, responsesTool{Type: r.str(t, "type"), Name: r.str(t, "name"), Description: r.str(t, "description"),
				Parameters: r.raw(t, "parameters"), Strict: r.boolPtr(t, "strict")})
		}
	}
	if t := v.Get("text"); r.present(t) && r.object(t, "text") {
		in.Text = &responsesText{}
		if f := t.Get("format"); r.present(f) && r.object(f, "text.format") {
			in.Text.Format = &responsesFormat{Type: r.str(f, "type"), Name: r.str(f, "name"), Description: r.str(f, "description"),
				Schema: r.raw(f, "schema"), Strict: r.boolPtr(f, "strict")}
		}
	}
	if rs := v.Get("reasoning"); r.present(rs) && r.object(rs, "reasoning") {
		in.Reasoning = &responsesReason{Effort: r.strPtr(rs, "effort")}
	}
	if m := v.Get("metadata"); r.present(m) && r.object(m, "metadata") {
		in.Metadata = map[string]string{}
		m.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			in.Metadata[string(k)], _ = r.string(x, "metadata values")
		})
	}
	for i, x := range r.array(v, "include") {
		if b, err := x.StringBytes(); err == nil {
			in.Include = append(in.Include, string(b))
		} else {
			r.fail("include["+strconv.Itoa(i)+"]", "a string")
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return in, nil
}

// input reads input: a string, an array of items or null.
func (r *jsonReader) input(v *fastjson.Value) responsesInput {
	switch {
	case !r.present(v):
		return nil
	case v.Type() == fastjson.TypeString:
		return responsesInput{{Type: "message", Role: "user", Content: responsesContent{{Type: "input_text", Text: string(v.GetStringBytes())}}}}
	case v.Type() != fastjson.TypeArray:
		r.fail("input", "a string or an array of items")
		return nil
	}
	items := v.GetArray()
	out := make(responsesInput, 0, len(items))
	for i, it := range items {
		if it.Type() != fastjson.TypeObject {
			r.fail("input["+strconv.Itoa(i)+"]", "an object")
			return nil
		}
		out = append(out, responsesItem{Type: r.str(it, "type"), Role: r.str(it, "role"), Content: r.content(it.Get("content"), i, "content"),
			CallID: r.str(it, "call_id"), Name: r.str(it, "name"), Arguments: r.str(it, "arguments"),
			Output: r.content(it.Get("output"), i, "output"), EncryptedContent: r.strPtr(it, "encrypted_content")})
	}
	return out
}

// content reads field of input item i (content or output): a string, an
// array of parts or null.
func (r *jsonReader) content(v *fastjson.Value, i int, field string) responsesContent {
	switch {
	case !r.present(v):
		return nil
	case v.Type() == fastjson.TypeString:
		return responsesContent{{Type: "input_text", Text: string(v.GetStringBytes())}}
	case v.Type() != fastjson.TypeArray:
		r.fail("input["+strconv.Itoa(i)+"]."+field, "a string or an array of content parts")
		return nil
	}
	parts := v.GetArray()
	out := make(responsesContent, 0, len(parts))
	for j, p := range parts {
		if p.Type() != fastjson.TypeObject {
			r.fail("input["+strconv.Itoa(i)+"]."+field+"["+strconv.Itoa(j)+"]", "an object")
			return nil
		}
		out = append(out, responsesPart{Type: r.str(p, "type"), Text: r.str(p, "text"), Refusal: r.str(p, "refusal"),
			ImageURL: r.strPtr(p, "image_url"), FileID: r.strPtr(p, "file_id"), Detail: r.str(p, "detail")})
	}
	return out
}

// jsonReader reads typed fields of parsed JSON, keeping the first type
// error (a *SchemaError naming the field). An absent or null field is the
// zero value.
type jsonReader struct{ err error }

func (r *jsonReader) fail(at, want string) {
	if r.err == nil {
		r.err = &SchemaError{Err: fmt.Errorf("%s must be %s", at, want)}
	}
}

// present reports whether v is set and not null.
func (r *jsonReader) present(v *fastjson.Value) bool {
	return v != nil && v.Type() != fastjson.TypeNull
}

// object reports whether v is an object, failing when not.
func (r *jsonReader) object(v *fastjson.Value, at string) bool {
	if v.Type() != fastjson.TypeObject {
		r.fail(at, "an object")
		return false
	}
	return true
}

// str reads the string of key in v ("" when absent or null).
func (r *jsonReader) str(v *fastjson.Value, key string) string {
	s, _ := r.string(v.Get(key), key)
	return s
}

// strPtr reads the string of key in v; nil when absent or null.
func (r *jsonReader) strPtr(v *fastjson.Value, key string) *string {
	s, ok := r.string(v.Get(key), key)
	if !ok {
		return nil
	}
	p := new(string) // only a present string costs an allocation
	*p = s
	return p
}

// string reads x, at in errors, as a string; false when absent, null or
// not a string.
func (r *jsonReader) string(x *fastjson.Value, at string) (string, bool) {
	if !r.present(x) {
		return "", false
	}
	b, err := x.StringBytes()
	if err != nil {
		r.fail(at, "a string")
		return "", false
	}
	return string(b), true
}

// boolPtr reads a boolean; nil when absent or null.
func (r *jsonReader) boolPtr(v *fastjson.Value, key string) *bool {
	x := v.Get(key)
	if !r.present(x) {
		return nil
	}
	b, err := x.Bool()
	if err != nil {
		r.fail(key, "a boolean")
		return nil
	}
	return &b
}

// intPtr reads an integer; nil when absent or null.
func (r *jsonReader) intPtr(v *fastjson.Value, key string) *int64 {
	x := v.Get(key)
	if !r.present(x) {
		return nil
	}
	n, err := x.Int64()
	if err != nil {
		r.fail(key, "an integer")
		return nil
	}
	return &n
}

// raw is the JSON of a field as written; nil when absent or null.
func (r *jsonReader) raw(v *fastjson.Value, key string) json.RawMessage {
	x := v.Get(key)
	if !r.present(x) {
		return nil
	}
	return x.MarshalTo(nil)
}

// array reads an array; nil when absent or null.
func (r *jsonReader) array(v *fastjson.Value, key string) []*fastjson.Value {
	x := v.Get(key)
	if !r.present(x) {
		return nil
	}
	a, err := x.Array()
	if err != nil {
		r.fail(key, "an array")
	}
	return a
}
