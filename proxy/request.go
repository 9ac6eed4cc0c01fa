package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
)

// inbound is what the gateway reads of a validated request body. The body
// itself travels on as bytes.
type inbound struct {
	model        string
	stream       bool
	includeUsage bool
	// maxTokens is max_completion_tokens or max_tokens, 0 when absent.
	maxTokens int64
	n         int64
	// wire is the format of the body for the providers: the zero value
	// (OpenAI chat) but on a native door (proxy/door_native.go).
	wire llm.Wire
	// body, when set, is the body to forward in place of the client's: a
	// translating door's OpenAI chat body (messagesDoor).
	body []byte
	// neutral is the translating door's neutral request when it holds
	// thinking the OpenAI body cannot carry (providers.Request.Neutral).
	neutral *llm.Request
	// thinkingBlocks says the door gives answers' thinking blocks back
	// (providers.Request.ThinkingBlocks).
	thinkingBlocks bool
}

// forbiddenFields are body fields that would let a client choose where the
// gateway sends a request, or with which credentials (CVE-2024-6587 class).
var forbiddenFields = []string{"api_base", "base_url", "custom_host", "api_key", "api_version",
	"extra_headers", "headers", "host", "url", "organization", "deployment_id"}

// parseBody validates body for op with a pooled parser. It refuses what a
// parser differential could exploit: invalid UTF-8 and duplicate keys at
// any depth (the gateway and the upstream must read the same object).
func parseBody(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	var in inbound
	if len(body) == 0 {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body is empty")
	}
	if !utf8.Valid(body) {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "request body is not valid UTF-8")
	}
	if tooDeep(body, maxDepth) {
		// Checked before fastjson, which builds an error string per level
		// when it gives up at its own limit (4.5 MB for a 600-byte body).
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body nests arrays and objects deeper than %d levels", maxDepth)
	}
	v, err := p.ParseBytes(body)
	if err != nil {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body is not valid JSON: %s", shortErr(err))
	}
	// fastjson is lenient: it takes raw control characters in strings and
	// unknown escapes ("\x"), which strict parsers refuse or read
	// differently (a key "api_b\ase"). Only JSON that a strict parser
	// reads the same way goes on; the parse above has bounded the depth.
	if !json.Valid(body) {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body is not valid JSON: a string holds a control character or an invalid escape")
	}
	if loneSurrogate(body) {
		// Parsers disagree on these: U+FFFD, kept as is, or an error.
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "request body has a \\u escape of a lone UTF-16 surrogate")
	}
	obj, err := v.Object()
	if err != nil {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body must be a JSON object")
	}
	nonFinite := false
	if key, dup := duplicateKey(v, 0, &nonFinite); dup {
		return in, apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body has the key %q more than once", key)
	}
	if e := checkNumbers(obj, op, nonFinite); e != nil {
		return in, e
	}
	for _, f := range forbiddenFields {
		if obj.Get(f) != nil {
			return in, apierr.Invalid(f, "the field %s is not accepted: the gateway's configuration chooses the upstream and its credentials", f)
		}
	}
	m := obj.Get("model")
	if m == nil || m.Type() != fastjson.TypeString {
		return in, apierr.Invalid("model", "model is required and must be a string")
	}
	mb, _ := m.StringBytes()
	if len(mb) == 0 || len(mb) > 256 {
		return in, apierr.Invalid("model", "model must be 1 to 256 characters")
	}
	for _, c := range mb {
		if c < 0x20 || c == 0x7f {
			return in, apierr.Invalid("model", "model may not contain control characters")
		}
	}
	in.model = string(mb)
	if s := obj.Get("stream"); s != nil && s.Type() != fastjson.TypeNull {
		b, err := s.Bool()
		if err != nil {
			return in, apierr.Invalid("stream", "stream must be a boolean")
		}
		in.stream = b
	}
	if so := obj.Get("stream_options"); so != nil && so.Type() != fastjson.TypeNull {
		o, err := so.Object()
		if err != nil {
			return in, apierr.Invalid("stream_options", "stream_options must be an object")
		}
		if iu := o.Get("include_usage"); iu != nil && iu.Type() != fastjson.TypeNull {
			b, err := iu.Bool()
			if err != nil {
				return in, apierr.Invalid("stream_options.include_usage", "stream_options.include_usage must be a boolean")
			}
			in.includeUsage = b
		}
	}
	for _, f := range []string{"max_completion_tokens", "max_tokens"} {
		if x := obj.Get(f); x != nil && x.Type() != fastjson.TypeNull {
			n, err := x.Int64()
			if err != nil || n < 1 || n > 10_000_000 {
				return in, apierr.Invalid(f, "%s must be a positive integer", f)
			}
			if in.maxTokens == 0 {
				in.maxTokens = n
			}
		}
	}
	in.n = 1
	if x := obj.Get("n"); x != nil && x.Type() != fastjson.TypeNull {
		n, err := x.Int64()
		if err != nil || n < 1 || n > 128 {
			return in, apierr.Invalid("n", "n must be an integer between 1 and 128")
		}
		in.n = n
	}
	switch op {
	case llm.OpChat:
		msgs := obj.Get("messages")
		if msgs == nil || msgs.Type() != fastjson.TypeArray || len(msgs.GetArray()) == 0 {
			return in, apierr.Invalid("messages", "messages is required and must be a non-empty array")
		}
	case llm.OpCompletions:
		if obj.Get("prompt") == nil {
			return in, apierr.Invalid("prompt", "prompt is required")
		}
	case llm.OpEmbeddings:
		if obj.Get("input") == nil {
			return in, apierr.Invalid("input", "input is required")
		}
		if in.stream {
			return in, apierr.Invalid("stream", "embeddings cannot be streamed")
		}
	case llm.OpResponses:
		if x := obj.Get("max_output_tokens"); x != nil && x.Type() != fastjson.TypeNull {
			n, err := x.Int64()
			if err != nil || n < 1 || n > 10_000_000 {
				return in, apierr.Invalid("max_output_tokens", "max_output_tokens must be a positive integer")
			}
			in.maxTokens = n
		}
	case llm.OpMessages, llm.OpCountTokens:
		msgs := obj.Get("messages")
		if msgs == nil || msgs.Type() != fastjson.TypeArray || len(msgs.GetArray()) == 0 {
			return in, apierr.Invalid("messages", "messages is required and must be a non-empty array")
		}
		if in.stream && op == llm.OpCountTokens {
			return in, apierr.Invalid("stream", "a token count cannot be streamed")
		}
	}
	return in, nil
}

