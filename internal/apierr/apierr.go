// Package apierr defines the one error shape Sluice answers with, on the
// admin API and the inference API alike:
//
//	{"error":{"type":"invalid_request_error","code":"invalid_json","message":"…","param":null}}
//
// Domain code returns *Error values (or wraps them); transports turn any
// error into the wire shape with From, so an unknown failure never leaks its
// text to a client.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error types, following OpenAI so that its SDKs raise the matching exception.
const (
	TypeInvalidRequest    = "invalid_request_error"
	TypeAuthentication    = "authentication_error"
	TypePermission        = "permission_error"
	TypeNotFound          = "not_found_error"
	TypeRateLimit         = "rate_limit_error"
	TypeInsufficientQuota = "insufficient_quota"
	TypeAPI               = "api_error"
)

// Error is an error with its HTTP status and wire fields.
type Error struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string // the offending field, or "" for null
	// Allow lists the methods of a 405 answer.
	Allow string
}

func (e *Error) Error() string { return e.Message }

// wire is the JSON body of an error.
type wire struct {
	Error wireBody `json:"error"`
}

type wireBody struct {
	Type    string  `json:"type"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
}

// MarshalJSON renders the error in the contract's shape.
func (e *Error) MarshalJSON() ([]byte, error) {
	b := wireBody{Type: e.Type, Code: e.Code, Message: e.Message}
	if e.Param != "" {
		p := e.Param
		b.Param = &p
	}
	return json.Marshal(wire{Error: b})
}

// Body returns the JSON body of the error.
func (e *Error) Body() []byte {
	b, _ := e.MarshalJSON() // only strings: cannot fail
	return b
}

// New returns an error with the given status; its type follows the status.
func New(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Type: typeFor(status), Code: code, Message: fmt.Sprintf(format, args...)}
}

func typeFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return TypeAuthentication
	case http.StatusForbidden:
		return TypePermission
	case http.StatusNotFound, http.StatusGone:
		return TypeNotFound
	case http.StatusTooManyRequests:
		return TypeRateLimit
	}
	if status >= http.StatusInternalServerError {
		return TypeAPI
	}
	return TypeInvalidRequest
}

// WithParam sets the offending field and returns e.
func (e *Error) WithParam(param string) *Error {
	e.Param = param
	return e
}

// Invalid is a 400 invalid_request naming the offending field.
func Invalid(param, format string, args ...any) *Error {
	return New(http.StatusBadRequest, CodeInvalidRequest, format, args...).WithParam(param)
}

// NotFound is a 404 for the named kind of resource. It is also the answer for
// a resource of another tenant, so that nothing can be enumerated.
func NotFound(kind string) *Error {
	return New(http.StatusNotFound, CodeNotFound, "%s not found", kind)
}

// Forbidden is a 403 naming the permission the caller lacks.
func Forbidden(permission string) *Error {
	return New(http.StatusForbidden, CodeForbidden, "this operation requires the permission %q, which your role does not have", permission)
}

// Conflict is a 409 for a duplicate.
func Conflict(param, format string, args ...any) *Error {
	return New(http.StatusConflict, CodeConflict, format, args...).WithParam(param)
}

// Unauthenticated is a 401.
func Unauthenticated(code, message string) *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeAuthentication, Code: code, Message: message}
}

// MethodNotAllowed is a 405 with the allowed methods.
func MethodNotAllowed(allow string) *Error {
	e := New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method not allowed; allowed: %s", allow)
	e.Allow = allow
	return e
}

// Internal is the 500 every unclassified error becomes. Its message says
// nothing about the cause; the cause is logged by the transport.
func Internal() *Error {
	return New(http.StatusInternalServerError, CodeInternal, "internal error; the request id identifies it in the server log")
}

// Unavailable is a 503, e.g. when the store cannot be reached.
func Unavailable(format string, args ...any) *Error {
	return New(http.StatusServiceUnavailable, CodeUnavailable, format, args...)
}

// From classifies err. The second result is false when err carried no *Error
// and was turned into Internal; the caller should log the original then.
func From(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return Internal(), false
}
