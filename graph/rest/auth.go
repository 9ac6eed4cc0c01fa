package rest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
)

// Authenticator resolves an admin credential (the bearer secret) to a
// principal. It answers an unknown, revoked or wrong-kind credential with a
// 401 *apierr.Error. The returned principal is not modified: Authenticate
// works on a copy, so an implementation may return a shared one.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (*auth.Principal, error)
}

// maxSecretLen bounds a credential before it reaches the Authenticator.
// Sluice's secrets are under 64 bytes; session tokens are short too.
const maxSecretLen = 512

// Authenticate is the one middleware every admin credential goes through.
// It gives the request an id (the front server's X-Sluice-Request-Id, or a
// new UUIDv7), sent back in the same header and kept in the context. On the
// exact paths in public (e.g. /admin/v1/session) it calls next without a
// credential. Elsewhere it reads the secret from Authorization: Bearer (the
// scheme in any case) or x-api-key, resolves it with a, and calls next with
// the principal, carrying the request id and the client IP, in the context
// (auth.From). No credential is 401 missing_token; a malformed one is 401
// invalid_token. The secret never appears in an answer or a log.
func Authenticate(a Authenticator, next http.Handler, public ...string) http.Handler {
	open := make(map[string]bool, len(public))
	for _, p := range public {
		open[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = ids.UUIDv7()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := withRequestID(r.Context(), id)
		r = r.WithContext(ctx)
		// The same raw path the router dispatches on: a path is public only
		// when it is exactly a public route.
		if open[requestPath(r)] {
			next.ServeHTTP(w, r)
			return
		}
		secret, err := credential(r.Header)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		p, err := a.Authenticate(ctx, secret)
		if err != nil {
			WriteError(w, r, redact(err, secret))
			return
		}
		if p == nil {
			WriteError(w, r, apierr.Unauthenticated(apierr.CodeInvalidToken, "the credential is not valid"))
			return
		}
		cp := *p
		cp.RequestID = id
		cp.IP = clientIP(r.RemoteAddr)
		next.ServeHTTP(w, r.WithContext(auth.With(ctx, &cp)))
	})
}

// credential returns the secret of the request's one credential header.
func credential(h http.Header) (string, error) {
	bearer, keys := h.Values("Authorization"), h.Values("X-Api-Key")
	switch {
	case len(bearer) == 0 && len(keys) == 0:
		return "", apierr.Unauthenticated(apierr.CodeMissingToken,
			"an admin credential is required: send Authorization: Bearer <token>")
	case len(bearer)+len(keys) > 1:
		return "", apierr.Unauthenticated(apierr.CodeInvalidToken,
			"send exactly one credential, in Authorization or x-api-key")
	case len(keys) == 1:
		if !validSecret(keys[0]) {
			return "", apierr.Unauthenticated(apierr.CodeInvalidToken, "the x-api-key header must hold one token")
		}
		return keys[0], nil
	}
	scheme, secret, ok := strings.Cut(bearer[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !validSecret(secret) {
		return "", apierr.Unauthenticated(apierr.CodeInvalidToken,
			"the Authorization header must be \"Bearer <token>\" with one token")
	}
	return secret, nil
}

// validSecret accepts one non-empty token of visible ASCII: no spaces, so
// "Bearer a b" and "Bearer  a" are malformed rather than guessed at.
func validSecret(s string) bool {
	if s == "" || len(s) > maxSecretLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// clientIP returns the host part of a RemoteAddr. Forwarding headers are
// ignored: they are the client's to forge.
func clientIP(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

// redact hides secret in err: in the message of a *apierr.Error, which is
// answered, and in the text of any other error, which is logged.
func redact(err error, secret string) error {
	if e, ok := errors.AsType[*apierr.Error](err); ok {
		if !strings.Contains(e.Message, secret) {
			return e
		}
		c := *e
		c.Message = strings.ReplaceAll(c.Message, secret, "[REDACTED]")
		return &c
	}
	return redactedError{err: err, secret: secret}
}

// redactedError hides the secret in the text of an Authenticator's error,
// which WriteError logs when it is unclassified.
type redactedError struct {
	err    error
	secret string
}

func (e redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "[REDACTED]")
}

func (e redactedError) Unwrap() error { return e.err }
