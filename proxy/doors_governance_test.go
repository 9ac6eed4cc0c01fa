package proxy

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Governance over every door (issue 14): the one pipeline runs behind
// each front door (CONTRACT §12), so logging, rate limits, in-flight
// limits, budgets, content rules and the cache apply to every door alike,
// and a refusal comes in the door's own error shape.

// govDoor is one front door as a client uses it.
type govDoor struct {
	name string
	path string
	// op is the record's operation.
	op string
	// anthropic: the door answers errors in Anthropic's shape
	// ({"type":"error","error":{…}}); otherwise OpenAI's ({"error":{…}}).
	anthropic bool
	// native: the door passes the body through (no cache, by design:
	// docs/inference.md "Native doors").
	native bool
	// body is a request saying text.
	body func(text string) string
	hdr  func(token string) http.Header
}

var govDoors = []govDoor{
	{name: "chat", path: chatPath, op: analytics.OpChat,
		body: func(text string) string { return chatSaying("openai/gpt-4o-mini", text, `,"max_tokens":16`) },
		hdr:  bearer},
	{name: "compat messages", path: messagesPath, op: analytics.OpMessages, anthropic: true,
		body: func(text string) string {
			return `{"model":"openai/gpt-4o-mini","max_tokens":16,"messages":[{"role":"user","content":` + quote(text) + `}]}`
		},
		hdr: anthropicHeaders},
	{name: "compat responses", path: compatResponsesPath, op: analytics.OpResponses,
		body: func(text string) string {
			return `{"model":"openai/gpt-4o-mini","max_output_tokens":16,"input":` + quote(text) + `}`
		},
		hdr: bearer},
	{name: "native messages", path: nativeMessagesPath, op: analytics.OpMessages, anthropic: true, native: true,
		body: func(text string) string {
			return `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":` + quote(text) + `}]}`
		},
		hdr: anthropicHeaders},
	{name: "native responses", path: responsesPath, op: analytics.OpResponses, native: true,
		body: func(text string) string {
			return `{"model":"gpt-4o-mini","max_output_tokens":16,"input":` + quote(text) + `}`
		},
		hdr: bearer},
}

// govHarness is a harness with both an openai and an anthropic key on the
// mock, so that every door has a provider.
func govHarness(t *testing.T, cfg harnessConfig) *harness {
	h := newHarness(t, cfg)
	h.addKey(h.gw.ID, "anthropic", "main", anthropicKey)
	h.rebuild()
	return h
}

// send posts text through door d with the harness token.
func (h *harness) send(d govDoor, text string) (*http.Response, []byte) {
	h.tb.Helper()
	return h.do("POST", d.path, d.hdr(h.token), d.body(text))
}

// wantDoorError checks a refusal in the door's error shape: the status,
// the error type and code.
func wantDoorError(t *testing.T, d govDoor, resp *http.Response, b []byte, status int, typ, code string) {
	t.Helper()
	wantStatus(t, resp, b, status)
	if d.anthropic {
		var e anthropicErrorBody
		must(t, json.Unmarshal(b, &e))
		if e.Type != "error" || e.Error.Type != typ || e.Error.Code != code {
			t.Errorf("%s: error %s, want Anthropic's shape with %s %s", d.name, b, typ, code)
		}
		return
	}
	wantAPIError(t, resp, b, status, typ, code, "")
}

// budgetType is the error type of a budget refusal on d: OpenAI's
// insufficient_quota, Anthropic's rate_limit_error.
func budgetType(d govDoor) string {
	if d.anthropic {
		return "rate_limit_error"
	}
	return "insufficient_quota"
}

// TestDoorsLogged: each door's request is one record with its operation,
// tokens and a cost.
func TestDoorsLogged(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{})
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			resp, b := h.send(d, "log me please")
			wantStatus(t, resp, b, 200)
			id := resp.Header.Get(RequestIDHeader)
			rec := h.record(id)
			if rec.Operation != d.op || rec.Status != 200 || rec.TokensIn <= 0 || rec.TokensOut <= 0 || rec.CostUSD <= 0 {
				t.Errorf("record operation %q status %d tokens %d/%d cost %v, want %q 200 with tokens and cost",
					rec.Operation, rec.Status, rec.TokensIn, rec.TokensOut, rec.CostUSD, d.op)
			}
			n := 0
			for _, r := range h.sink.Records() {
				if r.ID == id {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d records with id %s, want 1", n, id)
			}
		})
	}
}

