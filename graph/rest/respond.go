package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// setHeaders sets the headers of every JSON answer. Admin answers carry
// tenant data and, at creation, secrets: no cache may keep them.
func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}

// JSON answers status with v encoded as JSON. An encoding failure is
// returned before anything is written, so the caller can still answer it.
// A failed write is not returned: the client is gone and nothing can be
// answered.
func JSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	setHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// NoContent answers 204 with no body (a delete). It returns nil, so that a
// handler can end with return rest.NoContent(w).
func NoContent(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listPage is the list shape of CONTRACT §2.
type listPage[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

// List answers 200 with {"data":[…],"next_cursor":…}: next is the cursor of
// the following page, or nil (null) on the last one. A nil data is sent as
// [], never null.
func List[T any](w http.ResponseWriter, data []T, next *string) error {
	if data == nil {
		data = []T{}
	}
	return JSON(w, http.StatusOK, listPage[T]{Data: data, NextCursor: next})
}

// WriteError is the one place an error becomes a response. A *apierr.Error
// (found with errors.As) is answered as it is, with Allow on a 405,
// WWW-Authenticate on a 401 and Retry-After on a 429 or 503. Any other
// error is answered as admin.ClassifyError maps it: the caller's error
// (an analytics query the backend refused) as its 400, 503 when the store
// cannot serve, else the generic 500, whose text never reaches the client;
// the 5xx are logged with the request id.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e, _ := apierr.From(admin.ClassifyError(err))
	if _, ok := errors.AsType[*apierr.Error](err); !ok && e.Status >= http.StatusInternalServerError {
		slog.ErrorContext(r.Context(), "admin request failed",
			"request_id", requestID(r), "method", r.Method, "path", requestPath(r), "err", err)
	}
	setHeaders(w)
	h := w.Header()
	if e.Status == http.StatusMethodNotAllowed && e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	if e.Status == http.StatusTooManyRequests && h.Get("Retry-After") == "" {
		// The admin API's limits are per minute (sign-in, client errors).
		h.Set("Retry-After", "60")
	}
	if e.Status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		// The store coming back, or a hash slot freeing up: seconds.
		h.Set("Retry-After", "5")
	}
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="sluice"`)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(e.Body(), '\n'))
}

// RequestIDHeader carries the request id: set by the front server on the
// request, or made by Authenticate, and sent back on every admin answer.
const RequestIDHeader = "X-Sluice-Request-Id"

type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id that Authenticate stored in ctx (also on
// public paths, where there is no principal), or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID returns the id to log a request under: the one Authenticate
// chose, the principal's, or a well-formed header from the front server.
func requestID(r *http.Request) string {
	if id := RequestID(r.Context()); id != "" {
		return id
	}
	if p := auth.From(r.Context()); p != nil && p.RequestID != "" {
		return p.RequestID
	}
	if id := r.Header.Get(RequestIDHeader); validRequestID(id) {
		return id
	}
	return ""
}

// validRequestID accepts the ids a front server makes (UUIDs, ULIDs and
// the like) and nothing that could forge a log line.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
