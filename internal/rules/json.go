package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// What rules see of an OpenAI body: every string the model reads or
// writes. The walker visits every string value of the body except those
// that are structure or binary data (the denylist in skipKeys), so that a
// field it does not know — a provider's own reasoning field, a new kind
// of content — is scanned rather than let through:
//
//   - message text and names, system prompts, tool results, refusals,
//     reasoning text, audio transcripts, annotations, prompts and inputs;
//   - tool and function names, descriptions and parameter schemas, and
//     response_format schemas: inside a schema ("parameters", "schema")
//     every string is scanned, object keys included;
//   - tool-call arguments: a string holding JSON, whose string values,
//     keys and bare tokens (numbers, literals) are each scanned, so that a
//     redaction keeps the arguments valid JSON.
//
// Object keys elsewhere, numbers and literals are not scanned.

// Shape is the kind of body walked.
type Shape int

// The shapes of body the walker knows.
const (
	// Message is a request or a complete response: tool-call arguments
	// are parsed and their leaves scanned one by one.
	Message Shape = iota
	// Chunk is a stream chunk: tool-call arguments are fragments of JSON,
	// scanned as one streamed text each (see ArgStream).
	Chunk
)

// skipKeys are the members whose values are never scanned: identifiers,
// enumerations, numbers' companions and binary data (base64 images,
// audio, files, embeddings), and the token-level log probabilities
// (refused when response rules redact or block, see the proxy).
var skipKeys = map[string]bool{
	"id": true, "object": true, "model": true, "role": true, "type": true, "finish_reason": true,
	"system_fingerprint": true, "service_tier": true, "tool_call_id": true, "user": true,
	"reasoning_effort": true, "verbosity": true, "prompt_cache_key": true, "safety_identifier": true,
	"encoding_format": true, "detail": true, "format": true, "voice": true, "modalities": true,
	"stop": true, "logprobs": true, "top_logprobs": true, "usage": true, "metadata": true,
	"logit_bias": true, "stream_options": true, "image_url": true, "input_audio": true,
	"file_data": true, "file_id": true, "embedding": true, "data": true, "obfuscation": true,
	"created": true, "index": true, "expires_at": true, "tool_choice": true,
}

// freeFormKeys hold JSON schemas: everything in them is text the model
// reads, keys included.
var freeFormKeys = map[string]bool{"parameters": true, "schema": true}

// Text is one scanned string of a body.
type Text struct {
	// Start and End delimit the value: in the body, quotes included, or,
	// when In ≥ 0, in the decoded tool-call arguments Doc.Args(In).
	Start, End int
	// Text is the decoded string.
	Text string
	// Field is the value's path, "*" standing for an array item:
	// "messages.*.content", "choices.*.delta.tool_calls.*.function.arguments".
	Field string
	// Item and Sub are the positions of the value in the first and second
	// arrays on its path (choices[Item].…tool_calls[Sub]); -1 when there
	// is none.
	Item, Sub int
	// In is the index of the tool-call arguments the value lies in, -1
	// for a string of the body itself.
	In int
	// bare is true for a number or literal of tool-call arguments.
	bare bool
}

// IsArguments reports whether the text is tool-call arguments (a chunk's
// fragment of them, for the Chunk shape).
func (t *Text) IsArguments() bool { return strings.HasSuffix(t.Field, ".arguments") }

// Doc is a walked body.
type Doc struct {
	Texts []Text
	args  []argsString
}

// argsString is tool-call arguments: a string of the body holding JSON.
type argsString struct {
	start, end int // in the body, quotes included
	text       string
}

// maxDepth bounds the nesting the walker follows; deeper bodies are
// refused.
const maxDepth = 256

var errJSON = errors.New("rules: body is not valid JSON")

// Walk returns the scanned strings of body, in order. body must be one
// JSON value; an invalid one is an error.
func Walk(body []byte, shape Shape) (*Doc, error) {
	w := walker{b: body, shape: shape, doc: &Doc{}}
	i, err := w.value(skipSpace(body, 0), 0, pathState{item: -1, sub: -1})
	if err != nil {
		return nil, err
	}
	if skipSpace(body, i) != len(body) {
		return nil, errJSON
	}
	return w.doc, nil
}

// pathState is where the walker is.
type pathState struct {
	field     string
	item, sub int
	arrays    int  // arrays on the path
	free      bool // inside a schema
}

