package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
)

// credential returns the token a client presented: "Authorization: Bearer
// <token>", "x-api-key: <token>" or "api-key: <token>" — one code path for
// the three SDK conventions. More than one of them, or a malformed
// Authorization header, is refused rather than guessed.
func credential(h *fasthttp.RequestHeader) ([]byte, *apierr.Error) {
	var found []byte
	n := 0
	if a := h.Peek(fasthttp.HeaderAuthorization); len(a) > 0 {
		n++
		scheme, tok, ok := bytes.Cut(a, []byte(" "))
		if !ok || !bytes.EqualFold(scheme, []byte("bearer")) || len(tok) == 0 || bytes.IndexByte(tok, ' ') >= 0 {
			return nil, apierr.Unauthenticated(apierr.CodeInvalidToken, "the Authorization header must be \"Bearer <token>\"")
		}
		found = tok
	}
	for _, name := range [...]string{"x-api-key", "api-key"} {
		if v := h.Peek(name); len(v) > 0 {
			n++
			found = v
		}
	}
	switch {
	case n == 0:
		return nil, apierr.Unauthenticated(apierr.CodeMissingToken, "an API token is required: send it as \"Authorization: Bearer <token>\"")
	case n > 1:
		return nil, apierr.Unauthenticated(apierr.CodeInvalidToken, "send the API token in one header only")
	case len(found) > 512:
		return nil, apierr.Unauthenticated(apierr.CodeInvalidToken, "the token is not valid")
	}
	return found, nil
}

// metadata parses x-sluice-metadata: a JSON object of at most 8 string
// values (keys ≤ 64 bytes, values ≤ 256 bytes).
func metadata(v []byte) (map[string]string, *apierr.Error) {
	if len(v) == 0 {
		return nil, nil
	}
	var m map[string]string
	if len(v) > 4096 || json.Unmarshal(v, &m) != nil {
		return nil, apierr.Invalid("x-sluice-metadata", "x-sluice-metadata must be a JSON object of string values")
	}
	if len(m) > 8 {
		return nil, apierr.Invalid("x-sluice-metadata", "x-sluice-metadata has more than 8 entries")
	}
	for k, val := range m {
		if len(k) == 0 || len(k) > 64 || len(val) > 256 {
			return nil, apierr.Invalid("x-sluice-metadata", "x-sluice-metadata keys must be 1–64 bytes and values at most 256 bytes")
		}
	}
	return m, nil
}

// requestHeaders are the x-sluice-* request headers (CONTRACT §5),
// validated by the prepare step before anything is counted.
type requestHeaders struct {
	// maxAttempts is x-sluice-max-attempts, 0 when absent: it may only
	// lower the gateway's retry.max_attempts.
	maxAttempts int
	// timeoutMS is x-sluice-request-timeout, 0 when absent: it may only
	// lower the gateway's request_timeout_ms.
	timeoutMS int
	// cacheTTL is x-sluice-cache-ttl in seconds, 0 when absent: it may
	// only shorten the gateway's cache TTL.
	cacheTTL int
	// skipCache is x-sluice-skip-cache.
	skipCache bool
}

// Bounds of the numeric x-sluice-* headers.
const (
	maxAttemptsHeader = 10
	maxRequestTimeout = 600000 // ms: 10 minutes
	// maxCacheTTLSeconds bounds x-sluice-cache-ttl: 7 days, as the
	// gateway's own ttl_seconds.
	maxCacheTTLSeconds = 7 * 86400
)

// readHeaders validates every x-sluice-* request header and keeps what
// the later steps need. A malformed one is a 400 naming the header.
func readHeaders(hd *fasthttp.RequestHeader, out *requestHeaders) (map[string]string, *apierr.Error) {
	var e *apierr.Error
	if out.maxAttempts, e = positiveHeader(hd, "x-sluice-max-attempts", maxAttemptsHeader); e != nil {
		return nil, e
	}
	if out.timeoutMS, e = positiveHeader(hd, "x-sluice-request-timeout", maxRequestTimeout); e != nil {
		return nil, e
	}
	if out.cacheTTL, e = positiveHeader(hd, "x-sluice-cache-ttl", maxCacheTTLSeconds); e != nil {
		return nil, e
	}
	if out.skipCache, e = skipCache(hd); e != nil {
		return nil, e
	}
	return metadata(hd.Peek("x-sluice-metadata"))
}

// skipCache reads x-sluice-skip-cache: true or 1 skips the cache.
func skipCache(hd *fasthttp.RequestHeader) (bool, *apierr.Error) {
	v := hd.Peek("x-sluice-skip-cache")
	switch {
	case len(v) == 0, equalFoldASCII(v, "false"), string(v) == "0":
		return false, nil
	case equalFoldASCII(v, "true"), string(v) == "1":
		return true, nil
	}
	return false, apierr.Invalid("x-sluice-skip-cache", "x-sluice-skip-cache must be true or false")
}

// positiveHeader parses an optional positive integer header bounded by max.
func positiveHeader(h *fasthttp.RequestHeader, name string, max int) (int, *apierr.Error) {
	v := h.Peek(name)
	if len(v) == 0 {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 || n > max {
		return 0, apierr.Invalid(name, "%s must be an integer between 1 and %d", name, max)
	}
	return n, nil
}

// retryAfterSeconds renders a Retry-After value, at least 1 s.
func retryAfterSeconds(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10)
}
