package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
)

// TestAdapterRefusalIsUnsupportedFeature: a feature the target's adapter
// cannot serve is refused before anything is sent, as 400
// unsupported_feature naming the provider and the feature (CONTRACT §12),
// on the chat door and on a translated door alike.
func TestAdapterRefusalIsUnsupportedFeature(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{})
	resp, b := h.do("POST", gwPath("compat/chat/completions"), bearer(h.token),
		`{"model":"anthropic/claude-sonnet-4-5","n":2,"messages":[{"role":"user","content":"x"}]}`)
	wantAPIError(t, resp, b, http.StatusBadRequest, apierr.TypeInvalidRequest, apierr.CodeUnsupportedFeature, "")
	if !strings.Contains(string(b), `anthropic does not support n \u003e 1`) {
		t.Errorf("body %s does not name the feature", b)
	}
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.ErrorCode != apierr.CodeUnsupportedFeature {
		t.Errorf("record error code %q, want %q", rec.ErrorCode, apierr.CodeUnsupportedFeature)
	}
}