// TestDoorsShareRateLimit: one gateway limit of 2 requests per minute
// counts the requests of every door together: one through another door,
// one through this door, then the third is refused in this door's shape.
func TestDoorsShareRateLimit(t *testing.T) {
	t.Parallel()
	for i, d := range govDoors {
		other := govDoors[(i+1)%len(govDoors)]
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			h := govHarness(t, harnessConfig{})
			h.update(admin.GatewaySettings{RateLimit: rpm(2)})
			resp, b := h.send(other, "first")
			wantStatus(t, resp, b, 200)
			resp, b = h.send(d, "second")
			wantStatus(t, resp, b, 200)
			resp, b = h.send(d, "third")
			wantDoorError(t, d, resp, b, 429, "rate_limit_error", "rate_limit_exceeded")
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("no Retry-After")
			}
			if n := h.mock.Count(); n != 2 {
				t.Errorf("the provider saw %d requests, want 2", n)
			}
		})
	}
}

// TestDoorsShareInFlightLimit: with max_in_flight 1 on the gateway, a
// slow request through another door holds the slot, and this door's
// request is refused with 429 concurrency_limit_exceeded in its shape.
func TestDoorsShareInFlightLimit(t *testing.T) {
	t.Parallel()
	for i, d := range govDoors {
		other := govDoors[(i+1)%len(govDoors)]
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			h := govHarness(t, harnessConfig{})
			h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: ptr(1)}})
			h.mock.Script(providertest.Step{Latency: 2 * time.Second})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, b := h.send(other, "slow")
				if resp.StatusCode != 200 {
					t.Errorf("the slow request: %d %s", resp.StatusCode, b)
				}
			}()
			if !waitFor(5*time.Second, func() bool { _, n := h.counters.Busy(); return n > 0 }) {
				t.Fatal("the slow request never got in flight")
			}
			resp, b := h.send(d, "fast")
			wantDoorError(t, d, resp, b, 429, "rate_limit_error", "concurrency_limit_exceeded")
			wg.Wait()
			h.waitIdle(t)
			resp, b = h.send(d, "after")
			wantStatus(t, resp, b, 200)
		})
	}
}

// TestDoorsHardBudget: a spent hard budget refuses every door with 429
// budget_exceeded, x-should-retry: false, in the door's shape, before the
// provider is called.
func TestDoorsHardBudget(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: hardBudget(1, "total")}) // a nano-dollar
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			before := h.mock.Count()
			resp, b := h.send(d, "spend money")
			wantDoorError(t, d, resp, b, 429, budgetType(d), "budget_exceeded")
			if v := resp.Header.Get("x-should-retry"); v != "false" {
				t.Errorf("x-should-retry %q, want false", v)
			}
			if h.mock.Count() != before {
				t.Errorf("the provider was called")
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Operation != d.op || rec.ErrorCode != "budget_exceeded" {
				t.Errorf("record operation %q code %q", rec.Operation, rec.ErrorCode)
			}
		})
	}
}

// TestDoorsRequestRuleBlocks: a blocking request rule refuses every door
// with 400 content_blocked in the door's shape; the provider is not
// called.
func TestDoorsRequestRuleBlocks(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "no bluebird", Direction: "request", Kind: "keyword", Patterns: []string{"Project Bluebird"}, Action: "block"})
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			before := h.mock.Count()
			resp, b := h.send(d, "tell me about project bluebird today")
			wantDoorError(t, d, resp, b, 400, "invalid_request_error", "content_blocked")
			if h.mock.Count() != before {
				t.Errorf("the provider was called for a blocked request")
			}
			resp, b = h.send(d, "tell me about the weather")
			wantStatus(t, resp, b, 200)
		})
	}
}

// TestDoorsCacheKeyedPerDoor: the same prompt through two doors does not
// hit the other door's entry (an answer is stored in its door's shape);
// a repeat on the same door hits. The native doors bypass the cache by
// design (the body is passed through: docs/inference.md).
func TestDoorsCacheKeyedPerDoor(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: cacheOn(300)})
	const prompt = "cache this prompt"
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			before := h.mock.Count()
			resp, b := h.send(d, prompt)
			wantStatus(t, resp, b, 200)
			if d.native {
				wantCache(t, resp, "BYPASS")
			} else {
				// Earlier doors stored the same prompt: a MISS here
				// shows the key is per door.
				wantCache(t, resp, "MISS")
			}
			resp, b = h.send(d, prompt)
			wantStatus(t, resp, b, 200)
			want, calls := "HIT", 1
			if d.native {
				want, calls = "BYPASS", 2
			}
			wantCache(t, resp, want)
			if n := h.mock.Count() - before; n != calls {
				t.Errorf("the provider saw %d requests, want %d", n, calls)
			}
		})
	}
}
