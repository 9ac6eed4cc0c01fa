package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/secret"
)

// The classification of failed calls (status, Retry-After, timeouts) and
// the scrubbing of secrets from upstream messages: what the transport
// does with every error before a codec sees it.

// transportError maps a failed fasthttp call to an *Error.
func (c *Client) transportError(ctx context.Context, err error, key secret.Value) *Error {
	switch {
	case ctx.Err() != nil:
		return ctxError(ctx)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return &Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("the upstream answer is larger than %d bytes", c.cfg.MaxResponseBytes)}
	}
	return &Error{Timeout: isTimeout(err), Err: ScrubError(err, key)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
}

// statusError builds the *Error of a non-2xx answer.
func statusError(status int, h *fasthttp.ResponseHeader, body []byte, key secret.Value) *Error {
	e := &Error{Status: status, RetryAfter: retryAfter(h, time.Now())}
	if status >= 300 && status < 400 {
		e.Message = "the upstream answered with a redirect, which is not followed"
		return e
	}
	e.KeyRejected = status == http.StatusUnauthorized || status == http.StatusForbidden ||
		status == http.StatusBadRequest && bytes.Contains(body, []byte(`"API_KEY_INVALID"`))
	e.Message = Scrub(ErrorMessage(body), key)
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(status))
	}
	return e
}

// retryAfter reads retry-after-ms (OpenAI, more precise) or Retry-After
// (seconds or an HTTP date).
func retryAfter(h *fasthttp.ResponseHeader, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Peek("Retry-After-Ms"); len(v) > 0 {
		if ms, err := strconv.ParseFloat(string(v), 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Peek("Retry-After"); len(v) > 0 {
		if s, err := strconv.ParseFloat(string(v), 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(string(v)); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, 0), MaxRetryAfter)
}

// keyPrefixes start the API keys of common providers; a token starting
// with one is redacted from upstream messages whoever's key it is.
var keyPrefixes = []string{"sk-", "sk_", "gsk_", "xai-", "pplx-", "csk-", "AIza", "fw_"}

// Redacted replaces what Scrub removes from a message.
const Redacted = "[REDACTED]"

// Scrub makes an upstream message safe to log and return: control
// characters become spaces, invalid UTF-8 is replaced, and it redacts the
// token after "Bearer ", tokens that look like API keys, and any run of 8
// or more characters of key; the result is cut to 500 bytes.
func Scrub(msg string, key secret.Value) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) > 8*MaxMessage {
		msg = msg[:8*MaxMessage]
	}
	b := []byte(msg)
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = ' '
		}
	}
	cut := make([]bool, len(b)) // bytes to redact
	mark := func(from, to int) {
		for i := from; i < to; i++ {
			cut[i] = true
		}
	}
	for i := 0; i < len(b); i++ {
		if i > 0 && isKeyChar(b[i-1]) {
			continue // only at the start of a token
		}
		rest := b[i:]
		if len(rest) > 7 && strings.EqualFold(string(rest[:7]), "bearer ") {
			j := i + 7
			for j < len(b) && b[j] == ' ' {
				j++
			}
			end := TokenEnd(b, j)
			mark(j, end)
			continue
		}
		for _, p := range keyPrefixes {
			if bytes.HasPrefix(rest, []byte(p)) {
				if end := TokenEnd(b, i+len(p)); end-(i+len(p)) >= 6 {
					mark(i, end)
				}
				break
			}
		}
	}
	if k := key.Reveal(); len(k) >= 8 {
		for i := 0; i+8 <= len(b); i++ {
			if strings.Contains(k, string(b[i:i+8])) {
				mark(i, i+8)
			}
		}
	}
	var out []byte
	for i := 0; i < len(b); {
		if !cut[i] {
			out = append(out, b[i])
			i++
			continue
		}
		out = append(out, Redacted...)
		for i < len(b) && cut[i] {
			i++
		}
	}
	out = bytes.TrimSpace(out)
	if len(out) > MaxMessage {
		n := MaxMessage
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = out[:n]
	}
	return string(out)
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// TokenEnd returns the end of the token starting at i: key characters
// plus the '*' of masked keys and the inner '.' of JWTs.
func TokenEnd(b []byte, i int) int {
	for i < len(b) && (isKeyChar(b[i]) || b[i] == '*' || b[i] == '.') {
		i++
	}
	for i > 0 && b[i-1] == '.' {
		i-- // a full stop ends the sentence, not the token
	}
	return i
}

// scrubbedError is a transport error whose text went through Scrub.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// ScrubError returns err with its text scrubbed of key (see Scrub); a
// refused address is returned as it is.
func ScrubError(err error, key secret.Value) error {
	var fe *ForbiddenAddrError
	if errors.As(err, &fe) {
		return err
	}
	return &scrubbedError{msg: Scrub(err.Error(), key), err: err}
}