// duplicateKey reports the first key that appears twice in one object,
// at any depth up to fastjson's own limit. The same walk sets *nonFinite
// when a number is not a finite double (checkNumbers).
func duplicateKey(v *fastjson.Value, depth int, nonFinite *bool) (string, bool) {
	switch v.Type() {
	case fastjson.TypeNumber:
		if !*nonFinite && !finite(v) {
			*nonFinite = true
		}
	case fastjson.TypeObject:
		o, _ := v.Object()
		var key string
		dup := false
		n := o.Len()
		if n > 1 {
			// Objects of requests are small; a quadratic scan allocates nothing.
			i := 0
			var keys [32][]byte
			var big map[string]struct{}
			if n > len(keys) {
				big = make(map[string]struct{}, n)
			}
			o.Visit(func(k []byte, _ *fastjson.Value) {
				if dup {
					return
				}
				if big != nil {
					if _, ok := big[string(k)]; ok {
						key, dup = string(k), true
					}
					big[string(k)] = struct{}{}
					return
				}
				for _, seen := range keys[:i] {
					if string(seen) == string(k) {
						key, dup = string(k), true
						return
					}
				}
				keys[i] = k
				i++
			})
			if dup {
				return key, true
			}
		}
		o.Visit(func(_ []byte, c *fastjson.Value) {
			if !dup {
				key, dup = duplicateKey(c, depth+1, nonFinite)
			}
		})
		return key, dup
	case fastjson.TypeArray:
		for _, c := range v.GetArray() {
			if k, dup := duplicateKey(c, depth+1, nonFinite); dup {
				return k, true
			}
		}
	}
	return "", false
}

// loneSurrogate reports a \uD800–\uDFFF escape that is not a high
// surrogate followed by a low one. body is valid JSON, so every backslash
// starts an escape inside a string.
func loneSurrogate(body []byte) bool {
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if i >= len(body) || body[i] != 'u' || i+4 >= len(body) {
			continue
		}
		r := hex4(body[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
				return true
			}
			if lo := hex4(body[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// hex4 decodes four hex digits (checked by the JSON validation).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// maxDepth is the deepest nesting of arrays and objects a request body may
// have. Real requests nest a few levels, tool schemas a few dozen.
const maxDepth = 128

// tooDeep reports whether body, valid UTF-8 and maybe JSON, nests arrays
// and objects deeper than max. Most bodies have fewer brackets than max
// and are not scanned; the scan skips strings with IndexByte.
func tooDeep(body []byte, max int) bool {
	if bytes.Count(body, []byte("["))+bytes.Count(body, []byte("{")) <= max {
		return false // cannot nest deeper than it has brackets: no scan
	}
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			// The string ends at the next quote not escaped by an odd
			// run of backslashes.
			for {
				j := bytes.IndexByte(body[i+1:], '"')
				if j < 0 {
					return false // unterminated: the parser refuses it
				}
				i += j + 1
				k := i - 1
				for k >= 0 && body[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '[', '{':
			depth++
			if depth > max {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}

// shortErr keeps a parser error short: fastjson quotes the input around the
// offending position, which may be large or hold secrets.
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
