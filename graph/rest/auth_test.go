package rest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

const goodSecret = "sk-sl-AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIIIjjjj"

// fakeAuth knows one secret and returns one shared principal, as a cache
// would; Authenticate must not modify it.
type fakeAuth struct {
	mu     sync.Mutex
	shared *auth.Principal
	seen   []string
	err    error // returned for an unknown secret
}

func (f *fakeAuth) Authenticate(_ context.Context, secret string) (*auth.Principal, error) {
	f.mu.Lock()
	f.seen = append(f.seen, secret)
	f.mu.Unlock()
	if secret == goodSecret {
		return f.shared, nil
	}
	if secret == "sk-sl-nil" {
		return nil, nil
	}
	return nil, f.err
}

func newFakeAuth() *fakeAuth {
	return &fakeAuth{
		shared: &auth.Principal{UserID: "usr_1", TenantID: "acme", Role: auth.TenantAdministrator, TokenID: "tok_1", Kind: auth.CredUserToken},
		err:    apierr.Unauthenticated("invalid_token", "the token is not valid"),
	}
}

// whoami answers the principal and request id the handler sees.
func whoami() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = JSON(w, http.StatusOK, map[string]any{"principal": auth.From(r.Context()), "request_id": RequestID(r.Context())})
	})
}

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestAuthenticate(t *testing.T) {
	type seen struct {
		Principal *auth.Principal `json:"principal"`
		RequestID string          `json:"request_id"`
	}
	authed := func(reqID, ip string) *seen {
		return &seen{Principal: &auth.Principal{UserID: "usr_1", TenantID: "acme", Role: auth.TenantAdministrator,
			TokenID: "tok_1", Kind: auth.CredUserToken, IP: ip, RequestID: reqID}, RequestID: reqID}
	}
	tests := []struct {
		name    string
		path    string
		headers map[string][]string
		remote  string
		want    *seen     // a 200 with this body
		wantErr wireError // or this error
	}{
		{name: "missing", path: "/admin/v1/tenants",
			wantErr: wantErr(401, "missing_token", "")},
		{name: "basic", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Basic YWRtaW46cGFzcw=="}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "empty bearer", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer "}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "bearer without token", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer"}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "bare token", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {goodSecret}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "two spaces", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer  " + goodSecret}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "two tokens", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer " + goodSecret + " x"}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "two headers", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer " + goodSecret, "Bearer " + goodSecret}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "bearer and x-api-key", path: "/admin/v1/tenants",
			headers: map[string][]string{"Authorization": {"Bearer " + goodSecret}, "X-Api-Key": {"sk-sl-other"}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "empty x-api-key", path: "/admin/v1/tenants", headers: map[string][]string{"X-Api-Key": {""}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "unknown token", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer sk-sl-unknown"}},
			wantErr: wireError{Status: 401, Type: "authentication_error", Code: "invalid_token", Message: "the token is not valid"}},
		{name: "authenticator returns nothing", path: "/admin/v1/tenants", headers: map[string][]string{"Authorization": {"Bearer sk-sl-nil"}},
			wantErr: wantErr(401, "invalid_token", "")},
		{name: "bearer", path: "/admin/v1/tenants", remote: "192.0.2.7:5555",
			headers: map[string][]string{"Authorization": {"Bearer " + goodSecret}, RequestIDHeader: {"req-1"}},
			want:    authed("req-1", "192.0.2.7")},
		{name: "scheme in any case", path: "/admin/v1/tenants", remote: "[2001:db8::1]:443",
			headers: map[string][]string{"Authorization": {"bEaReR " + goodSecret}, RequestIDHeader: {"req-2"}},
			want:    authed("req-2", "2001:db8::1")},
		{name: "x-api-key", path: "/admin/v1/tenants", remote: "192.0.2.8:1",
			headers: map[string][]string{"X-Api-Key": {goodSecret}, RequestIDHeader: {"req-3"}},
			want:    authed("req-3", "192.0.2.8")},
		{name: "public path", path: "/admin/v1/session", headers: map[string][]string{RequestIDHeader: {"req-4"}},
			want: &seen{RequestID: "req-4"}},
		{name: "public path ignores a bad credential", path: "/admin/v1/session",
			headers: map[string][]string{"Authorization": {"Basic x"}, RequestIDHeader: {"req-5"}},
			want:    &seen{RequestID: "req-5"}},
		{name: "public is exact", path: "/admin/v1/session/x",
			wantErr: wantErr(401, "missing_token", "")},
		{name: "public is exact as sent", path: "/admin/v1/%73ession",
			wantErr: wantErr(401, "missing_token", "")},
		{name: "public path query", path: "/admin/v1/session?next=/admin", headers: map[string][]string{RequestIDHeader: {"req-6"}},
			want: &seen{RequestID: "req-6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa := newFakeAuth()
			h := Authenticate(fa, whoami(), "/admin/v1/session", "/healthz")
			req := httptest.NewRequest("GET", tt.path, nil)
			for k, vs := range tt.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			if tt.remote != "" {
				req.RemoteAddr = tt.remote
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Header().Get(RequestIDHeader); got == "" {
				t.Errorf("no %s on the answer", RequestIDHeader)
			}
			if strings.Contains(rec.Body.String(), goodSecret) {
				t.Errorf("answer contains the secret: %s", rec.Body)
			}
			if tt.want == nil {
				if diff := diffError(readError(t, rec), tt.wantErr); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
			}
			var got seen
			if err := jsonUnmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, &got); diff != "" {
				t.Errorf("handler saw (-want +got):\n%s", diff)
			}
			if tt.want.Principal == nil && len(fa.seen) != 0 {
				t.Errorf("a public path consulted the authenticator with %d secrets", len(fa.seen))
			}
			if fa.shared.RequestID != "" || fa.shared.IP != "" {
				t.Errorf("the authenticator's principal was modified: %+v", fa.shared)
			}
		})
	}
}

