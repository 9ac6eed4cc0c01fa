package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

const testAdminToken = "sk-sl-test-admin-token-000000000000000000"

// adminServer is an admin API over HTTP on a fresh store, bootstrapped
// with the Administrator whose token is testAdminToken.
type adminServer struct {
	t   *testing.T
	url string
}

func newAdminServer(t *testing.T, b testenv.Backend) *adminServer {
	return newAdminServerWith(t, b, nil)
}

// newAdminServerWith is newAdminServer with the admin configuration
// changed by set (nil: as it is).
func newAdminServerWith(t *testing.T, b testenv.Backend, set func(*admin.Config)) *adminServer {
	t.Helper()
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.Config{Store: testenv.Store(t, b), Box: box, AllowPrivateBaseURLs: true}
	if set != nil {
		set(&cfg)
	}
	svc, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(context.Background(), testAdminToken); err != nil {
		t.Fatal(err)
	}
	// The GraphQL stand-in answers who it was called by, to show that it
	// is behind authentication.
	gql := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := auth.From(r.Context())
		if p == nil {
			http.Error(w, "no principal", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, p.Email)
	})
	srv := httptest.NewServer(NewAdmin(svc, AdminOptions{GraphQL: gql}))
	t.Cleanup(srv.Close)
	return &adminServer{t: t, url: srv.URL}
}

// reply is an answer of the server.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with token as the bearer credential (none when "").
// A body that is a string or []byte is sent as is, anything else as JSON;
// a body is sent as application/json.
func (s *adminServer) do(token, method, path string, body any) reply {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

// ok sends a request that must answer want and decodes the body into out
// (when not nil).
func (s *adminServer) ok(token, method, path string, body any, want int, out any) reply {
	s.t.Helper()
	r := s.do(token, method, path, body)
	if r.status != want {
		s.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			s.t.Fatalf("%s %s: decode %s: %v", method, path, r.body, err)
		}
	}
	return r
}

// wireErr decodes an error answer, failing when it is not in the
// contract's shape.
func (s *adminServer) wireErr(r reply) wireError {
	s.t.Helper()
	rec := httptest.NewRecorder()
	for k, v := range r.header {
		rec.Header()[k] = v
	}
	rec.Code = r.status
	rec.Body = bytes.NewBuffer(r.body)
	return readError(s.t, rec)
}

// ids lists the "id" of every element of a list answer.
func (s *adminServer) ids(token, path string) []string {
	s.t.Helper()
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	s.ok(token, http.MethodGet, path, nil, http.StatusOK, &l)
	out := make([]string, 0, len(l.Data))
	for _, d := range l.Data {
		out = append(out, d.ID)
	}
	slices.Sort(out)
	return out
}

// fixture is what the Administrator sets up through the API.
type fixture struct {
	gatewayID   string
	memberID    string
	memberToken string
	gwToken     string
}

func setUp(t *testing.T, s *adminServer) fixture {
	t.Helper()
	var f fixture
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "acme", "name": "Acme"}, 201, nil)
	var gw struct {
		ID, TenantID, Slug string
	}
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/gateways", map[string]any{"slug": "prod", "name": "Production"}, 201, &gw)
	if gw.ID == "" || !strings.HasPrefix(gw.ID, "gw_") {
		t.Fatalf("gateway id %q", gw.ID)
	}
	f.gatewayID = gw.ID

	key := s.ok(testAdminToken, "POST", "/admin/v1/gateways/"+f.gatewayID+"/keys", map[string]any{
		"provider": "openai", "alias": "main", "key": "sk-test-1234567890abcdef", "base_url": "http://127.0.0.1:9/v1",
	}, 201, nil)
	var k map[string]any
	if err := json.Unmarshal(key.body, &k); err != nil {
		t.Fatal(err)
	}
	if k["last4"] != "cdef" {
		t.Errorf("key last4 = %v, want cdef", k["last4"])
	}
	if _, has := k["key"]; has || bytes.Contains(key.body, []byte("1234567890abcdef")) {
		t.Errorf("the key's answer holds the key: %s", key.body)
	}

	var u struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/users",
		map[string]any{"email": "member@acme.test", "name": "Member", "role": "member"}, 201, &u)
	f.memberID = u.ID
	var tok struct{ ID, Secret string }
	s.ok(testAdminToken, "POST", "/admin/v1/users/"+u.ID+"/tokens", map[string]any{"name": "laptop"}, 201, &tok)
	if !strings.HasPrefix(tok.Secret, "sk-sl-") {
		t.Fatalf("user token secret %q", tok.Secret)
	}
	f.memberToken = tok.Secret
	s.ok(testAdminToken, "POST", "/admin/v1/gateways/"+f.gatewayID+"/tokens", map[string]any{"name": "ci"}, 201, &tok)
	f.gwToken = tok.Secret
	return f
}

