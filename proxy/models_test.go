package proxy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/internal/store"
)

// modelsHarness is a gateway with an unrestricted openai key (the
// harness's "main"), a groq key for one model, and routes: "fast" (groq),
// "mixed" (groq and openai) and "nokey" (anthropic, which has no key here).
func modelsHarness(t *testing.T) *harness {
	h := newHarness(t, harnessConfig{})
	h.addKey(h.gw.ID, "groq", "main", "gsk-upstream-groq-0001", "llama-3.1-8b-instant")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "fast", Strategy: "fallback", Targets: []store.RouteTarget{{Provider: "groq", Model: "llama-3.1-8b-instant"}}},
		{Name: "mixed", Strategy: "fallback", Targets: []store.RouteTarget{
			{Provider: "groq", Model: "llama-3.1-8b-instant"}, {Provider: "openai", Model: "gpt-4o-mini"}}},
		{Name: "nokey", Strategy: "fallback", Targets: []store.RouteTarget{{Provider: "anthropic", Model: "claude-sonnet-4-5"}}},
	}})
	return h
}

// listModels gets a models path with token and returns the listed ids and
// owners, after checking the answer against OpenAI's list schema.
func (h *harness) listModels(t *testing.T, path, token string) (ids, owners []string, rec analytics.Record) {
	t.Helper()
	resp, b := h.do("GET", gwPath(path), bearer(token), "")
	wantStatus(t, resp, b, 200)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	openaischema.Check(t, openaischema.ListModels, "the list of models", b)
	var l modelList
	must(t, json.Unmarshal(b, &l))
	for _, m := range l.Data {
		ids, owners = append(ids, m.ID), append(owners, m.OwnedBy)
	}
	return ids, owners, h.record(resp.Header.Get(RequestIDHeader))
}

// TestModelsUnrestricted: a token without an allow-list sees the routes it
// can use and every provider/model a key of the gateway serves (the key
// lists, and the catalog for a key without one), sorted; nothing of a
// provider without a key. The request is logged as operation models, cost 0.
func TestModelsUnrestricted(t *testing.T) {
	t.Parallel()
	h := modelsHarness(t)
	ids, owners, rec := h.listModels(t, "compat/models", h.token)
	if !slices.IsSorted(ids) {
		t.Errorf("ids are not sorted: %q", ids)
	}
	want := []string{"fast", "mixed", "groq/llama-3.1-8b-instant"}
	for _, m := range catalog.Models() {
		if m.Provider == "openai" {
			want = append(want, "openai/"+m.ID)
		}
	}
	slices.Sort(want)
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("compat/models (-want +got):\n%s", d)
	}
	for i, id := range ids {
		wantOwner := "sluice"
		if p, _, ok := strings.Cut(id, "/"); ok {
			wantOwner = p
		}
		if owners[i] != wantOwner {
			t.Errorf("%s owned_by %q, want %q", id, owners[i], wantOwner)
		}
	}
	if rec.Operation != analytics.OpModels || rec.Status != 200 || rec.CostUSD != 0 || rec.TokensIn != 0 || rec.Provider != "" {
		t.Errorf("record: operation %q status %d cost %v tokens %d provider %q; want models, 200, 0, 0, none",
			rec.Operation, rec.Status, rec.CostUSD, rec.TokensIn, rec.Provider)
	}
	if n := h.mock.Count(); n != 0 {
		t.Errorf("the provider saw %d requests, want 0", n)
	}

	ids, owners, rec = h.listModels(t, "groq/models", h.token)
	if d := cmp.Diff([]string{"llama-3.1-8b-instant"}, ids); d != "" || owners[0] != "groq" {
		t.Errorf("groq/models (-want +got):\n%s (owner %q)", d, owners)
	}
	if rec.Operation != analytics.OpModels || rec.Provider != "groq" {
		t.Errorf("record: operation %q provider %q, want models, groq", rec.Operation, rec.Provider)
	}
	if ids, _, _ := h.listModels(t, "anthropic/models", h.token); len(ids) != 0 {
		t.Errorf("anthropic/models without a key: %q, want none", ids)
	}
}

