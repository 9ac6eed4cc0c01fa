package rest

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/apierr"
)

// requestPath returns the path exactly as the client sent it: the request
// target up to '?', or the escaped URL path when the target is not in
// origin form (or the request was built without one, as in some tests).
// The router and the authentication middleware both use it, so the path
// that is authenticated is the path that is dispatched.
func requestPath(r *http.Request) string {
	if t := r.RequestURI; strings.HasPrefix(t, "/") {
		p, _, _ := strings.Cut(t, "?")
		return p
	}
	return r.URL.EscapedPath()
}

func invalidPath(reason string) *apierr.Error {
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidPath, "the request path is not canonical: %s", reason)
}

// splitPath checks that raw is a canonical path and returns its segments,
// both as sent and percent-decoded. It never normalises: a path that would
// need cleaning (dot segments, empty segments, a trailing slash, escaped
// separators or dots, backslashes, control bytes) is rejected, because a
// path that means different things to different parsers is how route
// checks get bypassed. The root "/" has no segments.
func splitPath(raw string) (rawSegs, segs []string, err error) {
	if raw == "" || raw[0] != '/' {
		return nil, nil, invalidPath("it must start with /")
	}
	if raw == "/" {
		return nil, nil, nil
	}
	if raw[len(raw)-1] == '/' {
		return nil, nil, invalidPath("it must not end with /")
	}
	rawSegs = strings.Split(raw[1:], "/")
	segs = make([]string, len(rawSegs))
	for i, s := range rawSegs {
		switch s {
		case "":
			return nil, nil, invalidPath(`it must not contain "//"`)
		case ".", "..":
			return nil, nil, invalidPath(`it must not contain "." or ".." segments`)
		}
		d, err := decodeSegment(s)
		if err != nil {
			return nil, nil, err
		}
		segs[i] = d
	}
	return rawSegs, segs, nil
}

// decodeSegment percent-decodes one path segment, rejecting backslashes,
// control bytes, malformed escapes, escapes of '/', '\\', '.' or control
// bytes, and values that are not valid UTF-8.
func decodeSegment(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		for i := 0; i < len(s); i++ {
			if err := checkByte(s[i], false); err != nil {
				return "", err
			}
		}
		if !utf8.ValidString(s) {
			return "", invalidPath("it is not valid UTF-8")
		}
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		escaped := false
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", invalidPath("it contains a malformed percent-escape")
			}
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			escaped = true
		}
		if err := checkByte(c, escaped); err != nil {
			return "", err
		}
		b = append(b, c)
	}
	if !utf8.Valid(b) {
		return "", invalidPath("it is not valid UTF-8")
	}
	return string(b), nil
}

func checkByte(c byte, escaped bool) error {
	switch {
	case c < 0x20 || c == 0x7f:
		return invalidPath("it contains a control character")
	case c == '\\':
		return invalidPath("it contains a backslash")
	case escaped && (c == '/' || c == '.'):
		return invalidPath(`it contains an escaped "/" or "."`)
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