func TestAdminAPI(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := newAdminServer(t, b)
			f := setUp(t, s)
			t.Run("bad input changes nothing", func(t *testing.T) { testBadInput(t, s, f) })
			t.Run("credentials", func(t *testing.T) { testCredentials(t, s, f) })
			t.Run("session", func(t *testing.T) { testSession(t, s) })
			t.Run("order of checks", func(t *testing.T) { testOrderOfChecks(t, s, f) })
			t.Run("model price with a slash", func(t *testing.T) { testModelPriceSlash(t, s) })
			t.Run("every route answers", func(t *testing.T) { testEveryRoute(t, s, f) })
		})
	}
}

func testBadInput(t *testing.T, s *adminServer, f fixture) {
	gw := "/admin/v1/gateways/" + f.gatewayID
	state := func() [][]string {
		return [][]string{
			s.ids(testAdminToken, "/admin/v1/tenants"),
			s.ids(testAdminToken, "/admin/v1/tenants/acme/gateways"),
			s.ids(testAdminToken, gw+"/keys"),
			s.ids(testAdminToken, "/admin/v1/tenants/acme/users"),
			s.ids(testAdminToken, gw+"/rules"),
		}
	}
	before := state()
	huge := append(append([]byte(`{"id":"big","name":"`), bytes.Repeat([]byte("x"), 2<<20)...), `"}`...)
	tests := []struct {
		name, method, path string
		body               any
		want               wireError
		allow              string
	}{
		{"malformed JSON", "POST", "/admin/v1/tenants", `{"id":`, wantErr(400, "invalid_json", ""), ""},
		{"unknown field", "POST", "/admin/v1/tenants", `{"id":"x1","nme":"X"}`, wantErr(400, "invalid_request", "nme"), ""},
		{"wrong type", "POST", "/admin/v1/tenants", `{"id":42}`, wantErr(400, "invalid_request", "id"), ""},
		{"2 MiB body", "POST", "/admin/v1/tenants", huge, wantErr(413, "body_too_large", ""), ""},
		{"invalid slug", "POST", "/admin/v1/tenants", `{"id":"Bad_Slug"}`, wantErr(400, "invalid_request", "id"), ""},
		{"duplicate tenant", "POST", "/admin/v1/tenants", `{"id":"acme"}`, wantErr(409, "conflict", "id"), ""},
		{"duplicate gateway slug", "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, wantErr(409, "conflict", "slug"), ""},
		{"duplicate key alias", "POST", gw + "/keys",
			`{"provider":"openai","alias":"main","key":"sk-test-abcdefghijklmnop","base_url":"http://127.0.0.1:9/v1"}`,
			wantErr(409, "conflict", "alias"), ""},
		{"duplicate email", "POST", "/admin/v1/tenants/acme/users",
			`{"email":"MEMBER@acme.test","name":"Again","role":"member"}`, wantErr(409, "conflict", "email"), ""},
		{"metadata base_url", "POST", gw + "/keys",
			`{"provider":"openai","alias":"meta","key":"sk-test-abcdefghijklmnop","base_url":"http://169.254.169.254/"}`,
			wantErr(400, "invalid_request", "base_url"), ""},
		{"empty segment", "GET", "/admin/v1//tenants", nil, wantErr(400, "invalid_path", ""), ""},
		{"escaped dot segment", "GET", "/admin/v1/tenants/%2e%2e", nil, wantErr(400, "invalid_path", ""), ""},
		{"method not allowed", "PUT", "/admin/v1/tenants", `{}`, wantErr(405, "method_not_allowed", ""), "GET, POST"},
		{"unknown path", "GET", "/admin/v1/nothing", nil, wantErr(404, "not_found", ""), ""},
		{"rule delete without id", "DELETE", gw + "/rules", nil, wantErr(400, "invalid_request", "id"), ""},
		{"bad purge", "DELETE", "/admin/v1/tenants/acme?purge=yes", nil, wantErr(400, "invalid_request", "purge"), ""},
		{"bad limit", "GET", "/admin/v1/tenants?limit=0", nil, wantErr(400, "invalid_request", "limit"), ""},
		{"bad status filter", "GET", "/admin/v1/logs?status=abc", nil, wantErr(400, "invalid_request", "status"), ""},
		{"status out of range", "GET", "/admin/v1/logs?status=700", nil, wantErr(400, "invalid_request", "status"), ""},
		{"unknown operation", "GET", "/admin/v1/logs?operation=chat%2Fcompletions", nil, wantErr(400, "invalid_request", "operation"), ""},
		{"bad metadata filter", "GET", "/admin/v1/logs?metadata=novalue", nil, wantErr(400, "invalid_request", "metadata"), ""},
		{"too many metadata filters", "GET", "/admin/v1/logs?" + strings.Repeat("metadata=a%3D1&", 8) + "metadata=b=2", nil,
			wantErr(400, "invalid_request", "metadata"), ""},
		{"bad time", "GET", "/admin/v1/stats?from=yesterday", nil, wantErr(400, "invalid_request", "from"), ""},
		{"bad audit time", "GET", "/admin/v1/audit-log?to=soon", nil, wantErr(400, "invalid_request", "to"), ""},
		{"prices not an array", "PUT", "/admin/v1/model-prices", `{"provider":"openai"}`, wantErr(400, "invalid_request", ""), ""},
		{"empty body", "PATCH", gw, ``, wantErr(400, "invalid_json", ""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(testAdminToken, tt.method, tt.path, tt.body)
			if d := diffError(s.wireErr(r), tt.want); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.path, d)
			}
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		req, _ := http.NewRequest("POST", s.url+"/admin/v1/tenants", strings.NewReader(`id=x`))
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 415 {
			t.Errorf("status %d, want 415", resp.StatusCode)
		}
	})
	if d := cmp.Diff(before, state()); d != "" {
		t.Errorf("bad input changed the store (-before +after):\n%s", d)
	}
}

