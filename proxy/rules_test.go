package proxy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/store"
)

// addRule creates a content rule on the harness gateway and rebuilds the
// snapshot.
func (h *harness) addRule(in admin.RuleInput) *store.Rule {
	h.tb.Helper()
	r, err := h.svc.CreateRule(h.ctx, h.root, h.gw.ID, in)
	must(h.tb, err)
	h.rebuild()
	return r
}

// clearRules deletes every rule of the harness gateway.
func (h *harness) clearRules() {
	h.tb.Helper()
	list, err := h.svc.ListRules(h.ctx, h.root, h.gw.ID)
	must(h.tb, err)
	for _, r := range list.Data {
		must(h.tb, h.svc.DeleteRule(h.ctx, h.root, h.gw.ID, r.ID))
	}
	h.rebuild()
}

// chatSaying is a chat request whose user message is text.
func chatSaying(model, text, extra string) string {
	return `{"model":` + quote(model) + `,"messages":[{"role":"user","content":` + quote(text) + `}]` + extra + `}`
}

// streamText reads a chat stream and returns the concatenated content,
// the event kinds and the error event's code, if any.
func (h *harness) streamText(t *testing.T, body string) (text string, evKinds []string, errCode string, id string) {
	t.Helper()
	resp, sr := h.openStream(t, body)
	defer resp.Body.Close()
	evs := sr.all(t)
	var b strings.Builder
	for _, ev := range evs {
		k := chunkKind(ev.data)
		evKinds = append(evKinds, k)
		if k == "error" {
			_, errCode = streamError(t, ev.data)
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if k != "done" {
			if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
				t.Fatalf("event %q: %v", ev.data, err)
			}
			for _, ch := range c.Choices {
				b.WriteString(ch.Delta.Content)
			}
		}
	}
	return b.String(), evKinds, errCode, resp.Header.Get(RequestIDHeader)
}

// answerText returns the message content of a chat completion.
func answerText(t *testing.T, body []byte) string {
	t.Helper()
	var a struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &a); err != nil || len(a.Choices) == 0 {
		t.Fatalf("answer %s: %v", body, err)
	}
	return a.Choices[0].Message.Content
}

// wantNoRaw fails when raw appears anywhere in the record, its bodies and
// its guardrail events included.
func wantNoRaw(t *testing.T, rec analytics.Record, raw string) {
	t.Helper()
	all, _ := json.Marshal(rec)
	evs, _ := json.Marshal(rec.Events)
	if strings.Contains(string(all), raw) || strings.Contains(string(evs), raw) {
		t.Errorf("the raw match %q is in the record: %s %s", raw, all, evs)
	}
}

// ruleCase is one rule of the kind × action × direction table: a rule, a
// text it matches and what the match becomes.
type ruleCase struct {
	kind     string
	in       admin.RuleInput
	text     string // the user message (the mock echoes it in its answer)
	raw      string // what the rule matches in it
	redacted string // the placeholder of a redaction
	evKind   string
}

var ruleCases = []ruleCase{
	{kind: "keyword", in: admin.RuleInput{Kind: "keyword", Patterns: []string{"Project Bluebird"}},
		text: "tell me about project bluebird today", raw: "project bluebird", redacted: "[REDACTED:keyword]", evKind: "keyword"},
	{kind: "regex", in: admin.RuleInput{Kind: "regex", Patterns: []string{`order-\d{6}`}},
		text: "where is ORDER-123456 now", raw: "ORDER-123456", redacted: "[REDACTED:regex]", evKind: "regex"},
	{kind: "pii", in: admin.RuleInput{Kind: "pii", PII: []string{"email", "credit_card"}},
		text: "mail jane.doe@example.com now", raw: "jane.doe@example.com", redacted: "[REDACTED:email]", evKind: "email"},
}