func TestAuthenticateRequestID(t *testing.T) {
	tests := []struct {
		name, header string
		want         string // "" means a new UUIDv7
	}{
		{"from the front server", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{"absent", "", ""},
		{"forged log line", "x\" level=ERROR msg=\"owned", ""},
		{"too long", strings.Repeat("a", 129), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *auth.Principal
			h := Authenticate(newFakeAuth(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p = auth.From(r.Context())
			}))
			req := httptest.NewRequest("GET", "/admin/v1/me", nil)
			req.Header.Set("Authorization", "Bearer "+goodSecret)
			if tt.header != "" {
				req.Header.Set(RequestIDHeader, tt.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if p == nil {
				t.Fatal("handler not reached")
			}
			got := rec.Header().Get(RequestIDHeader)
			if p.RequestID != got {
				t.Errorf("principal request id %q, answer header %q: want equal", p.RequestID, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("request id = %q, want %q", got, tt.want)
			}
			if tt.want == "" && !uuidV7.MatchString(got) {
				t.Errorf("request id = %q, want a new UUIDv7", got)
			}
		})
	}
}

func TestAuthenticateNeverLeaksTheSecret(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want wireError
	}{
		{"unclassified error quoting the secret", errors.New("lookup token " + goodSecret + "x: connection refused"),
			wireError{Status: 500, Type: "api_error", Code: "internal_error", Message: apierr.Internal().Message}},
		{"apierr quoting the secret", apierr.Unauthenticated("invalid_token", "token "+goodSecret+"x is revoked"),
			wireError{Status: 401, Type: "authentication_error", Code: "invalid_token", Message: "token [REDACTED] is revoked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := captureLog(t)
			fa := newFakeAuth()
			fa.err = tt.err
			h := Authenticate(fa, whoami())
			req := httptest.NewRequest("GET", "/admin/v1/tenants", nil)
			req.Header.Set("Authorization", "Bearer "+goodSecret+"x")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if diff := diffError(readError(t, rec), tt.want); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			for where, s := range map[string]string{"answer": rec.Body.String(), "log": logs.String()} {
				if strings.Contains(s, goodSecret[:12]) {
					t.Errorf("%s contains the secret: %s", where, s)
				}
			}
			if tt.want.Status == 500 && !strings.Contains(logs.String(), "connection refused") {
				t.Errorf("log lacks the cause: %s", logs)
			}
		})
	}
}

// TestAuthenticateWithRouter checks the whole chain: credential first
// (401 before 404 or 400), then the router.
func TestAuthenticateWithRouter(t *testing.T) {
	rt := NewRouter()
	rt.Handle("GET", "/admin/v1/me", func(w http.ResponseWriter, r *http.Request, _ Params) error {
		p := auth.From(r.Context())
		if p == nil {
			return errors.New("no principal")
		}
		return JSON(w, http.StatusOK, map[string]string{"user_id": p.UserID})
	})
	rt.Handle("POST", "/admin/v1/session", func(w http.ResponseWriter, r *http.Request, _ Params) error {
		return JSON(w, http.StatusOK, map[string]string{"token": "t"})
	})
	h := Authenticate(newFakeAuth(), rt, "/admin/v1/session")
	tests := []struct {
		name, method, path string
		token              bool
		wantStatus         int
		wantCode           string
	}{
		{"authenticated", "GET", "/admin/v1/me", true, 200, ""},
		{"no token, known path", "GET", "/admin/v1/me", false, 401, "missing_token"},
		{"no token, unknown path", "GET", "/admin/v1/nope", false, 401, "missing_token"},
		{"no token, bad path", "GET", "/admin/v1//me", false, 401, "missing_token"},
		{"token, unknown path", "GET", "/admin/v1/nope", true, 404, "not_found"},
		{"token, bad path", "GET", "/admin/v1/./me", true, 400, "invalid_path"},
		{"token, wrong method", "DELETE", "/admin/v1/me", true, 405, "method_not_allowed"},
		{"public", "POST", "/admin/v1/session", false, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.token {
				req.Header.Set("Authorization", "Bearer "+goodSecret)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantCode != "" {
				if got := readError(t, rec).Code; got != tt.wantCode {
					t.Errorf("code = %q, want %q", got, tt.wantCode)
				}
			}
		})
	}
}