func (p pathState) member(key string) pathState {
	if p.field == "" {
		p.field = key
	} else {
		p.field += "." + key
	}
	if freeFormKeys[key] {
		p.free = true
	}
	return p
}

func (p pathState) elem(n int) pathState {
	p.field += ".*"
	switch p.arrays {
	case 0:
		p.item = n
	case 1:
		p.sub = n
	}
	p.arrays++
	return p
}

type walker struct {
	b     []byte
	shape Shape
	doc   *Doc
}

// value reads the value at b[i:] and returns the index after it.
func (w *walker) value(i, depth int, p pathState) (int, error) {
	b := w.b
	if i >= len(b) || depth > maxDepth {
		return 0, errJSON
	}
	switch b[i] {
	case '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, errJSON
			}
			end, err := stringEnd(b, i)
			if err != nil {
				return 0, err
			}
			key, err := decodeString(b[i:end])
			if err != nil {
				return 0, err
			}
			if p.free {
				w.add(i, end, key, p.member(key))
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, errJSON
			}
			i = skipSpace(b, i+1)
			if !p.free && skipKeys[key] {
				i, err = skipValue(b, i, depth+1)
			} else {
				i, err = w.value(i, depth+1, p.member(key))
			}
			if err != nil {
				return 0, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, nil
			}
			return 0, errJSON
		}
	case '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for n := 0; ; n++ {
			var err error
			if i, err = w.value(i, depth+1, p.elem(n)); err != nil {
				return 0, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, nil
			}
			return 0, errJSON
		}
	case '"':
		end, err := stringEnd(b, i)
		if err != nil {
			return 0, err
		}
		s, err := decodeString(b[i:end])
		if err != nil {
			return 0, err
		}
		if w.shape == Message && !p.free && strings.HasSuffix(p.field, ".arguments") {
			w.addArgs(i, end, s, p)
		} else {
			w.add(i, end, s, p)
		}
		return end, nil
	}
	// A number, true, false or null.
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return 0, errJSON
	}
	return j, nil
}

func (w *walker) add(start, end int, s string, p pathState) {
	w.doc.Texts = append(w.doc.Texts, Text{Start: start, End: end, Text: s, Field: p.field, Item: p.item, Sub: p.sub, In: -1})
}

// addArgs adds the leaves of tool-call arguments.
func (w *walker) addArgs(start, end int, s string, p pathState) {
	in := len(w.doc.args)
	w.doc.args = append(w.doc.args, argsString{start: start, end: end, text: s})
	for _, l := range jsonLeaves(s) {
		w.doc.Texts = append(w.doc.Texts, Text{Start: l.start, End: l.end, Text: l.text,
			Field: p.field, Item: p.item, Sub: p.sub, In: in, bare: l.bare})
	}
}