// TestModelsRestricted: a token with an allow-list sees only what it may
// use — the allowed provider/model and the routes with an allowed target
// (or allowed by name) — and the same answer twice.
func TestModelsRestricted(t *testing.T) {
	t.Parallel()
	h := modelsHarness(t)
	token := func(allowed ...string) string {
		tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "only " + allowed[0], AllowedModels: allowed})
		must(t, err)
		h.rebuild()
		return tok.Secret
	}
	for _, tc := range []struct {
		name           string
		allowed        []string
		compat, openai []string
	}{
		{"provider/model", []string{"openai/gpt-4o-mini"}, []string{"mixed", "openai/gpt-4o-mini"}, []string{"gpt-4o-mini"}},
		{"bare id", []string{"gpt-4o-mini"}, []string{"mixed", "openai/gpt-4o-mini"}, []string{"gpt-4o-mini"}},
		{"route by name", []string{"fast"}, []string{"fast"}, nil},
		{"route without a key", []string{"nokey", "anthropic/claude-sonnet-4-5"}, nil, nil},
		{"unknown model", []string{"openai/gpt-nonexistent"}, []string{"openai/gpt-nonexistent"}, []string{"gpt-nonexistent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := token(tc.allowed...)
			ids, _, _ := h.listModels(t, "compat/models", tok)
			if d := cmp.Diff(tc.compat, ids); d != "" {
				t.Errorf("compat/models (-want +got):\n%s", d)
			}
			again, _, _ := h.listModels(t, "compat/models", tok)
			if d := cmp.Diff(ids, again); d != "" {
				t.Errorf("a second listing differs (-first +second):\n%s", d)
			}
			ids, _, _ = h.listModels(t, "openai/models", tok)
			if d := cmp.Diff(tc.openai, ids); d != "" {
				t.Errorf("openai/models (-want +got):\n%s", d)
			}
		})
	}
}

