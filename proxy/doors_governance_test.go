package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
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
	// native: the door passes the body through and relays the
	// provider's answer as it came (docs/inference.md "Native doors").
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
// a repeat on the same door hits, with no provider call, cost 0 and the
// saved cost recorded. A native door's hit is the stored answer byte for
// byte, with the same headers.
func TestDoorsCacheKeyedPerDoor(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: cacheOn(300)})
	const prompt = "cache this prompt"
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			before := h.mock.Count()
			first, b1 := h.send(d, prompt)
			wantStatus(t, first, b1, 200)
			// Earlier doors stored the same prompt: a MISS here shows the
			// key is per door.
			wantCache(t, first, "MISS")
			resp, b := h.send(d, prompt)
			wantStatus(t, resp, b, 200)
			wantCache(t, resp, "HIT")
			if n := h.mock.Count() - before; n != 1 {
				t.Errorf("the provider saw %d requests, want 1", n)
			}
			wantHitRecord(t, h, resp)
			if d.native {
				wantSameAnswer(t, first, b1, resp, b)
			}
		})
	}
}

// TestDoorsStreamCache: a repeated streamed request is a HIT on every
// door. A translated door replays the answer a plain request stored (the
// key ignores stream); a native door stores its events as they went out
// and replays them byte for byte, under a key of their own (its plain
// answer cannot be replayed as events).
func TestDoorsStreamCache(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: cacheOn(300)})
	const prompt = "cache this streamed prompt"
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			before := h.mock.Count()
			resp, b := h.sendStream(d, prompt)
			wantStatus(t, resp, b, 200)
			wantCache(t, resp, "MISS")
			resp, b = h.send(d, prompt)
			wantStatus(t, resp, b, 200)
			if want := map[bool]string{true: "MISS", false: "HIT"}[d.native]; resp.Header.Get("x-sluice-cache") != want {
				t.Errorf("plain after streamed: x-sluice-cache %q, want %q", resp.Header.Get("x-sluice-cache"), want)
			}
			before2 := h.mock.Count()
			first, b1 := h.sendStream(d, prompt)
			wantStatus(t, first, b1, 200)
			wantCache(t, first, "HIT")
			if h.mock.Count() != before2 {
				t.Errorf("a streamed hit called the provider")
			}
			wantHitRecord(t, h, first)
			text, code := doorText(t, b1, true)
			if code != "" || !strings.Contains(text, prompt) {
				t.Errorf("replayed stream text %q error %q, want the answer", text, code)
			}
			if d.native {
				again, b2 := h.sendStream(d, prompt)
				wantSameAnswer(t, first, b1, again, b2)
				if n := h.mock.Count() - before; n != 2 {
					t.Errorf("the provider saw %d requests, want 2 (one streamed, one plain)", n)
				}
			}
		})
	}
}

// wantHitRecord checks a hit's record: cache HIT, cost 0, the saved cost.
func wantHitRecord(t *testing.T, h *harness, resp *http.Response) {
	t.Helper()
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Cache != "HIT" || rec.CostUSD != 0 || rec.CacheSavedUSD <= 0 || rec.Provider == "" {
		t.Errorf("hit record cache %q cost %v saved %v provider %q, want HIT, 0, the saved cost",
			rec.Cache, rec.CostUSD, rec.CacheSavedUSD, rec.Provider)
	}
}

// wantSameAnswer checks that a hit answered the stored answer as it was
// first sent: the same body and the same answer headers.
func wantSameAnswer(t *testing.T, first *http.Response, b1 []byte, hit *http.Response, b2 []byte) {
	t.Helper()
	if !bytes.Equal(b1, b2) {
		t.Errorf("the hit answered\n%s\nwant the stored answer\n%s", b2, b1)
	}
	for _, k := range []string{"Content-Type", "x-sluice-provider", "x-sluice-model"} {
		if first.Header.Get(k) != hit.Header.Get(k) {
			t.Errorf("header %s: hit %q, first %q", k, hit.Header.Get(k), first.Header.Get(k))
		}
	}
}