func testCredentials(t *testing.T, s *adminServer, f fixture) {
	tests := []struct {
		name, token, method, path string
		want                      wireError
	}{
		{"no credential", "", "GET", "/admin/v1/tenants", wantErr(401, "missing_token", "")},
		{"unknown token", "sk-sl-" + strings.Repeat("x", 40), "GET", "/admin/v1/tenants", wantErr(401, "invalid_token", "")},
		{"gateway token", f.gwToken, "GET", "/admin/v1/me", wantErr(401, "", "")},
		{"gateway token on its own gateway", f.gwToken, "GET", "/admin/v1/gateways/" + f.gatewayID, wantErr(401, "", "")},
		{"no credential on GraphQL", "", "POST", "/admin/graphql", wantErr(401, "missing_token", "")},
		{"no credential on sign-out", "", "DELETE", "/admin/v1/session", wantErr(401, "missing_token", "")},
		// Outside /admin/ nothing is served, whatever the credential.
		{"outside admin", "", "GET", "/v1/acme/prod/compat/models", wantErr(404, "not_found", "")},
		{"dashboard path", testAdminToken, "GET", "/", wantErr(404, "not_found", "")},
		{"admin without slash", "", "GET", "/admin", wantErr(404, "not_found", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.wireErr(s.do(tt.token, tt.method, tt.path, nil))
			if tt.want.Code == "" {
				got.Code = "" // any 401 code
			}
			if d := diffError(got, tt.want); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	t.Run("GraphQL", func(t *testing.T) {
		r := s.do(testAdminToken, "POST", "/admin/graphql", `{"query":"{__typename}"}`)
		if r.status != 200 || string(r.body) != "admin@localhost" {
			t.Errorf("POST /admin/graphql: %d %s, want 200 from the GraphQL handler as admin@localhost", r.status, r.body)
		}
		r = s.do(testAdminToken, "GET", "/admin/graphql", nil)
		if d := diffError(s.wireErr(r), wantErr(405, "method_not_allowed", "")); d != "" || r.header.Get("Allow") != "POST" {
			t.Errorf("GET /admin/graphql: Allow %q (-want +got):\n%s", r.header.Get("Allow"), d)
		}
	})
}

func testSession(t *testing.T, s *adminServer) {
	const password = "correct horse battery staple"
	var u struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/users", map[string]any{
		"email": "ta@acme.test", "name": "TA", "role": "tenant_administrator", "password": password}, 201, &u)

	r := s.do("", "POST", "/admin/v1/session", map[string]any{"email": "ta@acme.test", "password": "wrong password!"})
	if r.status != 401 {
		t.Fatalf("sign-in with a wrong password: %d %s, want 401", r.status, r.body)
	}
	if d := diffError(s.wireErr(s.do("", "POST", "/admin/v1/session", `{"email":1}`)), wantErr(400, "invalid_request", "email")); d != "" {
		t.Errorf("sign-in with a bad body (-want +got):\n%s", d)
	}

	var sess struct {
		Token     string `json:"token"`
		ExpiresAt string `json:"expires_at"`
		User      struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Role  string `json:"role"`
		} `json:"user"`
	}
	s.ok("", "POST", "/admin/v1/session", map[string]any{"email": "ta@acme.test", "password": password}, 201, &sess)
	if sess.Token == "" || sess.ExpiresAt == "" || sess.User.ID != u.ID || sess.User.Role != "tenant_administrator" {
		t.Fatalf("session %+v", sess)
	}
	var me struct{ ID, Email string }
	s.ok(sess.Token, "GET", "/admin/v1/me", nil, 200, &me)
	if me.ID != u.ID {
		t.Errorf("me = %+v, want user %s", me, u.ID)
	}
	// A session of a Tenant Administrator sees its own tenant only.
	if got, want := s.ids(sess.Token, "/admin/v1/tenants"), []string{"acme"}; !slices.Equal(got, want) {
		t.Errorf("tenants seen by the session = %v, want %v", got, want)
	}
	testChangeMyPassword(t, s, sess.Token, password)
	s.ok(sess.Token, "DELETE", "/admin/v1/session", nil, 204, nil)
	if r := s.do(sess.Token, "GET", "/admin/v1/me", nil); r.status != 401 {
		t.Errorf("signed-out session: %d %s, want 401", r.status, r.body)
	}
}

