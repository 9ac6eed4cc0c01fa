// Package jsonstr appends text as JSON string literals without reflection
// or allocation: the hand-built JSON of stream events, translated provider
// bodies and stored spans. Quotes, backslashes and control characters are
// escaped; invalid UTF-8 becomes U+FFFD, as encoding/json does; U+2028 and
// U+2029 are escaped too, so the output is also safe inside JavaScript.
// HTML characters are left as they are (OpenAI's API does not escape them).
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// plain marks the bytes that stand for themselves inside a JSON string:
// printable ASCII but for the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Append appends s to dst as a quoted JSON string.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s to dst escaped for the inside of a JSON string
// (without the quotes).
func AppendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0 // s[start:i] needs no escaping
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
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
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		// At most utf8.UTFMax bytes: the conversion of a []byte stays on
		// the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}