// sendStream posts text through door d as a streamed request.
func (h *harness) sendStream(d govDoor, text string) (*http.Response, []byte) {
	h.tb.Helper()
	return h.do("POST", d.path, d.hdr(h.token), `{"stream":true,`+strings.TrimPrefix(d.body(text), "{"))
}

// sender is send, or sendStream when stream.
func (h *harness) sender(stream bool) func(govDoor, string) (*http.Response, []byte) {
	if stream {
		return h.sendStream
	}
	return h.send
}

// streamedName names a subtest plain or streamed.
func streamedName(stream bool) string {
	if stream {
		return " streamed"
	}
	return " plain"
}

// doorText returns the answer's text, whatever the door, and the code of
// the error that ended a stream ("" when none): chat choices, Anthropic
// content blocks and deltas, Responses output items and
// output_text deltas.
func doorText(t *testing.T, body []byte, stream bool) (text, code string) {
	t.Helper()
	type part struct {
		Text string `json:"text"`
	}
	type answer struct {
		Type  string `json:"type"`
		Code  string `json:"code"`
		Delta json.RawMessage
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
			Delta   struct{ Content string } `json:"delta"`
		} `json:"choices"`
		Content []part `json:"content"`
		Output  []struct {
			Content []part `json:"content"`
		} `json:"output"`
	}
	var docs [][]byte
	if stream {
		_, data := sseEvents(t, body)
		for _, x := range data {
			if x != "[DONE]" {
				docs = append(docs, []byte(x))
			}
		}
	} else {
		docs = [][]byte{body}
	}
	var b strings.Builder
	for _, doc := range docs {
		var a answer
		if err := json.Unmarshal(doc, &a); err != nil {
			t.Fatalf("answer %s: %v", doc, err)
		}
		switch {
		case a.Type == "error" && a.Code != "":
			code = a.Code
		case a.Error != nil:
			code = a.Error.Code
		case a.Type == "content_block_delta":
			var d part
			_ = json.Unmarshal(a.Delta, &d)
			b.WriteString(d.Text)
		case a.Type == "response.output_text.delta":
			var d string
			_ = json.Unmarshal(a.Delta, &d)
			b.WriteString(d)
		case stream:
			for _, c := range a.Choices {
				b.WriteString(c.Delta.Content)
			}
		default:
			for _, c := range a.Choices {
				b.WriteString(c.Message.Content)
			}
			for _, c := range a.Content {
				b.WriteString(c.Text)
			}
			for _, o := range a.Output {
				for _, c := range o.Content {
					b.WriteString(c.Text)
				}
			}
		}
	}
	return b.String(), code
}