// testChangeMyPassword: POST /admin/v1/me/password checks the current
// password and the new one, keeps the calling session and ends the others;
// afterwards only the new password signs in.
func testChangeMyPassword(t *testing.T, s *adminServer, session, password string) {
	const newPassword = "a brand new passphrase"
	signIn := func(pw string) reply {
		return s.do("", "POST", "/admin/v1/session", map[string]any{"email": "ta@acme.test", "password": pw})
	}
	var other struct{ Token string }
	s.ok("", "POST", "/admin/v1/session", map[string]any{"email": "ta@acme.test", "password": password}, 201, &other)
	change := func(current, next string) reply {
		return s.do(session, "POST", "/admin/v1/me/password", map[string]any{"current_password": current, "new_password": next})
	}
	if d := diffError(s.wireErr(change("not the password", newPassword)), wantErr(400, "invalid_request", "current_password")); d != "" {
		t.Errorf("a wrong current password (-want +got):\n%s", d)
	}
	if d := diffError(s.wireErr(change(password, "short")), wantErr(400, "invalid_request", "new_password")); d != "" {
		t.Errorf("a short new password (-want +got):\n%s", d)
	}
	if d := diffError(s.wireErr(s.do(session, "POST", "/admin/v1/me/password", `{"current_password":1}`)), wantErr(400, "invalid_request", "current_password")); d != "" {
		t.Errorf("a bad body (-want +got):\n%s", d)
	}
	s.ok(session, "POST", "/admin/v1/me/password", map[string]any{"current_password": password, "new_password": newPassword}, 204, nil)
	if r := signIn(password); r.status != 401 {
		t.Errorf("sign-in with the old password: %d %s, want 401", r.status, r.body)
	}
	if r := signIn(newPassword); r.status != 201 {
		t.Errorf("sign-in with the new password: %d %s, want 201", r.status, r.body)
	}
	s.ok(session, "GET", "/admin/v1/me", nil, 200, nil)
	if r := s.do(other.Token, "GET", "/admin/v1/me", nil); r.status != 401 {
		t.Errorf("another session after the change: %d %s, want 401", r.status, r.body)
	}
	if r := s.do("", "POST", "/admin/v1/me/password", map[string]any{"current_password": newPassword, "new_password": password}); r.status != 401 {
		t.Errorf("a change without a credential: %d %s, want 401", r.status, r.body)
	}
}

