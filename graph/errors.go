package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// GraphQL error codes (extensions.code). The domain's HTTP status maps to
// the names GraphQL clients (Apollo and others) recognise.
const (
	codeBadUserInput     = "BAD_USER_INPUT"
	codeUnauthenticated  = "UNAUTHENTICATED"
	codeForbidden        = "FORBIDDEN"
	codeNotFound         = "NOT_FOUND"
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	codeConflict         = "CONFLICT"
	codeGone             = "GONE"
	codePayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	codeRateLimited      = "RATE_LIMITED"
	codeInternal         = "INTERNAL_SERVER_ERROR"
	codeTooComplex       = "QUERY_TOO_COMPLEX"
	codeUnavailable      = "SERVICE_UNAVAILABLE"
)

// internalMessage is all a client learns of an unclassified error; the
// cause is logged with the request id.
const internalMessage = "internal error"

// codeFor returns the GraphQL code of an HTTP status.
func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return codeBadUserInput
	case http.StatusUnauthorized:
		return codeUnauthenticated
	case http.StatusForbidden:
		return codeForbidden
	case http.StatusNotFound:
		return codeNotFound
	case http.StatusMethodNotAllowed:
		return codeMethodNotAllowed
	case http.StatusConflict:
		return codeConflict
	case http.StatusGone:
		return codeGone
	case http.StatusRequestEntityTooLarge:
		return codePayloadTooLarge
	case http.StatusTooManyRequests:
		return codeRateLimited
	case http.StatusServiceUnavailable:
		return codeUnavailable
	}
	return codeInternal
}

// internalError marks an error a resolver returned that carries no
// *apierr.Error: its text may hold anything (SQL, paths), so the presenter
// logs it and answers internalMessage.
type internalError struct{ err error }

func (e *internalError) Error() string { return e.err.Error() }
func (e *internalError) Unwrap() error { return e.err }

// errIntrospection answers __schema and __type for callers other than the
// Administrator.
var errIntrospection = apierr.New(http.StatusForbidden, apierr.CodeForbidden, "introspection is available to the Administrator only")

// classifyErrors is the field middleware that sorts resolver errors before
// they reach the presenter. Only errors returned here come from resolvers
// (and so from the domain and the store); errors gqlgen raises itself while
// coercing arguments never pass through it and are the client's input.
func classifyErrors(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err == nil {
		return res, nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return res, err
	}
	if ae, ok := errors.AsType[*apierr.Error](admin.ClassifyError(err)); ok && ae.Status < http.StatusInternalServerError {
		// The caller's error in the domain's terms (an analytics query
		// the backend refused): answered as the classifier maps it, not
		// logged as an internal error.
		return res, ae
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && strings.HasPrefix(fc.Field.Name, "__") {
		// gqlgen's __schema and __type refuse with a plain error when the
		// operation context disabled introspection (see adminIntrospection).
		return res, errIntrospection
	}
	return res, &internalError{err: err}
}

// recoverPanic turns a panic in a resolver into an internal error; the
// presenter logs it with its stack.
func recoverPanic(_ context.Context, v any) error {
	return &internalError{err: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
}

// presenter returns the error presenter: every error of a response passes
// through it exactly once.
func presenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		if !errors.As(err, &gqlErr) {
			gqlErr = gqlerror.WrapPath(graphql.GetPath(ctx), err)
		}
		var ae *apierr.Error
		var ie *internalError
		switch {
		case errors.As(err, &ae):
			return present(gqlErr, ae)
		case errors.As(err, &ie):
			p := auth.From(ctx)
			attrs := []any{"err", ie.err, "path", gqlErr.Path.String()}
			if p != nil {
				attrs = append(attrs, "request_id", p.RequestID, "user_id", p.UserID)
			}
			log.ErrorContext(ctx, "graphql: internal error", attrs...)
			// admin.ClassifyError is the mapping the REST shims use too: a
			// store that cannot serve is a 503, anything else a 500.
			ae, known := apierr.From(admin.ClassifyError(ie.err))
			out := present(gqlErr, ae)
			if !known {
				out.Message = internalMessage
			}
			if p != nil && p.RequestID != "" {
				out.Extensions["requestId"] = p.RequestID
			}
			return out
		case gqlErr.Err != nil:
			// A wrapped error that did not come from a resolver: gqlgen
			// could not coerce an argument (a bad Time, USD or JSON value).
			return present(gqlErr, apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "%s", gqlErr.Message))
		}
		// gqlgen's own errors (parse, validation, limits, "must not be
		// null") carry their code already.
		return gqlErr
	}
}

// present copies the error's path and locations into a new GraphQL error
// with the message and extensions of ae.
func present(gqlErr *gqlerror.Error, ae *apierr.Error) *gqlerror.Error {
	ext := map[string]any{
		"code":      codeFor(ae.Status),
		"status":    ae.Status,
		"errorCode": ae.Code,
	}
	if ae.Param != "" {
		ext["param"] = ae.Param
	}
	return &gqlerror.Error{
		Message:    ae.Message,
		Path:       gqlErr.Path,
		Locations:  gqlErr.Locations,
		Extensions: ext,
		Rule:       gqlErr.Rule,
	}
}
