package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
)

// TestMessagesCountTokensAnthropic: on /compat, a count_tokens request
// whose target is Anthropic is answered by Anthropic's
// /v1/messages/count_tokens with the client's body ("model" replaced by
// the provider's id), logged with cost 0 and counted against no rate
// limit; any other provider's is still counted by the gateway.
func TestMessagesCountTokensAnthropic(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: admin.GatewaySettings{RateLimit: rpm(1)}})
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}}
	path := messagesPath + "/count_tokens"
	body := `{"model":"anthropic/claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"say hello"}]}`
	for i := 1; i <= 2; i++ {
		resp, b := h.do("POST", path, hdr, body)
		wantStatus(t, resp, b, 200)
		if string(b) != `{"input_tokens":4}` { // the mock's count
			t.Errorf("answer %s", b)
		}
		reqs := h.mock.Requests()
		if len(reqs) != i || reqs[i-1].Path != "/v1/messages/count_tokens" {
			t.Fatalf("upstream got %+v", reqs)
		}
		var sent map[string]any
		must(t, json.Unmarshal(reqs[i-1].Body, &sent))
		if sent["model"] != "claude-sonnet-4-5" || sent["system"] != "Be brief." || sent["max_tokens"] != nil {
			t.Errorf("upstream body %s", reqs[i-1].Body)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 200 || rec.CostUSD != 0 || rec.TokensIn != 0 || rec.Provider != "anthropic" ||
			rec.Model != "claude-sonnet-4-5" || rec.Operation != "count_tokens" {
			t.Errorf("record %+v", rec)
		}
	}
	// An OpenAI target is counted locally: no upstream call.
	resp, b := h.do("POST", path, hdr, strings.Replace(body, "anthropic/claude-sonnet-4-5", "openai/gpt-4o-mini", 1))
	wantStatus(t, resp, b, 200)
	if n := len(h.mock.Requests()); n != 2 {
		t.Errorf("an OpenAI count called the upstream: %d requests", n)
	}
	// An upstream error comes back in Anthropic's shape.
	resp, b = h.do("POST", path, hdr, strings.Replace(body, `"messages":[{"role":"user","content":"say hello"}]`, `"messages":[]`, 1))
	if resp.StatusCode < 400 || !strings.Contains(string(b), `"type":"error"`) {
		t.Errorf("empty messages: %d %s", resp.StatusCode, b)
	}
}
