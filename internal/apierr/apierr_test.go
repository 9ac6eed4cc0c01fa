package apierr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/apierr"
)

func TestNewType(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{http.StatusBadRequest, apierr.TypeInvalidRequest},
		{http.StatusUnauthorized, apierr.TypeAuthentication},
		{http.StatusForbidden, apierr.TypePermission},
		{http.StatusNotFound, apierr.TypeNotFound},
		{http.StatusMethodNotAllowed, apierr.TypeInvalidRequest},
		{http.StatusConflict, apierr.TypeInvalidRequest},
		{http.StatusGone, apierr.TypeNotFound},
		{http.StatusRequestEntityTooLarge, apierr.TypeInvalidRequest},
		{http.StatusUnsupportedMediaType, apierr.TypeInvalidRequest},
		{http.StatusTooManyRequests, apierr.TypeRateLimit},
		{http.StatusInternalServerError, apierr.TypeAPI},
		{http.StatusBadGateway, apierr.TypeAPI},
		{http.StatusServiceUnavailable, apierr.TypeAPI},
		{http.StatusGatewayTimeout, apierr.TypeAPI},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			e := apierr.New(tt.status, "some_code", "value %d of %s", 3, "x")
			if e.Type != tt.want {
				t.Errorf("type: got %q, want %q", e.Type, tt.want)
			}
			if e.Status != tt.status {
				t.Errorf("status: got %d, want %d", e.Status, tt.status)
			}
			if e.Code != "some_code" {
				t.Errorf("code: got %q, want %q", e.Code, "some_code")
			}
			if e.Message != "value 3 of x" {
				t.Errorf("message: got %q, want %q", e.Message, "value 3 of x")
			}
			if e.Error() != e.Message {
				t.Errorf("Error(): got %q, want %q", e.Error(), e.Message)
			}
		})
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name       string
		err        *apierr.Error
		wantStatus int
		wantType   string
		wantCode   string
		wantParam  string
	}{
		{"Invalid", apierr.Invalid("name", "bad %s", "name"), 400, apierr.TypeInvalidRequest, "invalid_request", "name"},
		{"NotFound", apierr.NotFound("gateway"), 404, apierr.TypeNotFound, "not_found", ""},
		{"Forbidden", apierr.Forbidden("View model prices"), 403, apierr.TypePermission, "forbidden", ""},
		{"Conflict", apierr.Conflict("slug", "taken"), 409, apierr.TypeInvalidRequest, "conflict", "slug"},
		{"Unauthenticated", apierr.Unauthenticated("invalid_token", "no"), 401, apierr.TypeAuthentication, "invalid_token", ""},
		{"MethodNotAllowed", apierr.MethodNotAllowed("GET, POST"), 405, apierr.TypeInvalidRequest, "method_not_allowed", ""},
		{"Internal", apierr.Internal(), 500, apierr.TypeAPI, "internal_error", ""},
		{"Unavailable", apierr.Unavailable("store down"), 503, apierr.TypeAPI, "unavailable", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := [4]any{tt.err.Status, tt.err.Type, tt.err.Code, tt.err.Param}
			want := [4]any{tt.wantStatus, tt.wantType, tt.wantCode, tt.wantParam}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status/type/code/param (-want +got):\n%s", diff)
			}
		})
	}
	if got := apierr.MethodNotAllowed("GET").Allow; got != "GET" {
		t.Errorf("MethodNotAllowed Allow: got %q, want %q", got, "GET")
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		err  *apierr.Error
		want string
	}{
		{
			name: "null param",
			err:  apierr.New(http.StatusTooManyRequests, "budget_exceeded", "budget exceeded"),
			want: `{"error":{"type":"rate_limit_error","code":"budget_exceeded","message":"budget exceeded","param":null}}`,
		},
		{
			name: "with param",
			err:  apierr.Invalid("model", "unknown model %q", "gpt-x"),
			want: `{"error":{"type":"invalid_request_error","code":"invalid_request","message":"unknown model \"gpt-x\"","param":"model"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.err)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			if got := string(b); got != tt.want {
				t.Errorf("json.Marshal: got %s, want %s", got, tt.want)
			}
			if got := string(tt.err.Body()); got != tt.want {
				t.Errorf("Body: got %s, want %s", got, tt.want)
			}
			// Status and Allow are not on the wire.
			var generic map[string]map[string]any
			if err := json.Unmarshal(b, &generic); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			keys := slices.Sorted(maps.Keys(generic["error"]))
			if diff := cmp.Diff([]string{"code", "message", "param", "type"}, keys); diff != "" {
				t.Errorf("error keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFrom(t *testing.T) {
	nf := apierr.NotFound("tenant")
	tests := []struct {
		name   string
		err    error
		want   *apierr.Error
		wantOK bool
	}{
		{"bare", nf, nf, true},
		{"wrapped once", fmt.Errorf("get tenant: %w", nf), nf, true},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", nf)), nf, true},
		{"joined", errors.Join(errors.New("x"), nf), nf, true},
		{"plain", errors.New("dial tcp 10.0.0.1:5432: connection refused"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := apierr.From(tt.err)
			if ok != tt.wantOK {
				t.Errorf("ok: got %v, want %v", ok, tt.wantOK)
			}
			if tt.want != nil {
				if got != tt.want {
					t.Errorf("got %p (%v), want the wrapped error %p", got, got, tt.want)
				}
				return
			}
			want := apierr.Internal()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("From(plain) (-want Internal +got):\n%s", diff)
			}
		})
	}
}
