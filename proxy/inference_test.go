package proxy

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// usage is the usage object of a non-streamed answer.
type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

func answerUsage(tb testing.TB, body []byte) usage {
	tb.Helper()
	var a struct {
		Usage *usage `json:"usage"`
	}
	if err := json.Unmarshal(body, &a); err != nil || a.Usage == nil {
		tb.Fatalf("answer %s has no usage: %v", body, err)
	}
	return *a.Usage
}

// userToken creates a user of the tenant with role, assigns it the given
// gateways and returns the user and an API token secret of it.
func (h *harness) userToken(tenant string, role auth.Role, email string, gatewayIDs ...string) (*store.User, string) {
	h.tb.Helper()
	u, err := h.svc.CreateUser(h.ctx, h.root, tenant, admin.UserInput{Email: email, Name: email, Role: role})
	must(h.tb, err)
	for _, g := range gatewayIDs {
		must(h.tb, h.svc.AssignGateway(h.ctx, h.root, u.ID, g))
	}
	tok, err := h.svc.CreateUserToken(h.ctx, h.root, u.ID, admin.TokenInput{Name: "t"})
	must(h.tb, err)
	return u, tok.Secret
}

// gateway creates another gateway (of tenant, created when missing) with
// an openai key on the mock.
func (h *harness) gateway(tenant, slug string) *store.Gateway {
	h.tb.Helper()
	if _, err := h.svc.GetTenant(h.ctx, h.root, tenant); err != nil {
		_, err := h.svc.CreateTenant(h.ctx, h.root, admin.TenantInput{ID: tenant, Name: tenant})
		must(h.tb, err)
	}
	g, err := h.svc.CreateGateway(h.ctx, h.root, tenant, admin.GatewayInput{Slug: slug})
	must(h.tb, err)
	h.addKey(g.ID, "openai", "main", mainKey)
	return g
}

func chatPathOf(tenant, slug string) string {
	return "/v1/" + tenant + "/" + slug + "/compat/chat/completions"
}

func TestAuthCredentialForms(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	for _, tc := range []struct{ name, header, value string }{
		{"bearer", "Authorization", "Bearer " + h.token},
		{"bearer lower-case scheme", "Authorization", "bearer " + h.token},
		{"x-api-key", "x-api-key", h.token},
		{"api-key", "api-key", h.token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.mock.Count()
			resp, b := h.do("POST", chatPath, http.Header{tc.header: {tc.value}, "Content-Type": {"application/json"}}, body)
			wantStatus(t, resp, b, 200)
			if got := h.mock.Count() - before; got != 1 {
				t.Errorf("upstream requests %d, want 1", got)
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.TokenID != h.tokenID || rec.Status != 200 {
				t.Errorf("record token %q status %d, want %q 200", rec.TokenID, rec.Status, h.tokenID)
			}
		})
	}
}

func TestAuthRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	ct := []string{"application/json"}
	for _, tc := range []struct {
		name string
		hdr  http.Header
		path string
		code string
	}{
		{"missing", http.Header{"Content-Type": ct}, chatPath, "missing_token"},
		{"token in the query string", http.Header{"Content-Type": ct}, chatPath + "?api_key=" + h.token, "missing_token"},
		{"basic", http.Header{"Authorization": {"Basic eDp5"}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"basic with the token", http.Header{"Authorization": {"Basic " + h.token}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"bearer without token", http.Header{"Authorization": {"Bearer"}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"bearer double space", http.Header{"Authorization": {"Bearer  " + h.token}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"token without scheme", http.Header{"Authorization": {h.token}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"two headers", http.Header{"Authorization": {"Bearer " + h.token}, "X-Api-Key": {h.token}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"x-api-key and api-key", http.Header{"Api-Key": {h.token}, "X-Api-Key": {h.token}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"unknown token", bearer("sk-sl-000000000000000000000000000000000000000A"), chatPath, "invalid_token"},
		{"token with a suffix", bearer(h.token + "x"), chatPath, "invalid_token"},
		{"oversized token", bearer(strings.Repeat("a", 4000)), chatPath, "invalid_token"},
		{"sql in bearer", bearer(`' OR '1'='1`), chatPath, "invalid_token"},
		{"sql in x-api-key", http.Header{"X-Api-Key": {`x' OR 1=1; SELECT pg_sleep(5); --`}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"sql union", http.Header{"X-Api-Key": {`sk-sl-'UNION/**/SELECT/**/hash/**/FROM/**/tokens--`}, "Content-Type": ct}, chatPath, "invalid_token"},
		{"nosql", http.Header{"Api-Key": {`{"$ne":null}`}, "Content-Type": ct}, chatPath, "invalid_token"},
		// Authentication comes first: an unknown gateway, a bad body or
		// a wrong method still answer 401.
		{"unknown gateway", http.Header{"Content-Type": ct}, chatPathOf("nope", "nope"), "missing_token"},
		{"bad token on an unknown path", bearer("nope"), "/v1/acme/prod/compat/nothing", "invalid_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records, upstream := len(h.sink.Records()), h.mock.Count()
			start := time.Now()
			resp, b := h.do("POST", tc.path, tc.hdr, body)
			elapsed := time.Since(start)
			wantAPIError(t, resp, b, 401, "authentication_error", tc.code, "")
			if got := resp.Header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate %q, want Bearer", got)
			}
			for _, vv := range tc.hdr {
				for _, v := range vv {
					if v != "application/json" && len(v) > 8 && strings.Contains(string(b), v) {
						t.Errorf("the answer %s echoes the credential", b)
					}
				}
			}
			if strings.Contains(string(b), h.token) {
				t.Errorf("the answer %s contains the token", b)
			}
			// pg_sleep and the like cannot run: the token is only hashed.
			if elapsed > 2*time.Second {
				t.Errorf("401 took %s", elapsed)
			}
			if n := len(h.sink.Records()); n != records {
				t.Errorf("a 401 produced %d records, want none", n-records)
			}
			if n := h.mock.Count(); n != upstream {
				t.Errorf("a 401 reached the upstream")
			}
		})
	}
	// GET without a credential is a 401 too, not a 405.
	resp, b := h.do("GET", chatPath, nil, "")
	wantAPIError(t, resp, b, 401, "authentication_error", "missing_token", "")
}

func TestAuthRevokedAndDeletedTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	revoked, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "revoked"})
	must(t, err)
	deleted, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "deleted"})
	must(t, err)
	member, memberTok := h.userToken(testTenant, auth.Member, "gone@acme.test", h.gw.ID)
	h.rebuild()
	body := chatBody("openai/gpt-4o-mini", "")
	for _, tok := range []string{revoked.Secret, deleted.Secret, memberTok} {
		resp, b := h.do("POST", chatPath, bearer(tok), body)
		wantStatus(t, resp, b, 200)
	}

	_, err = h.svc.UpdateGatewayToken(h.ctx, h.root, h.gw.ID, revoked.ID, admin.TokenPatch{Revoked: ptr(true)})
	must(t, err)
	must(t, h.svc.DeleteGatewayToken(h.ctx, h.root, h.gw.ID, deleted.ID))
	must(t, h.svc.DeleteUser(h.ctx, h.root, member.ID))
	h.rebuild()

	for name, tok := range map[string]string{"revoked": revoked.Secret, "deleted": deleted.Secret, "deleted user": memberTok} {
		resp, b := h.do("POST", chatPath, bearer(tok), body)
		if resp.StatusCode != 401 || errCode(b) != "invalid_token" {
			t.Errorf("%s token after rebuild: %d %s, want 401 invalid_token", name, resp.StatusCode, b)
		}
	}
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 200) // the other token still works
}

func TestAuthExpiredToken(t *testing.T) {
	t.Parallel()
	// The proxy's clock runs two hours ahead: a token expiring in one hour
	// is in the snapshot (it had not expired when it was built) and has
	// expired when it is used.
	h := newHarness(t, harnessConfig{now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	exp := time.Now().Add(time.Hour)
	tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "short", ExpiresAt: &exp})
	must(t, err)
	h.rebuild()
	records := len(h.sink.Records())
	resp, b := h.do("POST", chatPath, bearer(tok.Secret), chatBody("openai/gpt-4o-mini", ""))
	wantAPIError(t, resp, b, 401, "authentication_error", "token_expired", "")
	if n := len(h.sink.Records()); n != records {
		t.Errorf("an expired token produced a record")
	}
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
}

func TestAuthGatewayAndTenantScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.gateway(testTenant, "staging")
	h.gateway("globex", "prod")
	member, memberTok := h.userToken(testTenant, auth.Member, "member@acme.test", h.gw.ID)
	_, tadminTok := h.userToken(testTenant, auth.TenantAdministrator, "tadmin@acme.test")
	h.rebuild()
	body := chatBody("openai/gpt-4o-mini", "")
	stagingPath, otherPath := chatPathOf(testTenant, "staging"), chatPathOf("globex", "prod")

	// A gateway token is valid on its own gateway only; any other gateway,
	// of its tenant or not, answers exactly like one that does not exist.
	_, unknown := h.do("POST", chatPathOf(testTenant, "nope"), bearer(h.token), body)
	for _, path := range []string{stagingPath, otherPath, chatPathOf("nope", "nope")} {
		resp, b := h.do("POST", path, bearer(h.token), body)
		wantAPIError(t, resp, b, 404, "not_found_error", "not_found", "")
		if string(b) != string(unknown) {
			t.Errorf("%s answers %s, an unknown gateway %s: the two must not differ", path, b, unknown)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 404 || rec.ErrorCode != "not_found" || rec.TenantID != testTenant || rec.GatewayID != "" {
			t.Errorf("record of %s: status %d code %q tenant %q gateway %q; want 404 not_found acme and no gateway",
				path, rec.Status, rec.ErrorCode, rec.TenantID, rec.GatewayID)
		}
	}

	// A Member: its assigned gateway; 403 on an unassigned one of its
	// tenant; 404 on another tenant's.
	resp, b := h.do("POST", chatPath, bearer(memberTok), body)
	wantStatus(t, resp, b, 200)
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.UserID != member.ID || rec.GatewayID != h.gw.ID {
		t.Errorf("record user %q gateway %q, want %q %q", rec.UserID, rec.GatewayID, member.ID, h.gw.ID)
	}
	resp, b = h.do("POST", stagingPath, bearer(memberTok), body)
	wantAPIError(t, resp, b, 403, "permission_error", "gateway_not_assigned", "")
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 403 || rec.ErrorCode != "gateway_not_assigned" {
		t.Errorf("record %d %q, want 403 gateway_not_assigned", rec.Status, rec.ErrorCode)
	}
	resp, b = h.do("POST", otherPath, bearer(memberTok), body)
	wantAPIError(t, resp, b, 404, "not_found_error", "not_found", "")

	// A Tenant Administrator: every gateway of its tenant, none other.
	for _, path := range []string{chatPath, stagingPath} {
		resp, b := h.do("POST", path, bearer(tadminTok), body)
		wantStatus(t, resp, b, 200)
	}
	resp, b = h.do("POST", otherPath, bearer(tadminTok), body)
	wantAPIError(t, resp, b, 404, "not_found_error", "not_found", "")

	// The Administrator's token: any gateway.
	rootTok, err := h.svc.CreateUserToken(h.ctx, h.root, h.root.UserID, admin.TokenInput{Name: "root"})
	must(t, err)
	h.rebuild()
	for _, path := range []string{chatPath, stagingPath, otherPath} {
		resp, b := h.do("POST", path, bearer(rootTok.Secret), body)
		wantStatus(t, resp, b, 200)
	}
}

func TestAuthRoleChangedToNonInferenceRole(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	for _, role := range []auth.Role{auth.Finance, auth.Viewer, auth.DemoUser} {
		t.Run(string(role), func(t *testing.T) {
			u, tok := h.userToken(testTenant, auth.Member, string(role)+"@acme.test", h.gw.ID)
			h.rebuild()
			resp, b := h.do("POST", chatPath, bearer(tok), body)
			wantStatus(t, resp, b, 200)

			_, err := h.svc.UpdateUser(h.ctx, h.root, u.ID, admin.UserPatch{Role: ptr(role)})
			must(t, err)
			h.rebuild()
			upstream := h.mock.Count()
			resp, b = h.do("POST", chatPath, bearer(tok), body)
			wantAPIError(t, resp, b, 403, "permission_error", "role_cannot_call_inference", "")
			if !strings.Contains(string(b), string(role)) {
				t.Errorf("message %s does not name the role", b)
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.Status != 403 || rec.ErrorCode != "role_cannot_call_inference" || rec.UserID != u.ID {
				t.Errorf("record %d %q user %q", rec.Status, rec.ErrorCode, rec.UserID)
			}
			if h.mock.Count() != upstream {
				t.Error("a refused request reached the upstream")
			}
		})
	}
}

func TestAuthPlaygroundToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	staging := h.gateway(testTenant, "staging")
	_, memberTok := h.userToken(testTenant, auth.Member, "player@acme.test", h.gw.ID, staging.ID)
	p, err := h.svc.Authenticate(h.ctx, memberTok)
	must(t, err)
	pg, err := h.svc.CreatePlaygroundToken(h.ctx, p, h.gw.ID)
	must(t, err)
	h.rebuild()
	body := chatBody("openai/gpt-4o-mini", "")
	resp, b := h.do("POST", pg.BasePath+"/chat/completions", bearer(pg.Token), body)
	wantStatus(t, resp, b, 200)
	// Its owner may use staging, the playground token may not.
	resp, b = h.do("POST", chatPathOf(testTenant, "staging"), bearer(pg.Token), body)
	wantAPIError(t, resp, b, 404, "not_found_error", "not_found", "")
	resp, b = h.do("POST", chatPathOf(testTenant, "staging"), bearer(memberTok), body)
	wantStatus(t, resp, b, 200)
}