func testOrderOfChecks(t *testing.T, s *adminServer, f fixture) {
	// A Tenant Administrator of another tenant.
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "other"}, 201, nil)
	var u struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/other/users",
		map[string]any{"email": "ta@other.test", "name": "Other TA", "role": "tenant_administrator"}, 201, &u)
	var tok struct{ Secret string }
	s.ok(testAdminToken, "POST", "/admin/v1/users/"+u.ID+"/tokens", map[string]any{"name": "t"}, 201, &tok)
	otherTA := tok.Secret

	gw := "/admin/v1/gateways/" + f.gatewayID
	tests := []struct {
		name, token, method, path string
		body                      any
		want                      wireError
	}{
		{"member lists gateways", f.memberToken, "GET", "/admin/v1/tenants/acme/gateways", nil, wantErr(403, "forbidden", "")},
		{"member patches a gateway with bad JSON", f.memberToken, "PATCH", gw, `{"name":`, wantErr(403, "forbidden", "")},
		{"member patches an unknown gateway", f.memberToken, "PATCH", "/admin/v1/gateways/gw_nope", `{"name":`, wantErr(403, "forbidden", "")},
		{"member creates a tenant with a huge body", f.memberToken, "POST", "/admin/v1/tenants",
			bytes.Repeat([]byte(" "), 2<<20), wantErr(403, "forbidden", "")},
		{"member reads logs with a bad filter", f.memberToken, "GET", "/admin/v1/logs?status=abc", nil, wantErr(403, "forbidden", "")},
		{"member reads series per group", f.memberToken, "GET", "/admin/v1/stats/series?group_by=model", nil, wantErr(403, "forbidden", "")},
		{"member reads a tenant's guardrail hits", f.memberToken, "GET", "/admin/v1/stats/guardrails", nil, wantErr(403, "forbidden", "")},
		{"series without group_by", testAdminToken, "GET", "/admin/v1/stats/series", nil, wantErr(400, "invalid_request", "group_by")},
		{"series of too many groups", testAdminToken, "GET", "/admin/v1/stats/series?group_by=model&limit=21", nil, wantErr(400, "invalid_request", "limit")},
		{"series by an unknown key", testAdminToken, "GET", "/admin/v1/stats/series?group_by=route", nil, wantErr(400, "invalid_request", "group_by")},
		{"series per minute over a month", testAdminToken, "GET", "/admin/v1/stats/series?group_by=model&interval=minute&from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z", nil, wantErr(400, "invalid_request", "interval")},
		{"member deletes a price", f.memberToken, "DELETE", "/admin/v1/model-prices/openai/gpt-4o", nil, wantErr(403, "forbidden", "")},
		{"foreign TA reads a gateway", otherTA, "GET", gw, nil, wantErr(404, "not_found", "")},
		{"foreign TA patches a gateway with bad JSON", otherTA, "PATCH", gw, `{"name":`, wantErr(404, "not_found", "")},
		{"foreign TA adds a key", otherTA, "POST", gw + "/keys", `{"unknown":1}`, wantErr(404, "not_found", "")},
		{"foreign TA deletes a rule without id", otherTA, "DELETE", gw + "/rules", nil, wantErr(404, "not_found", "")},
		{"foreign TA lists users", otherTA, "GET", "/admin/v1/tenants/acme/users?limit=0", nil, wantErr(404, "not_found", "")},
		{"foreign TA reads a user", otherTA, "GET", "/admin/v1/users/" + f.memberID, nil, wantErr(404, "not_found", "")},
		{"foreign TA patches a tenant", otherTA, "PATCH", "/admin/v1/tenants/acme", `{`, wantErr(404, "not_found", "")},
		{"foreign TA reads spend", otherTA, "GET", gw + "/spend?from=bad", nil, wantErr(404, "not_found", "")},
		{"TA deletes a tenant", otherTA, "DELETE", "/admin/v1/tenants/acme?purge=maybe", nil, wantErr(403, "forbidden", "")},
		{"admin patches an unknown gateway with bad JSON", testAdminToken, "PATCH", "/admin/v1/gateways/gw_nope", `{"name":`, wantErr(404, "not_found", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := diffError(s.wireErr(s.do(tt.token, tt.method, tt.path, tt.body)), tt.want); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.path, d)
			}
		})
	}
	// The member may still do what its role allows.
	s.ok(f.memberToken, "GET", "/admin/v1/providers", nil, 200, nil)
	s.ok(f.memberToken, "GET", "/admin/v1/stats", nil, 200, nil)
	s.ok(f.memberToken, "GET", "/admin/v1/me", nil, 200, nil)
}

