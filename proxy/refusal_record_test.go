package proxy

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
)

// TestRefusalsRecordModelAndMessage: every kind of refusal is recorded
// with the model the client asked for, its provider when the request
// names one, and the message the client got.
func TestRefusalsRecordModelAndMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	only, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "only 4o", AllowedModels: []string{"openai/gpt-4o"}})
	must(t, err)
	limited, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "limited", RateLimit: rpm(1)})
	must(t, err)
	h.rebuild()

	type refusal struct {
		name, token, body, code string
		provider, model         string
		setup                   func()
	}
	for _, tc := range []refusal{
		{name: "unknown model", token: h.token, body: chatBody("no-such-model", ""), code: apierr.CodeUnknownModel,
			model: "no-such-model"},
		{name: "unknown provider", token: h.token, body: chatBody("nosuch/model-x", ""), code: apierr.CodeUnknownModel,
			provider: "nosuch", model: "model-x"},
		{name: "model not allowed", token: only.Secret, body: chatBody("openai/gpt-4o-mini", ""), code: apierr.CodeModelNotAllowed,
			provider: "openai", model: "gpt-4o-mini"},
		{name: "blocked content", token: h.token, body: chatSaying("openai/gpt-4o-mini", "card 4111 1111 1111 1111", ""),
			code: apierr.CodeContentBlocked, provider: "openai", model: "gpt-4o-mini",
			setup: func() {
				h.addRule(admin.RuleInput{Name: "cards", Direction: "request", Kind: "pii", PII: []string{"credit_card"}, Action: "block"})
			}},
		{name: "rate limit", token: limited.Secret, body: chatBody("openai/gpt-4o-mini", ""), code: apierr.CodeRateLimitExceeded,
			provider: "openai", model: "gpt-4o-mini",
			setup: func() {
				h.clearRules()
				resp, b := h.do("POST", chatPath, bearer(limited.Secret), chatBody("openai/gpt-4o-mini", ""))
				wantStatus(t, resp, b, http.StatusOK)
			}},
		{name: "budget", token: h.token, body: pricedBody, code: apierr.CodeBudgetExceeded,
			provider: "openai", model: pricedModel,
			setup: func() {
				h.update(hardBudget(pricedWorst(), "monthly"))
				resp, b := h.do("POST", chatPath, bearer(h.token), pricedBody)
				wantStatus(t, resp, b, http.StatusOK)
			}},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		resp, b := h.do("POST", chatPath, bearer(tc.token), tc.body)
		if got := errCode(b); got != tc.code {
			t.Errorf("%s: answered %d %s, want code %s", tc.name, resp.StatusCode, b, tc.code)
			continue
		}
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		must(t, json.Unmarshal(b, &body))
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Provider != tc.provider || rec.Model != tc.model || rec.ErrorCode != tc.code ||
			rec.ErrorMessage == "" || rec.ErrorMessage != body.Error.Message {
			t.Errorf("%s: record %q/%q code %q message %q; want %q/%q %s and the client's message %q",
				tc.name, rec.Provider, rec.Model, rec.ErrorCode, rec.ErrorMessage, tc.provider, tc.model, tc.code, body.Error.Message)
		}
	}
}
