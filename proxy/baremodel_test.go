package proxy

import (
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

func TestBareModelProvider(t *testing.T) {
	gw := &snapshot.Gateway{Keys: map[string][]*snapshot.Key{
		"openai":   {{Provider: "openai"}},
		"groq":     {{Provider: "groq", Models: []string{"llama-3.1-8b-instant", "shared"}}},
		"together": {{Provider: "together", Models: []string{"shared"}}, {Provider: "together", Models: []string{"shared"}}},
	}}
	for _, tt := range []struct {
		model, want string
		ok          bool
	}{
		{"llama-3.1-8b-instant", "groq", true},   // a key lists it
		{"claude-sonnet-4-5", "anthropic", true}, // the catalog lists it (no key: checkTargets refuses)
		{"gpt-4o-mini", "openai", true},          // the catalog
		{"shared", "", false},                    // two providers' keys list it
		{"no-such-model", "", false},
	} {
		got, ok := bareModelProvider(gw, tt.model)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %q %v, want %q %v", tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

// TestBareModelOnCompat: a bare id on a compat door reaches its provider;
// one of a provider without a key on the gateway is a 400.
func TestBareModelOnCompat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	resp, b := h.chat(chatBody("gpt-4o-mini", ""))
	wantStatus(t, resp, b, http.StatusOK)
	if got := resp.Header.Get("x-sluice-provider"); got != "openai" {
		t.Errorf("provider %q", got)
	}
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}}
	resp, b = h.do("POST", messagesPath, hdr, `{"model":"gpt-4o-mini","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, b, http.StatusOK)
	resp, b = h.do("POST", messagesPath, hdr, `{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, b, http.StatusBadRequest)
	if code := messagesErrCode(b); code != apierr.CodeProviderNotConfigured {
		t.Errorf("code %q: %s", code, b)
	}
	// The Responses door resolves bare ids the same way (one plan step).
	resp, b = h.do("POST", compatResponsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"hi"}`)
	wantStatus(t, resp, b, http.StatusOK)
	if got := resp.Header.Get("x-sluice-provider"); got != "openai" {
		t.Errorf("responses door: provider %q", got)
	}
}
