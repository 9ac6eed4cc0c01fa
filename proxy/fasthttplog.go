package proxy

import (
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// fasthttpLogger sends fasthttp's log lines to slog, redacted. fasthttp
// logs the error of every connection it could not serve, and its parse
// errors quote request bytes: "invalid header value \"Bearer sk-…\"" for a
// header value with a NUL or CR (SecureErrorLogMessage does not cover
// that one), the request URI with its query string in the lines of
// RequestCtx.Logger, form fields and chunk bytes elsewhere. Any of them may
// be a credential, so redactLogText masks every quoted string that is not
// a network address, every query string, and whatever looks like a bearer
// token or an API key, whatever fasthttp's next release logs.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Warn(redactLogText(fmt.Sprintf(format, args...)), "component", "fasthttp")
}

const redactedText = "[REDACTED]"

var (
	// queryString is a URI's query, up to the next space or quote.
	queryString = regexp.MustCompile(`\?[^\s"]*`)
	// credentialLike is a bearer token or a token with the prefix of a
	// common provider's API key or a Sluice token.
	credentialLike = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[^\s"]+|\b(sk-|sk_|gsk_|xai-|pplx-|csk-|aiza|fw_)[\w\-*.]{6,}`)
)

// redactLogText masks what in a log line made of request bytes may be a
// secret: fasthttp's lines (see fasthttpLogger) and recovered panics.
func redactLogText(msg string) string {
	var b strings.Builder
	b.Grow(len(msg))
	for i := 0; i < len(msg); {
		if msg[i] != '"' {
			j := strings.IndexByte(msg[i:], '"')
			if j < 0 {
				j = len(msg) - i
			}
			b.WriteString(msg[i : i+j])
			i += j
			continue
		}
		q, err := strconv.QuotedPrefix(msg[i:])
		if err != nil {
			// An unterminated quote: everything after it may be request
			// bytes.
			b.WriteString(`"` + redactedText)
			break
		}
		if v, err := strconv.Unquote(q); err == nil && isAddress(v) {
			b.WriteString(q)
		} else {
			b.WriteString(`"` + redactedText + `"`)
		}
		i += len(q)
	}
	out := queryString.ReplaceAllString(b.String(), "?"+redactedText)
	return credentialLike.ReplaceAllStringFunc(out, func(m string) string {
		if sub := credentialLike.FindStringSubmatch(m); sub[1] != "" {
			return sub[1] + sub[2] + redactedText
		}
		return redactedText
	})
}

// isAddress reports whether v is an IP address or IP address and port, as
// fasthttp logs the two ends of a connection.
func isAddress(v string) bool {
	if _, err := netip.ParseAddrPort(v); err == nil {
		return true
	}
	_, err := netip.ParseAddr(v)
	return err == nil
}