// TestDoorsResponseRules: response rules apply on every door, plain and
// streamed, the answer split in many deltas. A block answers 400
// content_blocked in the door's shape, or ends a stream that started
// with the door's error event, and the blocked word never reaches the
// client; a redaction gives the same text plain and streamed, with one
// guardrail event.
func TestDoorsResponseRules(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{})
	block := h.addRule(admin.RuleInput{Name: "rule one", Direction: "response", Kind: "keyword", Patterns: []string{"Project Bluebird"}, Action: "block"})
	redact := h.addRule(admin.RuleInput{Name: "mask falcon", Direction: "response", Kind: "keyword", Patterns: []string{"peregrine falcon"}, Action: "redact"})
	for _, d := range govDoors {
		for _, stream := range []bool{false, true} {
			send := h.sender(stream)
			t.Run(d.name+streamedName(stream), func(t *testing.T) {
				h.mock.Script(providertest.Step{Chunks: 24})
				resp, b := send(d, "tell me about Project Bluebird, the plan")
				id := resp.Header.Get(RequestIDHeader)
				if strings.Contains(strings.ToLower(string(b)), "bluebird") {
					t.Errorf("the blocked words reached the client: %s", b)
				}
				if stream {
					wantStatus(t, resp, b, 200)
					if _, code := doorText(t, b, true); code != "content_blocked" {
						t.Errorf("stream ended with error %q, want content_blocked: %s", code, b)
					}
				} else {
					wantDoorError(t, d, resp, b, 400, "invalid_request_error", "content_blocked")
				}
				if rec := h.record(id); rec.Status != 400 || rec.ErrorCode != "content_blocked" || !slices.Contains(rec.RuleHits, block.ID) || rec.TokensOut <= 0 {
					t.Errorf("blocked record status %d code %q hits %v tokens out %d", rec.Status, rec.ErrorCode, rec.RuleHits, rec.TokensOut)
				}

				h.mock.Script(providertest.Step{Chunks: 24})
				resp, b = send(d, "the peregrine falcon dives")
				wantStatus(t, resp, b, 200)
				text, code := doorText(t, b, stream)
				if want := "Hello from mock: the [REDACTED:keyword] dives"; text != want || code != "" {
					t.Errorf("text %q (error %q), want %q", text, code, want)
				}
				if strings.Contains(string(b), "falcon") {
					t.Errorf("the redacted words reached the client: %s", b)
				}
				rec := h.record(resp.Header.Get(RequestIDHeader))
				n := 0
				for _, ev := range rec.Events {
					if ev.RuleID == redact.ID {
						n++
					}
				}
				if n != 1 || rec.Status != 200 {
					t.Errorf("record status %d with %d events of the redact rule, want 200 and 1: %+v", rec.Status, n, rec.Events)
				}
			})
		}
	}
}

// TestDoorsStreamLogged: each door's streamed request is one record with
// its operation, tokens and a cost.
func TestDoorsStreamLogged(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{})
	for _, d := range govDoors {
		t.Run(d.name, func(t *testing.T) {
			resp, b := h.sendStream(d, "log my stream")
			wantStatus(t, resp, b, 200)
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.Operation != d.op || rec.Status != 200 || rec.TokensIn <= 0 || rec.TokensOut <= 0 || rec.CostUSD <= 0 {
				t.Errorf("record operation %q status %d tokens %d/%d cost %v, want %q 200 with tokens and cost",
					rec.Operation, rec.Status, rec.TokensIn, rec.TokensOut, rec.CostUSD, d.op)
			}
		})
	}
}

// TestDoorsShareBudget: one gateway budget counts the spend of every door
// together: after a request through each door, the budget's spend is the
// sum of their records' costs.
func TestDoorsShareBudget(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.USD(1e12), Period: "total", Hard: true})}})
	var sum money.USD
	for _, d := range govDoors {
		for _, stream := range []bool{false, true} {
			send := h.sender(stream)
			resp, b := send(d, "spend a little")
			wantStatus(t, resp, b, 200)
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.CostUSD <= 0 {
				t.Errorf("%s: cost %v", d.name, rec.CostUSD)
			}
			sum += rec.CostUSD
		}
	}
	start, _ := budget.Window("total", time.Now())
	if spent, _ := h.inf.cfg.Budgets.Spent(context.Background(), budget.GatewayScope(h.gw.ID), start); spent != sum {
		t.Errorf("spent %s, want the sum of the records %s", spent, sum)
	}
}

// TestDoorsAttemptSpans: a retried request is one span per attempt on
// every door, plain and streamed.
func TestDoorsAttemptSpans(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0)}})
	for _, d := range govDoors {
		for _, stream := range []bool{false, true} {
			send := h.sender(stream)
			t.Run(d.name+streamedName(stream), func(t *testing.T) {
				h.mock.Script(providertest.Step{Status: 500})
				resp, b := send(d, "try twice")
				wantStatus(t, resp, b, 200)
				if diff := cmp.Diff([]string{"1:main:500", "2:main:200"}, attemptSpans(t, h, resp.Header.Get(RequestIDHeader))); diff != "" {
					t.Errorf("attempt spans (-want +got):\n%s", diff)
				}
			})
		}
	}
}