// wantEvent checks the record of a rule hit: the rule in RuleHits, one
// masked event with the hit's fields, no raw match anywhere.
func wantEvent(t *testing.T, rec analytics.Record, r *store.Rule, tc ruleCase, dir string) {
	t.Helper()
	if len(rec.RuleHits) != 1 || rec.RuleHits[0] != r.ID {
		t.Errorf("RuleHits %v, want [%s]", rec.RuleHits, r.ID)
	}
	if len(rec.Events) == 0 {
		t.Fatalf("no guardrail event")
	}
	ev := rec.Events[0]
	if ev.ID == "" || ev.TS.IsZero() || ev.TenantID != testTenant || ev.GatewayID != rec.GatewayID || ev.RequestID != rec.ID ||
		ev.RuleID != r.ID || ev.RuleName != r.Name || ev.Kind != tc.evKind || ev.Action != r.Action || ev.Direction != dir {
		t.Errorf("event %+v; want rule %s %q kind %s action %s direction %s request %s", ev, r.ID, r.Name, tc.evKind, r.Action, dir, rec.ID)
	}
	if !strings.Contains(ev.Excerpt, "["+tc.evKind+":") {
		t.Errorf("excerpt %q does not name the masked match", ev.Excerpt)
	}
	if r.Action != "flag" || rec.RequestBody == "" {
		wantNoRaw(t, rec, tc.raw)
	} else {
		// A flag changes nothing, the logged bodies included; the event
		// still never holds the match.
		evs, _ := json.Marshal(rec.Events)
		if strings.Contains(strings.ToLower(string(evs)), strings.ToLower(tc.raw)) {
			t.Errorf("events hold the raw match: %s", evs)
		}
	}
}

func TestRulesOnRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{LogBodies: ptr(true)}})
	for _, tc := range ruleCases {
		for _, action := range []string{"block", "redact", "flag"} {
			t.Run(tc.kind+"/"+action, func(t *testing.T) {
				h.clearRules()
				in := tc.in
				in.Name, in.Direction, in.Action = "no "+tc.kind, "request", action
				r := h.addRule(in)
				before := h.mock.Count()
				resp, body := h.chat(chatSaying("openai/gpt-4o-mini", tc.text, ""))
				rec := h.record(resp.Header.Get(RequestIDHeader))
				switch action {
				case "block":
					wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
					if !strings.Contains(string(body), in.Name) || strings.Contains(strings.ToLower(string(body)), strings.ToLower(tc.raw)) {
						t.Errorf("error %s: want the rule's name and not the matched text", body)
					}
					if h.mock.Count() != before {
						t.Errorf("the provider was called for a blocked request")
					}
					if rec.Status != 400 || rec.ErrorCode != "content_blocked" || !strings.Contains(rec.RequestBody, tc.redacted) {
						t.Errorf("record status %d code %q body %q", rec.Status, rec.ErrorCode, rec.RequestBody)
					}
				case "redact":
					wantStatus(t, resp, body, 200)
					sent := h.mock.Requests()[h.mock.Count()-1].Body
					if strings.Contains(strings.ToLower(string(sent)), strings.ToLower(tc.raw)) || !strings.Contains(string(sent), tc.redacted) {
						t.Errorf("upstream got %s; want %s in place of %q", sent, tc.redacted, tc.raw)
					}
					if !json.Valid(sent) {
						t.Errorf("upstream got invalid JSON %s", sent)
					}
					if !strings.Contains(rec.RequestBody, tc.redacted) {
						t.Errorf("logged request body %q is not the redacted one", rec.RequestBody)
					}
				case "flag":
					wantStatus(t, resp, body, 200)
					sent := h.mock.Requests()[h.mock.Count()-1].Body
					if !strings.Contains(string(sent), tc.raw) {
						t.Errorf("a flagged request was changed: %s", sent)
					}
				}
				wantEvent(t, rec, r, tc, "request")
			})
		}
	}
	// A text without a match passes untouched and records nothing.
	h.clearRules()
	h.addRule(admin.RuleInput{Name: "cards", Direction: "request", Kind: "pii", PII: []string{"credit_card", "iban"}, Action: "block"})
	resp, body := h.chat(chatSaying("openai/gpt-4o-mini", "not a card 4111 1111 1111 1112, not an IBAN DE88 3704 0044 0532 0130 00", ""))
	wantStatus(t, resp, body, 200)
	if rec := h.record(resp.Header.Get(RequestIDHeader)); len(rec.RuleHits) != 0 || len(rec.Events) != 0 {
		t.Errorf("hits %v events %v on text without a match", rec.RuleHits, rec.Events)
	}
}

func TestRulesOnResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{LogBodies: ptr(true)}})
	for _, tc := range ruleCases {
		for _, action := range []string{"block", "redact", "flag"} {
			t.Run(tc.kind+"/"+action, func(t *testing.T) {
				h.clearRules()
				in := tc.in
				in.Name, in.Direction, in.Action = "no "+tc.kind, "response", action
				r := h.addRule(in)
				before := h.mock.Count()
				resp, body := h.chat(chatSaying("openai/gpt-4o-mini", tc.text, ""))
				rec := h.record(resp.Header.Get(RequestIDHeader))
				if h.mock.Count() != before+1 {
					t.Errorf("the provider was called %d times, want once", h.mock.Count()-before)
				}
				switch action {
				case "block":
					wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
					if strings.Contains(strings.ToLower(string(body)), strings.ToLower(tc.raw)) {
						t.Errorf("error %s holds the match", body)
					}
					if rec.Status != 400 || rec.ErrorCode != "content_blocked" {
						t.Errorf("record status %d code %q", rec.Status, rec.ErrorCode)
					}
				case "redact":
					wantStatus(t, resp, body, 200)
					got := answerText(t, body)
					if strings.Contains(strings.ToLower(got), strings.ToLower(tc.raw)) || !strings.Contains(got, tc.redacted) {
						t.Errorf("answer %q; want %s in place of %q", got, tc.redacted, tc.raw)
					}
					if !strings.Contains(rec.ResponseBody, tc.redacted) {
						t.Errorf("logged response %q is not the redacted one", rec.ResponseBody)
					}
				case "flag":
					wantStatus(t, resp, body, 200)
					if got := answerText(t, body); !strings.Contains(got, tc.raw) {
						t.Errorf("a flagged answer was changed: %q", got)
					}
				}
				if action != "flag" {
					// The request passed unchanged: the rule is for responses.
					rec.RequestBody = ""
				}
				wantEvent(t, rec, r, tc, "response")
			})
		}
	}
}

// Streams: the mock splits its answer into @chunks pieces of two or three
// characters, so every match is cut across several chunks.
func TestRulesOnStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{LogBodies: ptr(true)}})
	model := "openai/gpt-4o-mini@chunks=25"
	for _, tc := range ruleCases {
		for _, action := range []string{"block", "redact", "flag"} {
			t.Run(tc.kind+"/"+action, func(t *testing.T) {
				h.clearRules()
				in := tc.in
				in.Name, in.Direction, in.Action = "no "+tc.kind, "response", action
				r := h.addRule(in)
				text, evKinds, code, id := h.streamText(t, chatSaying(model, tc.text, `,"stream":true`))
				rec := h.record(id)
				last := evKinds[len(evKinds)-1]
				switch action {
				case "block":
					if last != "error" || code != "content_blocked" || strings.Contains(strings.Join(evKinds, " "), "done") {
						t.Errorf("events %v code %q; want an error event content_blocked and no [DONE]", evKinds, code)
					}
					if strings.Contains(strings.ToLower(text), strings.ToLower(tc.raw)) {
						t.Errorf("the client got the blocked text: %q", text)
					}
					if rec.Status != 400 || rec.ErrorCode != "content_blocked" {
						t.Errorf("record status %d code %q", rec.Status, rec.ErrorCode)
					}
				case "redact":
					want := "Hello from mock: " + strings.Replace(tc.text, tc.raw, tc.redacted, 1)
					if text != want || last != "done" {
						t.Errorf("stream text %q (events %v), want %q then [DONE]", text, evKinds, want)
					}
				case "flag":
					if want := "Hello from mock: " + tc.text; text != want || last != "done" {
						t.Errorf("stream text %q (events %v), want %q unchanged", text, evKinds, want)
					}
				}
				if action != "flag" {
					rec.RequestBody = "" // the rule is for responses
				}
				wantEvent(t, rec, r, tc, "response")
			})
		}
	}
}

