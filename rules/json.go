package rules

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Fields selects the string values of an OpenAI body that rules scan:
// message text, not the whole JSON, so that keys, ids and model names
// never match.
type Fields int

// The scanned fields of each kind of body.
const (
	// RequestFields: the content of every message (a string, or the text
	// of its text parts), a legacy prompt and an embeddings input (a
	// string or an array of strings).
	RequestFields Fields = iota
	// ResponseFields: the message content of every choice of a chat
	// completion and the text of a legacy completion.
	ResponseFields
	// ChunkFields: the content delta of a chat completion chunk and the
	// text of a legacy completion chunk.
	ChunkFields
)

// fieldPaths are the paths of each Fields: lists of object keys, "*"
// standing for any item of an array.
var fieldPaths = [...][][]string{
	RequestFields: {
		{"messages", "*", "content"},
		{"messages", "*", "content", "*", "text"},
		{"prompt"}, {"prompt", "*"},
		{"input"}, {"input", "*"},
	},
	ResponseFields: {
		{"choices", "*", "message", "content"},
		{"choices", "*", "text"},
	},
	ChunkFields: {
		{"choices", "*", "delta", "content"},
		{"choices", "*", "text"},
	},
}

// Text is one scanned string value of a JSON body.
type Text struct {
	// Start and End delimit the value in the body, quotes included.
	Start, End int
	// Text is the decoded string.
	Text string
	// Item is the position of the value's top-level array item
	// (choices[Item], messages[Item]); -1 when there is none.
	Item int
}

// maxDepth bounds the nesting Texts follows; deeper bodies are refused.
const maxDepth = 256

var errJSON = errors.New("rules: body is not valid JSON")

// Texts returns the string values of body at the given fields, in order.
// body must be one JSON value; an invalid one is an error.
func Texts(body []byte, fields Fields) ([]Text, error) {
	w := walker{b: body, fields: fieldPaths[fields]}
	i, err := w.value(skipSpace(body, 0), 0, -1)
	if err != nil {
		return nil, err
	}
	if skipSpace(body, i) != len(body) {
		return nil, errJSON
	}
	return w.out, nil
}

// Replace returns body with each text whose replacement differs from
// it re-encoded as that replacement; body itself when none differs.
// repl[i] is the new value of texts[i].
func Replace(body []byte, texts []Text, repl []string) []byte {
	var out []byte
	last := 0
	for i, t := range texts {
		if repl[i] == t.Text {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(body)+64)
		}
		out = append(out, body[last:t.Start]...)
		out = AppendString(out, repl[i])
		last = t.End
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

// walker visits a JSON value, keeping the path of the current value.
type walker struct {
	b      []byte
	fields [][]string
	path   []string
	out    []Text
}

// want reports whether the current path is one of the fields, or a
// prefix of one (so the walk must go deeper).
func (w *walker) want(prefix bool) bool {
	for _, f := range w.fields {
		if len(f) < len(w.path) || !prefix && len(f) != len(w.path) {
			continue
		}
		ok := true
		for i, p := range w.path {
			if f[i] != p {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// value reads the value at b[i:] and returns the index after it.
func (w *walker) value(i, depth, item int) (int, error) {
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
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, errJSON
			}
			w.path = append(w.path, key)
			if i, err = w.child(skipSpace(b, i+1), depth, item); err != nil {
				return 0, err
			}
			w.path = w.path[:len(w.path)-1]
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
			w.path = append(w.path, "*")
			it := item
			if len(w.path) == 2 {
				it = n // an item of a top-level array field
			}
			var err error
			if i, err = w.child(i, depth, it); err != nil {
				return 0, err
			}
			w.path = w.path[:len(w.path)-1]
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
		if w.want(false) {
			s, err := decodeString(b[i:end])
			if err != nil {
				return 0, err
			}
			w.out = append(w.out, Text{Start: i, End: end, Text: s, Item: item})
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

// child reads a member or item: fully when it may hold a wanted field,
// else it is skipped.
func (w *walker) child(i, depth, item int) (int, error) {
	if w.want(true) {
		return w.value(i, depth+1, item)
	}
	return skipValue(w.b, i, depth+1)
}

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
