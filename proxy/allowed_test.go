package proxy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/store"
)

// TestAllowedModelsThroughRoute: a token's allowed_models holds on every
// target of a route. A route with an allowed and a forbidden target only
// ever uses the allowed one; a route with none allowed is a 403
// model_not_allowed before any upstream call; naming the route itself
// allows all of it; a bare model id allows that model on any path.
func TestAllowedModelsThroughRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addKey(h.gw.ID, "groq", "main", "gsk-upstream-groq-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "mixed", Strategy: "loadbalance", Targets: []store.RouteTarget{
			{Provider: "groq", Model: "llama-3.1-8b-instant", Weight: 1}, {Provider: "openai", Model: "gpt-4o-mini", Weight: 1}}},
		{Name: "fallback", Strategy: "fallback", Targets: []store.RouteTarget{
			{Provider: "groq", Model: "llama-3.1-8b-instant"}, {Provider: "openai", Model: "gpt-4o-mini"}}},
		{Name: "groq-only", Strategy: "fallback", Targets: []store.RouteTarget{{Provider: "groq", Model: "llama-3.1-8b-instant"}}},
	}})
	token := func(allowed ...string) string {
		tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "only " + allowed[0], AllowedModels: allowed})
		must(t, err)
		h.rebuild()
		return tok.Secret
	}
	// upstreams sends n requests for model and returns the upstream models
	// the mock saw, counted.
	upstreams := func(tok, path, model string, n int) map[string]int {
		t.Helper()
		before := len(h.mock.Requests())
		for range n {
			resp, b := h.do("POST", path, bearer(tok), chatBody(model, ""))
			wantStatus(t, resp, b, 200)
		}
		seen := map[string]int{}
		for _, r := range h.mock.Requests()[before:] {
			var sent struct{ Model string }
			must(t, json.Unmarshal(r.Body, &sent))
			seen[sent.Model]++
		}
		return seen
	}

	openaiOnly := token("openai/gpt-4o-mini")
	for _, route := range []string{"mixed", "fallback"} {
		if diff := cmp.Diff(map[string]int{"gpt-4o-mini": 20}, upstreams(openaiOnly, chatPath, route, 20)); diff != "" {
			t.Errorf("route %s with only openai/gpt-4o-mini allowed: upstream models (-want +got):\n%s", route, diff)
		}
	}
	before := h.mock.Count()
	resp, b := h.do("POST", chatPath, bearer(openaiOnly), chatBody("groq-only", ""))
	wantAPIError(t, resp, b, 403, "permission_error", "model_not_allowed", "")
	if n := h.mock.Count() - before; n != 0 {
		t.Errorf("the provider saw %d requests for a refused route, want 0", n)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 403 || rec.ErrorCode != "model_not_allowed" {
		t.Errorf("record %d %q, want 403 model_not_allowed", rec.Status, rec.ErrorCode)
	}

	// The route's own name allows every target of it.
	if got := upstreams(token("mixed"), chatPath, "mixed", 40); got["gpt-4o-mini"] == 0 || got["llama-3.1-8b-instant"] == 0 {
		t.Errorf("route mixed allowed by name: upstream models %v, want both targets", got)
	}
	// A bare model id allows that model on the compat and provider paths.
	bare := token("gpt-4o-mini")
	for _, tc := range []struct{ path, model string }{{chatPath, "openai/gpt-4o-mini"}, {gwPath("openai/chat/completions"), "gpt-4o-mini"}, {chatPath, "mixed"}} {
		if diff := cmp.Diff(map[string]int{"gpt-4o-mini": 4}, upstreams(bare, tc.path, tc.model, 4)); diff != "" {
			t.Errorf("%s %s with gpt-4o-mini allowed: upstream models (-want +got):\n%s", tc.path, tc.model, diff)
		}
	}
	resp, b = h.do("POST", chatPath, bearer(bare), chatBody("groq/llama-3.1-8b-instant", ""))
	wantAPIError(t, resp, b, 403, "permission_error", "model_not_allowed", "")
}
