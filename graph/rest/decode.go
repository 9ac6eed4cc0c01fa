package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/apierr"
)

// MaxBodyBytes bounds an admin request body. The largest admin body is a
// price list (PUT /admin/v1/model-prices): a few hundred bytes per model,
// so 1 MiB holds thousands of entries and still bounds memory per request.
const MaxBodyBytes = 1 << 20

// DecodeJSON decodes the JSON body of r into v, strictly: the body must be
// sent as application/json, be at most MaxBodyBytes, hold exactly one JSON
// value and name no field v does not have. Every failure is a *apierr.Error
// for the client (400 invalid_json or invalid_request with param, 413
// body_too_large, 415 unsupported_media_type), except a v that cannot be
// decoded into (a programming error), which is returned as is and so
// becomes a 500.
func DecodeJSON(r *http.Request, v any) error {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return errEmptyBody()
	}
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if r.ContentLength > MaxBodyBytes {
		return errTooLarge()
	}
	// A nil writer is allowed: the router has already wrapped the body with
	// its writer, so the server closes the connection after an overflow.
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errTooLarge()
		}
		return fmt.Errorf("read request body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errEmptyBody()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, len(body))
	}
	if rest := bytes.TrimSpace(body[dec.InputOffset():]); len(rest) > 0 {
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON,
			"the request body has data after the JSON value, at offset %d", len(body)-len(rest))
	}
	return nil
}

func errEmptyBody() error {
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "request body is empty")
}

func errTooLarge() error {
	return apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge,
		"the request body is larger than the limit of %d bytes (1 MiB)", MaxBodyBytes)
}

// checkContentType accepts application/json with any parameters, except a
// charset other than UTF-8 (JSON is UTF-8).
func checkContentType(ct string) error {
	bad := apierr.New(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
		"the request body must be JSON, sent with Content-Type: application/json")
	if ct == "" {
		return bad
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return bad
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return bad
	}
	return nil
}

// decodeError classifies an error of json.Decoder.Decode on a body of n
// bytes.
func decodeError(err error, n int) error {
	if e, ok := errors.AsType[*apierr.Error](err); ok {
		return e // from a custom UnmarshalJSON that speaks apierr already
	}
	if e, ok := errors.AsType[*json.SyntaxError](err); ok {
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON,
			"the request body is not valid JSON: %s (at offset %d)", strings.TrimPrefix(e.Error(), "json: "), e.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON,
			"the request body is not valid JSON: it ends early (at offset %d)", n)
	}
	if e, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		want := describeType(e.Type, e.Value)
		if e.Field == "" {
			return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "the request body must be %s", want)
		}
		return apierr.Invalid(e.Field, "field %s must be %s", e.Field, want)
	}
	if _, ok := errors.AsType[*json.InvalidUnmarshalError](err); ok {
		return err // the handler passed a non-pointer: a bug, answered 500
	}
	msg := err.Error()
	if i := strings.Index(msg, "json: unknown field "); i >= 0 {
		if name, uerr := strconv.Unquote(msg[i+len("json: unknown field "):]); uerr == nil {
			return apierr.Invalid(name, "unknown field %q", name)
		}
	}
	// Any other error comes from a custom UnmarshalJSON rejecting the
	// client's value (a nested strict decode, a time, an enum): it describes
	// the input, so it is answered.
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "%s", strings.TrimPrefix(msg, "json: "))
}

// describeType names the JSON kind a Go type expects, for messages such as
// "field max_attempts must be a number". value is the JSON value found
// ("string", "number 1.5", …).
func describeType(t reflect.Type, value string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a valid value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if strings.HasPrefix(value, "number") {
			return "an integer" // a number, but fractional or out of range
		}
		return "a number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a valid value"
}