func testModelPriceSlash(t *testing.T, s *adminServer) {
	prices := []map[string]any{
		{"provider": "openrouter", "model": "openai/gpt-4o-mini", "input_per_mtok": 0.15, "output_per_mtok": 0.6},
		{"provider": "openrouter", "model": "anthropic/claude-sonnet-4-5", "input_per_mtok": 3, "output_per_mtok": 15},
	}
	var put struct {
		Data []struct{ Provider, Model string } `json:"data"`
	}
	s.ok(testAdminToken, "PUT", "/admin/v1/model-prices", prices, 200, &put)
	if len(put.Data) != 2 {
		t.Fatalf("PUT answered %+v, want the 2 prices", put)
	}
	models := func() []string {
		var l struct {
			Data []struct{ Model string } `json:"data"`
		}
		s.ok(testAdminToken, "GET", "/admin/v1/model-prices?provider=openrouter", nil, 200, &l)
		var out []string
		for _, p := range l.Data {
			out = append(out, p.Model)
		}
		return out
	}
	if got := models(); !slices.Contains(got, "openai/gpt-4o-mini") {
		t.Fatalf("prices after PUT: %v", got)
	}
	s.ok(testAdminToken, "DELETE", "/admin/v1/model-prices/openrouter/openai/gpt-4o-mini", nil, 204, nil)
	if got := models(); slices.Contains(got, "openai/gpt-4o-mini") || !slices.Contains(got, "anthropic/claude-sonnet-4-5") {
		t.Errorf("prices after DELETE: %v", got)
	}
	r := s.do(testAdminToken, "DELETE", "/admin/v1/model-prices/openrouter/openai/gpt-4o-mini", nil)
	if d := diffError(s.wireErr(r), wantErr(404, "not_found", "")); d != "" {
		t.Errorf("second DELETE (-want +got):\n%s", d)
	}
}