func TestRouting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addKey(h.gw.ID, "groq", "main", "gsk-upstream-groq-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "smart", Strategy: "fallback", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o-mini"}}},
		{Name: "spread", Strategy: "loadbalance", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", Weight: 1}, {Provider: "groq", Model: "llama-3.1-8b-instant", Weight: 1}}},
	}})

	for _, tc := range []struct {
		name, path, model         string
		provider, upstream, route string
	}{
		{"compat provider/model", chatPath, "openai/gpt-4o-mini", "openai", "gpt-4o-mini", ""},
		{"compat other provider", chatPath, "groq/llama-3.1-8b-instant", "groq", "llama-3.1-8b-instant", ""},
		{"compat route", chatPath, "smart", "openai", "gpt-4o-mini", "smart"},
		{"provider path", gwPath("openai/chat/completions"), "gpt-4o-mini", "openai", "gpt-4o-mini", ""},
		{"provider path keeps a slash in the model", gwPath("groq/chat/completions"), "meta/llama", "groq", "meta/llama", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.mock.Requests())
			resp, b := h.do("POST", tc.path, bearer(h.token), chatBody(tc.model, ""))
			wantStatus(t, resp, b, 200)
			if got := resp.Header.Get("x-sluice-provider"); got != tc.provider {
				t.Errorf("x-sluice-provider %q, want %q", got, tc.provider)
			}
			if got := resp.Header.Get("x-sluice-model"); got != tc.upstream {
				t.Errorf("x-sluice-model %q, want %q", got, tc.upstream)
			}
			if got := resp.Header.Get("x-sluice-attempts"); got != "1" {
				t.Errorf("x-sluice-attempts %q, want 1", got)
			}
			reqs := h.mock.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("upstream requests %d, want 1", len(reqs))
			}
			var sent struct{ Model string }
			must(t, json.Unmarshal(reqs[0].Body, &sent))
			if sent.Model != tc.upstream || reqs[0].Path != "/v1/chat/completions" {
				t.Errorf("upstream got model %q at %s, want %q at /v1/chat/completions", sent.Model, reqs[0].Path, tc.upstream)
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.Provider != tc.provider || rec.Model != tc.upstream || rec.Route != tc.route {
				t.Errorf("record provider %q model %q route %q, want %q %q %q", rec.Provider, rec.Model, rec.Route, tc.provider, tc.upstream, tc.route)
			}
		})
	}

	t.Run("loadbalance uses every target", func(t *testing.T) {
		seen := map[string]int{}
		for range 40 {
			resp, b := h.chat(chatBody("spread", ""))
			wantStatus(t, resp, b, 200)
			seen[resp.Header.Get("x-sluice-provider")]++
		}
		if seen["openai"] == 0 || seen["groq"] == 0 || len(seen) != 2 {
			t.Errorf("providers used %v, want both openai and groq", seen)
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		resp, b := h.do("POST", gwPath("compat/embeddings"), bearer(h.token), `{"model":"openai/text-embedding-3-small","input":"hi"}`)
		wantStatus(t, resp, b, 200)
		if !strings.Contains(string(b), `"embedding"`) {
			t.Errorf("answer %s", b)
		}
	})
}

func TestRejectedInputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	attacker, attackerURL, err := providertest.Start(h.ctx, "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { _ = attacker.Close() })
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	deep := `{"model":"openai/gpt-4o-mini",` + msgs + `,"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`

	for _, tc := range []struct {
		name        string
		method      string
		path        string
		ctype       string
		hdr         []string
		body        string
		status      int
		typ, code   string
		param       string
		recordsGate bool // the record names the gateway
	}{
		{name: "unknown route", body: chatBody("smartest", ""), status: 400, code: "unknown_model", param: "model", recordsGate: true},
		{name: "unknown provider", body: chatBody("nosuch/model", ""), status: 400, code: "unknown_model", param: "model", recordsGate: true},
		{name: "unknown provider path", path: gwPath("nosuch/chat/completions"), body: chatBody("m", ""), status: 404, code: "not_found", recordsGate: true},
		{name: "provider without key", body: chatBody("groq/llama-3.1-8b-instant", ""), status: 400, code: "provider_not_configured", recordsGate: true},
		{name: "text/plain", ctype: "text/plain", body: chatBody("openai/gpt-4o-mini", ""), status: 415, code: "unsupported_media_type", recordsGate: true},
		{name: "no content type", ctype: "-", body: chatBody("openai/gpt-4o-mini", ""), status: 415, code: "unsupported_media_type", recordsGate: true},
		{name: "multipart", ctype: "multipart/form-data; boundary=" + strings.Repeat("-", 10000), body: "x", status: 415, code: "unsupported_media_type", recordsGate: true},
		{name: "json with charset", ctype: "application/json; charset=utf-8", body: "{", status: 400, code: "invalid_json", recordsGate: true},
		{name: "empty body", body: "", status: 400, code: "invalid_json", recordsGate: true},
		{name: "missing value", body: `{"model":}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "truncated", body: `{"model":"openai/gpt-4o-mini",` + msgs, status: 400, code: "invalid_json", recordsGate: true},
		{name: "trailing garbage", body: chatBody("openai/gpt-4o-mini", "") + ` {}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "not an object", body: `[1,2]`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "duplicate model", body: `{"model":"openai/gpt-4o-mini","model":"openai/gpt-4o",` + msgs + `}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "duplicate escaped key", body: `{"model":"openai/gpt-4o-mini","mod\u0065l":"openai/gpt-4o",` + msgs + `}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "nested duplicate", body: `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","role":"system","content":"hi"}]}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "invalid utf-8", body: "{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", status: 400, code: "invalid_request", recordsGate: true},
		{name: "overlong utf-8", body: "{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc0\xaf\"}]}", status: 400, code: "invalid_request", recordsGate: true},
		{name: "lone surrogate", body: `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"\ud800"}]}`, status: 400, code: "invalid_request", recordsGate: true},
		{name: "control character in a string", body: "{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"a\tb\"}]}", status: 400, code: "invalid_json", recordsGate: true},
		{name: "unknown escape in a key", body: `{"model":"openai/gpt-4o-mini",` + msgs + `,"api_b\ase":"` + attackerURL + `"}`, status: 400, code: "invalid_json", recordsGate: true},
		{name: "deep nesting", body: deep, status: 400, code: "invalid_json", recordsGate: true},
		{name: "stream as string", body: chatBody("openai/gpt-4o-mini", `,"stream":"true"`), status: 400, code: "invalid_request", param: "stream", recordsGate: true},
		{name: "negative max_tokens", body: chatBody("openai/gpt-4o-mini", `,"max_tokens":-1`), status: 400, code: "invalid_request", param: "max_tokens", recordsGate: true},
		{name: "model not a string", body: `{"model":5,` + msgs + `}`, status: 400, code: "invalid_request", param: "model", recordsGate: true},
		{name: "no messages", body: `{"model":"openai/gpt-4o-mini"}`, status: 400, code: "invalid_request", param: "messages", recordsGate: true},
		{name: "api_base", body: chatBody("openai/gpt-4o-mini", `,"api_base":"`+attackerURL+`/v1"`), status: 400, code: "invalid_request", param: "api_base", recordsGate: true},
		{name: "base_url", body: chatBody("openai/gpt-4o-mini", `,"base_url":"`+attackerURL+`/v1"`), status: 400, code: "invalid_request", param: "base_url", recordsGate: true},
		{name: "extra_headers", body: chatBody("openai/gpt-4o-mini", `,"extra_headers":{"Host":"`+strings.TrimPrefix(attackerURL, "http://")+`"}`), status: 400, code: "invalid_request", param: "extra_headers", recordsGate: true},
		{name: "metadata not json", hdr: []string{"x-sluice-metadata", "nope"}, body: chatBody("openai/gpt-4o-mini", ""), status: 400, code: "invalid_request", param: "x-sluice-metadata", recordsGate: true},
		{name: "metadata not strings", hdr: []string{"x-sluice-metadata", `{"a":1}`}, body: chatBody("openai/gpt-4o-mini", ""), status: 400, code: "invalid_request", param: "x-sluice-metadata", recordsGate: true},
		{name: "metadata too many", hdr: []string{"x-sluice-metadata", `{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1"}`}, body: chatBody("openai/gpt-4o-mini", ""), status: 400, code: "invalid_request", param: "x-sluice-metadata", recordsGate: true},
		{name: "max attempts zero", hdr: []string{"x-sluice-max-attempts", "0"}, body: chatBody("openai/gpt-4o-mini", ""), status: 400, code: "invalid_request", param: "x-sluice-max-attempts", recordsGate: true},
		{name: "request timeout garbage", hdr: []string{"x-sluice-request-timeout", "1s"}, body: chatBody("openai/gpt-4o-mini", ""), status: 400, code: "invalid_request", param: "x-sluice-request-timeout", recordsGate: true},
		{name: "GET", method: "GET", status: 405, code: "method_not_allowed"},
		{name: "PUT", method: "PUT", body: chatBody("openai/gpt-4o-mini", ""), status: 405, code: "method_not_allowed"},
		{name: "TRACE", method: "TRACE", status: 405, code: "method_not_allowed"},
		{name: "unknown operation", path: gwPath("compat/images/generations"), body: chatBody("openai/gpt-4o-mini", ""), status: 404, code: "not_found"},
		{name: "completions on a provider path", path: gwPath("openai/completions"), body: `{"model":"gpt-4o-mini","prompt":"x"}`, status: 404, code: "not_found"},
		{name: "upper-case tenant", path: "/v1/ACME/prod/compat/chat/completions", body: chatBody("openai/gpt-4o-mini", ""), status: 404, code: "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path := tc.method, tc.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = chatPath
			}
			hd := bearer(h.token)
			switch tc.ctype {
			case "":
			case "-":
				hd.Del("Content-Type")
			default:
				hd.Set("Content-Type", tc.ctype)
			}
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				hd.Set(tc.hdr[i], tc.hdr[i+1])
			}
			upstream := h.mock.Count()
			resp, b := h.do(method, path, hd, tc.body)
			typ := tc.typ
			if typ == "" {
				typ = map[int]string{400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error", 415: "invalid_request_error"}[tc.status]
			}
			wantAPIError(t, resp, b, tc.status, typ, tc.code, tc.param)
			if tc.status == 405 {
				if got := resp.Header.Get("Allow"); got != "POST" {
					t.Errorf("Allow %q, want POST", got)
				}
			}
			if h.mock.Count() != upstream {
				t.Error("a rejected request reached the upstream")
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.Status != tc.status || rec.ErrorCode != tc.code || rec.TenantID != testTenant || rec.TokenID != h.tokenID {
				t.Errorf("record status %d code %q tenant %q token %q, want %d %q %s %s",
					rec.Status, rec.ErrorCode, rec.TenantID, rec.TokenID, tc.status, tc.code, testTenant, h.tokenID)
			}
			if tc.recordsGate && rec.GatewayID != h.gw.ID {
				t.Errorf("record gateway %q, want %q", rec.GatewayID, h.gw.ID)
			}
		})
	}
	if n := attacker.Count(); n != 0 {
		t.Errorf("the attacker's host received %d requests", n)
	}
}

