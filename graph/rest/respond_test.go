package rest

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
)

func TestList(t *testing.T) {
	type item struct {
		ID string `json:"id"`
	}
	tests := []struct {
		name string
		data []item
		next *string
		want string
	}{
		{"nil data is []", nil, nil, `{"data":[],"next_cursor":null}` + "\n"},
		{"empty", []item{}, nil, `{"data":[],"next_cursor":null}` + "\n"},
		{"with cursor", []item{{"a"}, {"b"}}, ptr("c2"), `{"data":[{"id":"a"},{"id":"b"}],"next_cursor":"c2"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if err := List(rec, tt.data, tt.next); err != nil {
				t.Fatal(err)
			}
			if rec.Code != http.StatusOK {
				t.Errorf("status = %d, want 200", rec.Code)
			}
			if diff := cmp.Diff(tt.want, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			checkHeaders(t, rec, "application/json")
		})
	}
}

func checkHeaders(t *testing.T, rec *httptest.ResponseRecorder, contentType string) {
	t.Helper()
	want := map[string]string{
		"Content-Type":           contentType,
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = rec.Header().Get(k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := JSON(rec, http.StatusCreated, map[string]string{"id": "gw_1"}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"id":"gw_1"}`+"\n" {
		t.Errorf("got %d %q, want 201 {\"id\":\"gw_1\"}", rec.Code, rec.Body)
	}
	checkHeaders(t, rec, "application/json")

	t.Run("unencodable value writes nothing", func(t *testing.T) {
		rec := httptest.NewRecorder()
		if err := JSON(rec, http.StatusOK, math.NaN()); err == nil {
			t.Fatal("JSON(NaN) = nil, want an error")
		}
		if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
			t.Errorf("JSON wrote %q before failing", rec.Body)
		}
	})
}

func TestNoContent(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := NoContent(rec); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Errorf("got %d %q, want 204 and no body", rec.Code, rec.Body)
	}
	checkHeaders(t, rec, "")
}

func TestWriteError(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    wireError
		headers map[string]string
	}{
		{"405 sets Allow", apierr.MethodNotAllowed("GET, POST"),
			wireError{Status: 405, Type: "invalid_request_error", Code: "method_not_allowed", Message: "method not allowed; allowed: GET, POST"},
			map[string]string{"Allow": "GET, POST", "WWW-Authenticate": ""}},
		{"401 sets WWW-Authenticate", apierr.Unauthenticated("invalid_token", "bad"),
			wireError{Status: 401, Type: "authentication_error", Code: "invalid_token", Message: "bad"},
			map[string]string{"Allow": "", "WWW-Authenticate": `Bearer realm="sluice"`}},
		{"404", apierr.NotFound("gateway"),
			wireError{Status: 404, Type: "not_found_error", Code: "not_found", Message: "gateway not found"},
			map[string]string{"Allow": "", "WWW-Authenticate": ""}},
		{"nil error is a 500", nil, wantErr(500, "internal_error", ""), map[string]string{"Allow": "", "WWW-Authenticate": ""}},
		{"plain error is a 500", errors.New("dial tcp 10.1.2.3:5432: connection refused"),
			wireError{Status: 500, Type: "api_error", Code: "internal_error", Message: apierr.Internal().Message},
			map[string]string{"Allow": "", "WWW-Authenticate": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			captureLog(t)
			rec := httptest.NewRecorder()
			WriteError(rec, httptest.NewRequest("GET", "/admin/v1/x", nil), tt.err)
			if diff := diffError(readError(t, rec), tt.want); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			for k := range tt.headers {
				got[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(tt.headers, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteErrorAnalyticsQuery: an analytics backend refuses a query with a
// typed error (no HTTP status of its own); the answer is the 400 the
// classifier maps it to, and it is the caller's error, not logged.
func TestWriteErrorAnalyticsQuery(t *testing.T) {
	log := captureLog(t)
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("GET", "/admin/v1/logs?cursor=x", nil),
		fmt.Errorf("read logs: %w", analytics.InvalidCursor()))
	want := wantErr(400, "invalid_request", "cursor")
	want.Message = "cursor is not valid"
	if diff := diffError(readError(t, rec), want); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if log.Len() != 0 {
		t.Errorf("logged %q, want nothing for the caller's error", log)
	}
}
