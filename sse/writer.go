package sse

import "unicode/utf8"

// Done is the OpenAI end-of-stream event.
var Done = []byte("data: [DONE]\n\n")

// AppendData appends the event "data: <data>\n\n" to dst and returns the
// extended slice. data must not contain CR or LF: it is one line, as a
// JSON chunk always is (JSON escapes both inside strings).
func AppendData(dst, data []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// AppendError appends an OpenAI-style error event,
// data: {"error":{"type":…,"code":…,"message":…}}, to dst. The strings
// are JSON-escaped; invalid UTF-8 becomes U+FFFD.
func AppendError(dst []byte, typ, code, msg string) []byte {
	dst = append(dst, `data: {"error":{"type":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"code":`...)
	dst = appendJSONString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}}\n\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Besides what JSON requires
// it escapes U+2028 and U+2029, so the event is also safe to hand to a
// JavaScript parser.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