// rawExchange writes a whole request (with Connection: close) on a new
// connection and returns the raw bytes of the answer.
func rawExchange(t *testing.T, addr, request string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	must(t, err)
	defer c.Close()
	must(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, request)
	must(t, err)
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read answer: %v (got %q)", err, out)
	}
	return string(out)
}

func rawPost(h *harness, path, body string, extra ...string) string {
	req := "POST " + path + " HTTP/1.1\r\nHost: sluice\r\nAuthorization: Bearer " + h.token +
		"\r\nContent-Type: application/json\r\nConnection: close\r\n"
	for _, e := range extra {
		req += e + "\r\n"
	}
	return req + "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestNonCanonicalPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/v1/acme/prod/compat/chat/%63ompletions", 400, "invalid_path"},
		{"/v1/acme/prod/compat/chat/x/%2e%2e/completions", 400, "invalid_path"},
		{"/v1/acme/prod/compat/%2e%2e/compat/chat/completions", 400, "invalid_path"},
		{"/v1/acme/prod/open%2fai/chat/completions", 400, "invalid_path"},
		{"/v1/acme/prod%5ccompat/chat/completions", 400, "invalid_path"},
		{"/v1/acme/prod/compat//chat/completions", 400, "invalid_path"},
		{"/v1//acme/prod/compat/chat/completions", 400, "invalid_path"},
		{"/v1/acme/prod/compat/chat/completions/", 400, "invalid_path"},
		{"/v1/acme/prod/compat/./chat/completions", 400, "invalid_path"},
		{"/v1/acme/other/../prod/compat/chat/completions", 400, "invalid_path"},
		{"/v1/acme/prod/compat/chat/completions.", 404, "not_found"},
		{"/v1/acme/prod/compat/chat", 404, "not_found"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			upstream := h.mock.Count()
			out := rawExchange(t, h.addr, rawPost(h, tc.path, body))
			status, rest, _ := strings.Cut(strings.TrimPrefix(out, "HTTP/1.1 "), " ")
			if status != itoa(tc.status) || !strings.Contains(rest, `"code":"`+tc.code+`"`) {
				t.Errorf("answer:\n%s\nwant %d %s", out, tc.status, tc.code)
			}
			if h.mock.Count() != upstream {
				t.Error("a non-canonical path was routed upstream")
			}
		})
	}
	// The canonical path with a query string is served.
	out := rawExchange(t, h.addr, rawPost(h, chatPath+"?x=1", body))
	if !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Errorf("canonical path with a query: %s", out)
	}
}