// testEveryRoute calls every route as the Administrator and checks the
// status and the answer's shape.
func testEveryRoute(t *testing.T, s *adminServer, f fixture) {
	gw := "/admin/v1/gateways/" + f.gatewayID
	user := "/admin/v1/users/" + f.memberID
	var rule struct{ ID string }
	s.ok(testAdminToken, "POST", gw+"/rules", map[string]any{
		"name": "no secrets", "direction": "request", "kind": "keyword", "patterns": []string{"password"}, "action": "block"}, 201, &rule)
	var gwTok struct{ ID string }
	s.ok(testAdminToken, "POST", gw+"/tokens", map[string]any{"name": "temp"}, 201, &gwTok)
	var myTok struct{ ID, Secret string }
	s.ok(testAdminToken, "POST", "/admin/v1/me/tokens", map[string]any{"name": "mine"}, 201, &myTok)
	if myTok.Secret == "" {
		t.Errorf("my token has no secret")
	}
	var ce struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/client-errors", map[string]any{"message": "TypeError: x is undefined", "url": "/dashboard"}, 202, &ce)
	if ce.ID == "" {
		t.Errorf("client error answered no id")
	}

	type shape int
	const (
		object shape = iota
		list
		empty
	)
	tests := []struct {
		method, path string
		body         any
		status       int
		shape        shape
	}{
		{"GET", "/admin/v1/tenants/acme", nil, 200, object},
		{"PATCH", "/admin/v1/tenants/acme", `{"name":"Acme Inc"}`, 200, object},
		{"GET", gw, nil, 200, object},
		{"PATCH", gw, `{"budget":{"amount_usd":100,"period":"monthly"}}`, 200, object},
		{"DELETE", gw + "/budget", nil, 204, empty},
		{"GET", gw + "/keys", nil, 200, list},
		{"GET", gw + "/rules", nil, 200, list},
		{"PATCH", gw + "/rules", `{"id":"` + rule.ID + `","enabled":false}`, 200, object},
		{"DELETE", gw + "/rules?id=" + rule.ID, nil, 204, empty},
		{"GET", gw + "/tokens", nil, 200, list},
		{"PATCH", gw + "/tokens/" + gwTok.ID, `{"name":"renamed"}`, 200, object},
		{"DELETE", gw + "/tokens/" + gwTok.ID, nil, 204, empty},
		{"GET", "/admin/v1/tenants/acme/users", nil, 200, list},
		{"GET", user, nil, 200, object},
		{"PATCH", user, `{"name":"Member One"}`, 200, object},
		{"GET", user + "/tokens", nil, 200, list},
		{"DELETE", user + "/budget", nil, 204, empty},
		{"POST", user + "/gateways/" + f.gatewayID, nil, 204, empty},
		{"GET", user + "/gateways", nil, 200, list},
		{"DELETE", user + "/gateways/" + f.gatewayID, nil, 204, empty},
		{"GET", "/admin/v1/stats", nil, 200, object},
		{"GET", "/admin/v1/stats?tenant=acme", nil, 200, object},
		{"GET", "/admin/v1/stats/timeseries?interval=day", nil, 200, object},
		{"GET", "/admin/v1/stats/analytics", nil, 200, object},
		{"GET", "/admin/v1/stats/series?group_by=error_reason&limit=3", nil, 200, object},
		{"GET", "/admin/v1/stats/series?tenant=acme&group_by=model&interval=day", nil, 200, object},
		{"GET", "/admin/v1/stats/guardrails?tenant=acme", nil, 200, object},
		{"GET", gw + "/spend", nil, 200, object},
		{"GET", "/admin/v1/tenants/acme/spend", nil, 200, object},
		{"GET", "/admin/v1/tenants/acme/analytics", nil, 200, object},
		{"GET", "/admin/v1/logs?tenant=acme&status=200&metadata=team=search", nil, 200, list},
		{"GET", "/admin/v1/logs?tenant=acme&operation=models", nil, 200, list},
		{"GET", "/admin/v1/logs/0190b8c6-0000-7000-8000-000000000000", nil, 404, object},
		{"GET", gw + "/traces", nil, 200, list},
		{"GET", "/admin/v1/traces/nope", nil, 404, object},
		{"POST", "/admin/v1/playground/token", `{"gateway_id":"` + f.gatewayID + `"}`, 201, object},
		{"GET", "/admin/v1/playground/search?q=gpt", nil, 200, list},
		{"GET", "/admin/v1/playground/trace/nope", nil, 404, object},
		{"GET", "/admin/v1/playground/requests/nope", nil, 404, object},
		{"GET", "/admin/v1/unpriced-models?tenant=acme", nil, 200, list},
		{"GET", "/admin/v1/model-prices", nil, 200, list},
		{"GET", "/admin/v1/providers", nil, 200, list},
		{"GET", "/admin/v1/models", nil, 200, list},
		{"GET", gw + "/guardrail-stats", nil, 200, object},
		{"GET", gw + "/guardrail-events", nil, 200, list},
		{"GET", "/admin/v1/audit-log?action=tenant.create", nil, 200, list},
		{"GET", "/admin/v1/client-errors", nil, 200, list},
		{"GET", "/admin/v1/me", nil, 200, object},
		{"GET", "/admin/v1/me/tokens", nil, 200, list},
		{"DELETE", "/admin/v1/me/tokens/" + myTok.ID, nil, 204, empty},
		{"DELETE", gw + "/keys/openai/main", nil, 204, empty},
		{"DELETE", gw + "/keys/openai/main", nil, 404, object},
		{"DELETE", "/admin/v1/users/" + f.memberID, nil, 204, empty},
		{"POST", "/admin/v1/tenants", `{"id":"gone"}`, 201, object},
		{"DELETE", "/admin/v1/tenants/gone?purge=false", nil, 204, empty},
		{"DELETE", "/admin/v1/tenants/other?purge=true", nil, 204, empty},
		{"DELETE", gw, nil, 204, empty},
	}
	for _, tt := range tests {
		r := s.do(testAdminToken, tt.method, tt.path, tt.body)
		if r.status != tt.status {
			t.Errorf("%s %s: status %d, want %d; body %s", tt.method, tt.path, r.status, tt.status, r.body)
			continue
		}
		if tt.status >= 400 {
			s.wireErr(r)
			continue
		}
		var m map[string]json.RawMessage
		switch tt.shape {
		case empty:
			if len(r.body) != 0 {
				t.Errorf("%s %s: body %s, want none", tt.method, tt.path, r.body)
			}
		case list:
			if err := json.Unmarshal(r.body, &m); err != nil || len(m) != 2 || m["data"] == nil || m["next_cursor"] == nil ||
				!bytes.HasPrefix(m["data"], []byte("[")) {
				t.Errorf("%s %s: %s is not a list", tt.method, tt.path, r.body)
			}
		case object:
			if err := json.Unmarshal(r.body, &m); err != nil || m["error"] != nil {
				t.Errorf("%s %s: %s is not an object", tt.method, tt.path, r.body)
			}
		}
	}

	// The audit log recorded the writes made through the API.
	var audit struct {
		Data []struct {
			Action string `json:"action"`
		} `json:"data"`
	}
	s.ok(testAdminToken, "GET", "/admin/v1/audit-log?resource_type=tenant", nil, 200, &audit)
	if len(audit.Data) == 0 {
		t.Errorf("the audit log has no tenant entries")
	}
	// The circuit breaker answers the pinned shape {"data":[…]}.
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/gateways", map[string]any{"slug": "cb"}, 201, nil)
	var gws struct {
		Data []struct{ ID, Slug string } `json:"data"`
	}
	s.ok(testAdminToken, "GET", "/admin/v1/tenants/acme/gateways", nil, 200, &gws)
	if len(gws.Data) != 1 {
		t.Fatalf("gateways %+v", gws)
	}
	r := s.ok(testAdminToken, "GET", "/admin/v1/gateways/"+gws.Data[0].ID+"/circuit-breaker", nil, 200, nil)
	var cb map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &cb); err != nil || len(cb) != 1 || !bytes.HasPrefix(cb["data"], []byte("[")) {
		t.Errorf("circuit-breaker answered %s, want {\"data\":[…]}", r.body)
	}
}