// Replace returns body with each text whose replacement differs from it
// re-encoded as that replacement; body itself when none differs. repl[i]
// is the new value of d.Texts[i]. A replaced bare token of tool-call
// arguments becomes a JSON string, so the arguments stay JSON.
func (d *Doc) Replace(body []byte, repl []string) []byte {
	// New tool-call arguments, where a leaf changed.
	newArgs := make([]string, len(d.args))
	changed := make([]bool, len(d.args))
	for k, a := range d.args {
		var out []byte
		last := 0
		for i, t := range d.Texts {
			if t.In != k || repl[i] == t.Text {
				continue
			}
			if out == nil {
				out = make([]byte, 0, len(a.text)+32)
			}
			out = append(out, a.text[last:t.Start]...)
			out = AppendString(out, repl[i])
			last = t.End
		}
		if out != nil {
			newArgs[k], changed[k] = string(append(out, a.text[last:]...)), true
		}
	}
	var out []byte
	last := 0
	emit := func(start, end int, s string) {
		if out == nil {
			out = make([]byte, 0, len(body)+64)
		}
		out = append(out, body[last:start]...)
		out = AppendString(out, s)
		last = end
	}
	k := 0
	for i, t := range d.Texts {
		if t.In >= 0 {
			// The arguments string goes out where its first leaf was.
			for ; k <= t.In; k++ {
				if changed[k] {
					emit(d.args[k].start, d.args[k].end, newArgs[k])
				}
			}
			continue
		}
		for ; k < len(d.args) && d.args[k].start < t.Start; k++ {
			if changed[k] {
				emit(d.args[k].start, d.args[k].end, newArgs[k])
			}
		}
		if repl[i] != t.Text {
			emit(t.Start, t.End, repl[i])
		}
	}
	for ; k < len(d.args); k++ {
		if changed[k] {
			emit(d.args[k].start, d.args[k].end, newArgs[k])
		}
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

// AppendString appends s as a JSON string, escaping what JSON requires
// and U+2028/U+2029; invalid UTF-8 becomes U+FFFD.
func AppendString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendEscaped appends s escaped as the inside of a JSON string.
func appendEscaped(dst []byte, s string) []byte {
	n := len(dst)
	dst = AppendString(dst, s)
	// Drop the quotes.
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// leaf is a string or bare token of a JSON text.
type leaf struct {
	start, end int // quotes included for a string
	text       string
	bare       bool
}

// jsonLeaves returns the strings and bare tokens of s, which should be
// JSON but need not be: anything outside a string that is not white space
// or one of {}[],: is a bare token, and a string may be unterminated.
func jsonLeaves(s string) []leaf {
	var out []leaf
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isJSONSpace(c) || isStructural(c):
			i++
		case c == '"':
			text, n, _ := decodeChars(s[i+1:], true)
			out = append(out, leaf{start: i, end: i + 1 + n, text: text})
			i += 1 + n
		default:
			j := i
			for j < len(s) && !isJSONSpace(s[j]) && !isStructural(s[j]) && s[j] != '"' {
				j++
			}
			out = append(out, leaf{start: i, end: j, text: s[i:j], bare: true})
			i = j
		}
	}
	return out
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isStructural(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}

// decodeChars decodes the inside of a JSON string from the start of s up
// to and including its closing quote, leniently: an invalid escape stands
// for its character, a lone surrogate for U+FFFD. It returns the text, the
// bytes consumed (the closing quote included when closed) and whether the
// string closed. Unless final, an escape cut by the end of s is left
// unconsumed, for the next piece of a stream.
func decodeChars(s string, final bool) (text string, n int, closed bool) {
	var b []byte
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '"' {
			return string(b), i + 1, true
		}
		if c != '\\' {
			j := i
			for j < len(s) && s[j] != '"' && s[j] != '\\' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			if !final {
				return string(b), i, false
			}
			i++
			continue
		}
		switch e := s[i+1]; e {
		case 'u':
			r, w, ok := decodeU(s[i:], final)
			if !ok {
				return string(b), i, false // cut: wait for more
			}
			b = utf8.AppendRune(b, r)
			i += w
			continue
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		default: // '"', '\\', '/' and invalid escapes stand for the character
			b = append(b, e)
		}
		i += 2
	}
	return string(b), i, false
}

// decodeU decodes a \uXXXX escape at the start of s, with its low
// surrogate when it is a high one. ok is false when the escape is cut by
// the end of s and more may follow (not final).
func decodeU(s string, final bool) (r rune, n int, ok bool) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 4 {
			return 0, false
		}
		var v rune
		for i := 0; i < 4; i++ {
			c := s[i]
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return v, true
	}
	for k := 2; k < 6 && k < len(s); k++ {
		if !isHex(s[k]) {
			return 'u', 2, true // an invalid escape: its character
		}
	}
	if len(s) < 6 {
		if !final {
			return 0, 0, false
		}
		return utf8.RuneError, len(s), true
	}
	v, _ := hex4(s[2:6])
	if !utf16.IsSurrogate(v) {
		return v, 6, true
	}
	if v >= 0xDC00 {
		return utf8.RuneError, 6, true // a lone low surrogate
	}
	if len(s) < 12 && !final {
		if len(s) == 6 || s[6] == '\\' && (len(s) == 7 || s[7] == 'u') {
			return 0, 0, false
		}
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if lo, ok := hex4(s[8:12]); ok {
			if r := utf16.DecodeRune(v, lo); r != utf8.RuneError {
				return r, 12, true
			}
		}
	}
	return utf8.RuneError, 6, true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// skipValue returns the index after the value at b[i:].
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) || depth > maxDepth {
		return 0, errJSON
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		// Strings are skipped whole, so brackets in them do not count.
		open := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := stringEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				open++
				if depth+open > maxDepth {
					return 0, errJSON
				}
			case '}', ']':
				open--
				if open == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errJSON
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return 0, errJSON
	}
	return j, nil
}

// stringEnd returns the index after the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errJSON
}

// decodeString decodes a JSON string, quotes included.
func decodeString(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errJSON
	}
	return s, nil
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
