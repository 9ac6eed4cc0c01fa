package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluicehq/sluice/internal/apierr"
)

// wireError is the decoded error shape, for comparisons.
type wireError struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   *string
}

func ptr[T any](v T) *T { return &v }

// readError decodes an error answer, failing the test when it is not one.
func readError(t *testing.T, rec *httptest.ResponseRecorder) wireError {
	t.Helper()
	var body struct {
		Error struct {
			Type    string  `json:"type"`
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("error body %q: %v", rec.Body.String(), err)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if got := rec.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
	e := body.Error
	return wireError{Status: rec.Code, Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param}
}

// asWire renders an error returned by a function of this package as the
// client would see it.
func asWire(t *testing.T, err error) wireError {
	t.Helper()
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil), err)
	return readError(t, rec)
}

// wantErr is the expected wire error; Message is compared only when set.
func wantErr(status int, code, param string) wireError {
	w := wireError{Status: status, Type: apierr.New(status, code, "").Type, Code: code}
	if param != "" {
		w.Param = ptr(param)
	}
	return w
}

// diffError compares got to want, ignoring the message unless want has one.
func diffError(got, want wireError) string {
	if want.Message == "" {
		got.Message = ""
	}
	return cmp.Diff(want, got)
}

// captureLog sends slog's default logger to a buffer for the test. Tests
// that use it must not run in parallel.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func fmtWrap(err error) error { return fmt.Errorf("create gateway: %w", err) }

func dial(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }

func readAllBody(r *http.Request) ([]byte, error) { return io.ReadAll(r.Body) }