// A match cut by chunk boundaries at every position is still redacted,
// and the stream keeps its shape: role, content, finish, [DONE].
func TestRulesStreamSplitAtEveryBoundary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "secrets", Direction: "both", Kind: "pii", PII: []string{"secret_key", "email"}, Action: "redact"})
	secret := "sk-proj-" + strings.Repeat("Ab3", 10)
	msg := "use " + secret + " or x@example.io"
	// The request is redacted too (direction both): the echo carries the
	// placeholders, which must come through whole.
	for _, chunks := range []int{1, 3, 7, 20, 64} {
		text, evKinds, _, _ := h.streamText(t, chatSaying("openai/gpt-4o-mini@chunks="+itoa(chunks), msg, `,"stream":true`))
		if want := "Hello from mock: use [REDACTED:secret_key] or [REDACTED:email]"; text != want {
			t.Errorf("chunks=%d: text %q, want %q", chunks, text, want)
		}
		if evKinds[0] != "other" || evKinds[len(evKinds)-1] != "done" || evKinds[len(evKinds)-2] != "other" {
			t.Errorf("chunks=%d: events %v", chunks, evKinds)
		}
	}
	// A raw secret split across chunks by an upstream that sends it in
	// pieces of one to five bytes.
	frames := []string{roleFrame}
	answer := "here: " + secret + " and mail x@example.io, done"
	for i, n := 0, 1; i < len(answer); n = n%5 + 1 {
		j := min(i+n, len(answer))
		frames = append(frames, contentFrame(answer[i:j]))
		i = j
	}
	frames = append(frames, `data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
	up := newSSEUpstream(t, 0, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "pieces", "sk-upstream-pieces-01", up.srv.URL+"/v1")
	h.rebuild()
	text, evKinds, _, id := h.streamText(t, chatSaying("openai-compatible/m", "hi", `,"stream":true`))
	if want := "here: [REDACTED:secret_key] and mail [REDACTED:email], done"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	if evKinds[len(evKinds)-1] != "done" {
		t.Errorf("events %v", evKinds)
	}
	rec := h.record(id)
	wantNoRaw(t, rec, secret[8:])
	if len(rec.Events) != 2 {
		t.Errorf("%d events, want 2: %+v", len(rec.Events), rec.Events)
	}
}

// Block mid-stream: the chunks before the match went out, the match never
// does, an error event ends the stream without [DONE], and the record has
// the block's status with the tokens the upstream counted.
func TestRulesStreamBlockMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "no ssn", Direction: "response", Kind: "pii", PII: []string{"us_ssn"}, Action: "block"})
	frames := []string{roleFrame}
	for i := range 40 {
		frames = append(frames, contentFrame("word"+itoa(i)+" "))
	}
	frames = append(frames, contentFrame("ssn 123-4"), contentFrame("5-6789 "), contentFrame("more text"), "data: [DONE]\n\n")
	up := newSSEUpstream(t, 0, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "ssn", "sk-upstream-ssn-0001", up.srv.URL+"/v1")
	h.rebuild()
	text, evKinds, code, id := h.streamText(t, chatSaying("openai-compatible/m", "hi", `,"stream":true`))
	if code != "content_blocked" || evKinds[len(evKinds)-1] != "error" {
		t.Fatalf("events %v code %q", evKinds, code)
	}
	if n := strings.Count(strings.Join(evKinds, " "), "error"); n != 1 {
		t.Errorf("events %v: want one error event, last", evKinds)
	}
	if !strings.HasPrefix(text, "word0 word1 ") || strings.Contains(text, "123-4") || strings.Contains(text, "more") {
		t.Errorf("client got %q", text)
	}
	rec := h.record(id)
	if rec.Status != 400 || rec.ErrorCode != "content_blocked" || len(rec.Events) != 1 || rec.Events[0].Action != "block" {
		t.Errorf("record status %d code %q events %+v", rec.Status, rec.ErrorCode, rec.Events)
	}
	// The tokens generated until the block are billed (the upstream sent
	// no usage: they are counted from what it streamed).
	if rec.TokensIn == 0 || rec.TokensOut < 40 || !hasFlag(rec.Flags, "partial") || !hasFlag(rec.Flags, "usage_estimated") {
		t.Errorf("record tokens %d/%d flags %v, want the streamed tokens billed", rec.TokensIn, rec.TokensOut, rec.Flags)
	}
	wantNoRaw(t, rec, "123-45-6789")
}

// Patterns are data (CVE-2026-42203 class): template, JNDI, code and
// shell payloads are stored verbatim and matched as the characters they
// are, never evaluated.
func TestRulesPayloadsAreLiteral(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	payloads := []string{"{{7*7}}", "{{.}}", "${jndi:ldap://x}", "__import__('os')", "$(id)"}
	h.addRule(admin.RuleInput{Name: "payloads", Direction: "request", Kind: "keyword", Patterns: payloads, Action: "block"})
	h.addRule(admin.RuleInput{Name: "regex payloads", Direction: "request", Kind: "regex", Patterns: []string{`\$\{jndi:[^}]*\}`, `\{\{7\*7\}\}`}, Action: "flag"})
	list, err := h.svc.ListRules(h.ctx, h.root, h.gw.ID)
	must(t, err)
	if got := []string(list.Data[0].Patterns); strings.Join(got, "\n") != strings.Join(payloads, "\n") {
		t.Errorf("stored patterns %q, want %q verbatim", got, payloads)
	}
	// What an evaluation would produce passes.
	resp, body := h.chat(chatSaying("openai/gpt-4o-mini", "49 . ldap://x uid=0(root) <module 'os'>", ""))
	wantStatus(t, resp, body, 200)
	if rec := h.record(resp.Header.Get(RequestIDHeader)); len(rec.RuleHits) != 0 {
		t.Errorf("evaluated forms hit rules %v", rec.RuleHits)
	}
	// The payloads themselves are blocked.
	for _, p := range payloads {
		resp, body := h.chat(chatSaying("openai/gpt-4o-mini", "try "+p+" here", ""))
		wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
	}
}

// Checklist 35: `(a+)+$` over a 1 MiB body finishes within the request's
// matching budget. With a budget that suffices the scan completes; when
// the budget runs out, each unchecked rule's fail mode applies — a flag
// rule lets the request pass, a block rule refuses it — and the log shows
// it (flag rules_budget_exceeded, a guardrail event of kind
// budget_exceeded). The durations are logged, not asserted.
func TestRulesPathologicalRegexOnLargeBody(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", 1<<20-64)
	redos := admin.RuleInput{Name: "redos", Direction: "request", Kind: "regex", Patterns: []string{`(a+)+$`}, Action: "flag"}

	h := newHarness(t, harnessConfig{ruleBudget: 5 * time.Minute})
	h.addRule(redos)
	start := time.Now()
	resp, body := h.chat(chatSaying("openai/gpt-4o-mini", text, ""))
	t.Logf("(a+)+$ over %d bytes of request text: answered in %s", len(text), time.Since(start))
	wantStatus(t, resp, body, 200)
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if len(rec.Events) != 1 || rec.Events[0].Kind != "regex" || hasFlag(rec.Flags, "rules_budget_exceeded") {
		t.Errorf("events %+v flags %v", rec.Events, rec.Flags)
	}
	// More text than the rules scan: flag-only rules let it through with
	// a flag; a block or redact rule refuses it (it cannot be checked).
	over := strings.Repeat("b ", 1<<19+16)
	resp, body = h.chat(chatSaying("openai/gpt-4o-mini", over, ""))
	wantStatus(t, resp, body, 200)
	if rec := h.record(resp.Header.Get(RequestIDHeader)); !hasFlag(rec.Flags, "rules_truncated") || len(rec.Events) != 1 || rec.Events[0].Kind != "text_too_long" {
		t.Errorf("flags %v events %+v, want rules_truncated and a text_too_long event", rec.Flags, rec.Events)
	}
	h.addRule(admin.RuleInput{Name: "strict", Direction: "request", Kind: "keyword", Patterns: []string{"secret"}, Action: "block"})
	resp, body = h.chat(chatSaying("openai/gpt-4o-mini", over, ""))
	wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")

	// A budget that runs out.
	hb := newHarness(t, harnessConfig{ruleBudget: time.Nanosecond})
	hb.addRule(redos)
	resp, body = hb.chat(chatSaying("openai/gpt-4o-mini", text, ""))
	wantStatus(t, resp, body, 200) // a flag rule fails open
	rec = hb.record(resp.Header.Get(RequestIDHeader))
	if !hasFlag(rec.Flags, "rules_budget_exceeded") || len(rec.Events) != 1 || rec.Events[0].Kind != "budget_exceeded" || rec.Events[0].Action != "flag" {
		t.Errorf("flags %v events %+v, want rules_budget_exceeded and a budget_exceeded event", rec.Flags, rec.Events)
	}
	hb.clearRules()
	redos.Action = "block"
	hb.addRule(redos)
	before := hb.mock.Count()
	resp, body = hb.chat(chatSaying("openai/gpt-4o-mini", text, ""))
	wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "") // a block rule fails closed
	if !strings.Contains(string(body), "time budget") || hb.mock.Count() != before {
		t.Errorf("body %s; provider called %d times", body, hb.mock.Count()-before)
	}
	rec = hb.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 400 || !hasFlag(rec.Flags, "rules_budget_exceeded") || len(rec.Events) != 1 || rec.Events[0].Kind != "budget_exceeded" || rec.Events[0].Action != "block" {
		t.Errorf("status %d flags %v events %+v", rec.Status, rec.Flags, rec.Events)
	}
	// An unchecked redact rule fails closed too, and the body it could
	// not redact is not logged.
	hl := newHarness(t, harnessConfig{ruleBudget: time.Nanosecond, gateway: admin.GatewaySettings{LogBodies: ptr(true)}})
	hl.addRule(admin.RuleInput{Name: "slow redact", Direction: "request", Kind: "regex", Patterns: []string{`(a+)+$`}, Action: "redact"})
	resp, body = hl.chat(chatSaying("openai/gpt-4o-mini", "ssn 123-45-6789 "+text, ""))
	wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
	if rec := hl.record(resp.Header.Get(RequestIDHeader)); rec.RequestBody != "" || !hasFlag(rec.Flags, "rules_budget_exceeded") {
		t.Errorf("logged body of %d bytes, flags %v; want none", len(rec.RequestBody), rec.Flags)
	}
	// On a stream the budget is the request's: once spent, the next chunk
	// cannot be checked, and a block rule ends the stream.
	hb.clearRules()
	hb.addRule(admin.RuleInput{Name: "no cards", Direction: "response", Kind: "pii", PII: []string{"credit_card"}, Action: "block"})
	_, evKinds, code, id := hb.streamText(t, chatSaying("openai/gpt-4o-mini@chunks=20", "a long enough answer to stream in pieces", `,"stream":true`))
	if code != "content_blocked" || evKinds[len(evKinds)-1] != "error" {
		t.Errorf("events %v code %q", evKinds, code)
	}
	if rec := hb.record(id); !hasFlag(rec.Flags, "rules_budget_exceeded") || rec.Status != 400 {
		t.Errorf("stream record status %d flags %v", rec.Status, rec.Flags)
	}
}

// Text parts of a message are scanned; keys, ids and the model name are
// not.
func TestRulesScanOnlyMessageText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "mini", Direction: "both", Kind: "keyword", Patterns: []string{"gpt-4o-mini", "role", "secret"}, Action: "block"})
	resp, body := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, body, 200)
	parts := `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":[{"type":"text","text":"a secret"}]}]}`
	resp, body = h.do("POST", chatPath, bearer(h.token), parts)
	wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
}

// BenchmarkInferenceChatWithRules is BenchmarkInferenceChat on a gateway
// with a keyword, a regex and an all-PII rule in both directions.
func BenchmarkInferenceChatWithRules(b *testing.B) {
	h := newHarness(b, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "words", Direction: "both", Kind: "keyword", Patterns: []string{"bluebird", "project x"}, Action: "redact"})
	h.addRule(admin.RuleInput{Name: "orders", Direction: "both", Kind: "regex", Patterns: []string{`order-\d{6}`}, Action: "flag"})
	h.addRule(admin.RuleInput{Name: "pii", Direction: "both", Kind: "pii",
		PII: []string{"email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"}, Action: "redact"})
	benchRequests(b, benchClient(b, h), "http://sluice"+chatPath, "Bearer "+h.token, benchBody)
}