func TestHeaderInjection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	for _, model := range []string{"gpt\r\nX-Evil: 1", "openai/gpt\r\nX-Evil: 1", "openai/gpt\nX-Evil: 1", "openai/gpt\x00"} {
		out := rawExchange(t, h.addr, rawPost(h, chatPath, chatBody(model, "")))
		head, body, _ := strings.Cut(out, "\r\n\r\n")
		if !strings.HasPrefix(head, "HTTP/1.1 400") || !strings.Contains(body, `"param":"model"`) {
			t.Errorf("model %q: answer\n%s\nwant 400 naming model", model, out)
		}
		if strings.Contains(strings.ToLower(head), "x-evil") {
			t.Errorf("model %q injected a header:\n%s", model, head)
		}
	}
	// The same through a provider path, where the model is echoed in
	// x-sluice-model on success.
	out := rawExchange(t, h.addr, rawPost(h, gwPath("openai/chat/completions"), chatBody("gpt\r\nX-Evil: 1", "")))
	if head, _, _ := strings.Cut(out, "\r\n\r\n"); !strings.HasPrefix(head, "HTTP/1.1 400") || strings.Contains(strings.ToLower(head), "x-evil") {
		t.Errorf("provider path: %s", out)
	}
	// A client's own request id is replaced, never reflected.
	out = rawExchange(t, h.addr, rawPost(h, chatPath, chatBody("openai/gpt-4o-mini", ""), "X-Sluice-Request-Id: evil"))
	if strings.Contains(out, "evil") || !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Errorf("client request id reflected:\n%s", out)
	}
	// CR inside a request header value is refused by the parser.
	out = rawExchange(t, h.addr, rawPost(h, chatPath, chatBody("openai/gpt-4o-mini", ""), "X-Sluice-Metadata: {\"a\":\"b\r\"}"))
	if !strings.HasPrefix(out, "HTTP/1.1 400") {
		t.Errorf("CR in a header value: %s", out)
	}
	if n := h.mock.Count(); n != 1 {
		t.Errorf("upstream requests %d, want 1", n)
	}
}

func TestHostHeadersDoNotRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	other := h.gateway("globex", "prod")
	h.rebuild()
	// Only the request path routes: Host, X-Forwarded-Host and the
	// rewrite headers some proxies honour are ignored.
	out := rawExchange(t, h.addr, "POST "+chatPath+" HTTP/1.1\r\nHost: globex.example\r\n"+
		"X-Forwarded-Host: globex.example\r\nX-Original-URL: "+chatPathOf("globex", "prod")+"\r\n"+
		"X-Rewrite-URL: "+chatPathOf("globex", "prod")+"\r\nX-Forwarded-Prefix: /v1/globex/prod\r\n"+
		"Authorization: Bearer "+h.token+"\r\nContent-Type: application/json\r\nConnection: close\r\n"+
		"Content-Length: "+itoa(len(chatBody("openai/gpt-4o-mini", "")))+"\r\n\r\n"+chatBody("openai/gpt-4o-mini", ""))
	if !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Fatalf("answer %s", out)
	}
	for _, r := range h.sink.Records() {
		if r.GatewayID != h.gw.ID || r.TenantID != testTenant {
			t.Errorf("record for gateway %q tenant %q, want %s (not %s)", r.GatewayID, r.TenantID, h.gw.ID, other.ID)
		}
	}
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{
		LogBodies: ptr(true), BodyLogLimitBytes: ptr(64), Retry: &store.RetrySettings{MaxAttempts: 3, BackoffMS: 1},
	}})
	body := chatBody("openai/gpt-4o-mini", `,"user":"recorded"`)
	trace := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h.mock.Script(providertest.Step{Status: 503})
	resp, answer := h.chat(body, "x-sluice-metadata", `{"team":"search","env":"test"}`, "traceparent", trace,
		"User-Agent", "records-test/1.0")
	wantStatus(t, resp, answer, 200)
	if got := resp.Header.Get("x-sluice-attempts"); got != "2" {
		t.Errorf("x-sluice-attempts %q, want 2", got)
	}
	id := resp.Header.Get(RequestIDHeader)
	rec := h.record(id)
	u := answerUsage(t, answer)
	price, ok := h.snaps.Load().Price("openai", "gpt-4o-mini")
	if !ok {
		t.Fatal("gpt-4o-mini is not priced")
	}
	wantCost := money.Cost(u.PromptTokens, price.InputPerMTok) + money.Cost(u.CompletionTokens, price.OutputPerMTok)
	if wantCost <= 0 || price.InputPerMTok != money.FromFloat(0.15) {
		t.Fatalf("seeded price %v, cost %v", price.InputPerMTok, wantCost)
	}
	want := analytics.Record{
		ID: id, TenantID: testTenant, GatewayID: h.gw.ID, TokenID: h.tokenID, Provider: "openai", Model: "gpt-4o-mini",
		Status: 200, TokensIn: u.PromptTokens, TokensOut: u.CompletionTokens, CostUSD: wantCost, Cache: "BYPASS", Attempts: 2,
		Metadata: map[string]string{"team": "search", "env": "test"}, TraceID: "0af7651916cd43dd8448eb211c80319c",
		ClientIP: "127.0.0.1", UserAgent: "records-test/1.0",
		RequestBody: body[:64], ResponseBody: string(answer[:64]), Operation: "chat",
	}
	ignore := func(p cmp.Path) bool {
		switch p.String() {
		case "TS", "LatencyMS", "TTFBMS", "Spans":
			return true
		}
		return false
	}
	if diff := cmp.Diff(want, rec, cmp.FilterPath(ignore, cmp.Ignore())); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if rec.LatencyMS < 0 || rec.TTFBMS < 0 || rec.TTFBMS > rec.LatencyMS || time.Since(rec.TS) > time.Minute {
		t.Errorf("latency %d ttfb %d ts %s", rec.LatencyMS, rec.TTFBMS, rec.TS)
	}

	// Spans: one per attempt under the root span, in one trace.
	if len(rec.Spans) != 3 {
		t.Fatalf("%d spans, want 2 attempts and the root", len(rec.Spans))
	}
	var root analytics.Span
	for _, s := range rec.Spans {
		if s.ParentID == "" {
			root = s
		}
	}
	if root.SpanID == "" || root.AttributeMap()["status"] != "200" || root.AttributeMap()["request_id"] != id {
		t.Errorf("root span %+v", root)
	}
	var got []string
	for _, s := range rec.Spans {
		if s.TraceID != rec.TraceID {
			t.Errorf("span %s in trace %s, want %s", s.Name, s.TraceID, rec.TraceID)
		}
		if s.SpanID == root.SpanID {
			continue
		}
		if s.ParentID != root.SpanID {
			t.Errorf("attempt span parent %q, want the root %q", s.ParentID, root.SpanID)
		}
		got = append(got, s.AttributeMap()["attempt"]+":"+s.AttributeMap()["upstream_status"]+":"+s.Status+":"+s.AttributeMap()["key_alias"])
	}
	if diff := cmp.Diff([]string{"1:503:error:main", "2:200:ok:main"}, got); diff != "" {
		t.Errorf("attempt spans (-want +got):\n%s", diff)
	}
	// The trace was propagated: same trace id, upstream sees it.
	for _, r := range h.mock.Requests() {
		if tp := r.Header.Get("Traceparent"); !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") {
			t.Errorf("upstream traceparent %q", tp)
		}
		if r.Header.Get("Authorization") != "Bearer "+mainKey {
			t.Errorf("upstream Authorization %q", r.Header.Get("Authorization"))
		}
	}

	// Without a traceparent a new trace starts; a user token records its
	// user; an unpriced model costs 0 and is flagged.
	member, memberTok := h.userToken(testTenant, auth.Member, "rec@acme.test", h.gw.ID)
	h.rebuild()
	resp, answer = h.do("POST", chatPath, bearer(memberTok), chatBody("openai/unpriced-model", ""))
	wantStatus(t, resp, answer, 200)
	rec = h.record(resp.Header.Get(RequestIDHeader))
	if rec.UserID != member.ID || rec.CostUSD != 0 || !cmp.Equal(rec.Flags, []string{"unpriced"}) ||
		!hex32.MatchString(rec.TraceID) || len(rec.Spans) != 2 || rec.Attempts != 1 {
		t.Errorf("record user %q cost %v flags %v trace %q spans %d attempts %d", rec.UserID, rec.CostUSD, rec.Flags, rec.TraceID, len(rec.Spans), rec.Attempts)
	}

	// Bodies are not kept when the gateway does not log them.
	h.update(admin.GatewaySettings{LogBodies: ptr(false)})
	resp, answer = h.chat(body)
	wantStatus(t, resp, answer, 200)
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.RequestBody != "" || rec.ResponseBody != "" {
		t.Errorf("bodies logged with log_bodies false: %q %q", rec.RequestBody, rec.ResponseBody)
	}

	// One record per request, none twice.
	seen := map[string]bool{}
	for _, r := range h.sink.Records() {
		if seen[r.ID] {
			t.Errorf("record %s twice", r.ID)
		}
		seen[r.ID] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d records for 3 requests", len(seen))
	}
}