// TestModelsChecks: the models paths answer GET only (405 with Allow: GET),
// the other paths still POST only; credential, gateway and provider are
// checked as on every path.
func TestModelsChecks(t *testing.T) {
	t.Parallel()
	h := modelsHarness(t)
	for _, tc := range []struct {
		name, method, path, token string
		status                    int
		code, allow               string
	}{
		{"POST models", "POST", "compat/models", h.token, 405, "method_not_allowed", "GET"},
		{"PUT provider models", "PUT", "openai/models", h.token, 405, "method_not_allowed", "GET"},
		{"GET chat", "GET", "compat/chat/completions", h.token, 405, "method_not_allowed", "POST"},
		{"no credential", "GET", "compat/models", "", 401, "missing_token", ""},
		{"unknown provider", "GET", "nosuch/models", h.token, 404, "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := bearer(tc.token)
			if tc.token == "" {
				hdr.Del("Authorization")
			}
			resp, b := h.do(tc.method, gwPath(tc.path), hdr, "")
			wantStatus(t, resp, b, tc.status)
			if got := errCode(b); got != tc.code {
				t.Errorf("code %q, want %q", got, tc.code)
			}
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
	resp, b := h.do("GET", "/v1/"+testTenant+"/nosuch/compat/models", bearer(h.token), "")
	wantStatus(t, resp, b, 404)
}

// TestModelsCountAgainstNoLimit: listings pass a token's rate limit of one
// request a minute, which a chat request then still has whole.
func TestModelsCountAgainstNoLimit(t *testing.T) {
	t.Parallel()
	h := modelsHarness(t)
	tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "one a minute",
		RateLimit: &store.RateLimit{RequestsPerMinute: ptr(1)}})
	must(t, err)
	h.rebuild()
	for range 3 {
		h.listModels(t, "compat/models", tok.Secret)
	}
	resp, b := h.do("POST", chatPath, bearer(tok.Secret), chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	resp, b = h.do("POST", chatPath, bearer(tok.Secret), chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 429)
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Operation != analytics.OpChat {
		t.Errorf("chat record operation %q, want chat", rec.Operation)
	}
}

// TestParseModelsPath: the models paths parse on /compat and a provider,
// nowhere deeper, and name their operation.
func TestParseModelsPath(t *testing.T) {
	for _, tc := range []struct {
		path             string
		ok, models       bool
		provider, opName string
	}{
		{"/v1/acme/prod/compat/models", true, true, "", "models"},
		{"/v1/acme/prod/openai/models", true, true, "openai", "models"},
		{"/v1/acme/prod/compat/models/gpt-4o", false, false, "", ""},
		{"/v1/acme/prod/compat/v1/models", false, false, "", ""},
		{"/v1/acme/prod/compat/models/", false, false, "", ""},
		{"/v1/acme/prod/compat/chat/completions", true, false, "", "chat"},
		{"/v1/acme/prod/compat/completions", true, false, "", "completions"},
		{"/v1/acme/prod/openai/embeddings", true, false, "openai", "embeddings"},
		{"/v1/acme/prod/compat/v1/messages", true, false, "", "messages"},
		{"/v1/acme/prod/compat/v1/messages/count_tokens", true, false, "", "count_tokens"},
		{"/v1/acme/prod/compat/responses", true, false, "", "responses"},
	} {
		r, ok := parsePath([]byte(tc.path))
		if ok != tc.ok || (ok && (r.models != tc.models || string(r.provider) != tc.provider || r.operation() != tc.opName)) {
			t.Errorf("%s: ok %v models %v provider %q operation %q; want %v %v %q %q",
				tc.path, ok, r.models, r.provider, r.operation(), tc.ok, tc.models, tc.provider, tc.opName)
		}
	}
}

// TestOperationRecorded: every record names its front door, answered or
// refused after the path was read; a 405 has none.
func TestOperationRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	for _, tc := range []struct {
		method, path, body string
		status             int
		op                 string
	}{
		{"POST", "compat/chat/completions", chatBody("openai/gpt-4o-mini", ""), 200, "chat"},
		{"POST", "openai/chat/completions", chatBody("gpt-4o-mini", ""), 200, "chat"},
		{"POST", "compat/embeddings", `{"model":"openai/text-embedding-3-small","input":"hello"}`, 200, "embeddings"},
		{"POST", "compat/completions", `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"hello"}`, 200, "completions"},
		{"POST", "compat/embeddings", `{"model":"nosuch/model","input":"hello"}`, 400, "embeddings"},
		{"GET", "compat/models", "", 200, "models"},
		{"POST", "compat/v1/messages", `{"model":"openai/gpt-4o-mini","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, 200, "messages"},
		{"POST", "compat/v1/messages/count_tokens", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, 200, "count_tokens"},
		{"POST", "openai/responses", `{"model":"gpt-4o-mini","input":"hi"}`, 200, "responses"},
		// No anthropic key on this harness's gateway: refused, still recorded as the door's operation.
		{"POST", "anthropic/v1/messages", `{"model":"claude-3-5-haiku-latest","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, 400, "messages"},
		{"GET", "compat/embeddings", "", 405, ""},
	} {
		resp, b := h.do(tc.method, gwPath(tc.path), bearer(h.token), tc.body)
		wantStatus(t, resp, b, tc.status)
		if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Operation != tc.op {
			t.Errorf("%s %s: record operation %q, want %q", tc.method, tc.path, rec.Operation, tc.op)
		}
	}
}

// TestModelsTenantProviders: the tenant's provider allow-list holds on the
// listings: a provider it leaves out is not listed on /compat (nor a route
// whose targets are all of it), and its own path is a 403.
func TestModelsTenantProviders(t *testing.T) {
	t.Parallel()
	h := modelsHarness(t)
	settings := admin.DefaultTenantSettings()
	settings.AllowedProviders = []string{"openai"}
	_, err := h.svc.UpdateTenant(h.ctx, h.root, testTenant, admin.TenantPatch{Settings: &settings})
	must(t, err)
	h.rebuild()
	ids, _, _ := h.listModels(t, "compat/models", h.token)
	for _, id := range ids {
		if id == "fast" || strings.HasPrefix(id, "groq/") {
			t.Errorf("compat/models lists %s of a provider the tenant does not allow", id)
		}
	}
	if !slices.Contains(ids, "mixed") || !slices.Contains(ids, "openai/gpt-4o-mini") {
		t.Errorf("compat/models %q, want mixed and openai/gpt-4o-mini", ids)
	}
	resp, b := h.do("GET", gwPath("groq/models"), bearer(h.token), "")
	wantStatus(t, resp, b, 403)
	if got := errCode(b); got != "provider_not_allowed" {
		t.Errorf("groq/models: code %q, want provider_not_allowed", got)
	}
}
