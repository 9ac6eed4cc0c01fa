package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Rules see every string the model reads (CONTRACT §7): a block rule on a
// keyword refuses a request that carries it in any of these places, and
// not one that carries it only in structure (a key, the model, a role).
func TestRulesSeeEveryRequestString(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "codename", Direction: "request", Kind: "keyword", Patterns: []string{"bluebird"}, Action: "block"})
	user := `{"role":"user","content":"hello"}`
	tool := func(desc, params string) string {
		return `,"tools":[{"type":"function","function":{"name":"lookup","description":` + quote(desc) + `,"parameters":` + params + `}}]`
	}
	call := func(args string) string {
		return `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":` + quote(args) + `}}]}`
	}
	result := `{"role":"tool","tool_call_id":"call_1","content":"the answer"}`
	emptyParams := `{"type":"object","properties":{}}`
	tests := []struct {
		name, body string
	}{
		{"system prompt", `{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"about Bluebird"},` + user + `]}`},
		{"message name", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","name":"bluebird","content":"hi"}]}`},
		{"tool description", `{"model":"openai/gpt-4o-mini","messages":[` + user + `]` + tool("finds BLUEBIRD files", emptyParams) + `}`},
		{"tool parameter description", `{"model":"openai/gpt-4o-mini","messages":[` + user + `]` +
			tool("finds files", `{"type":"object","properties":{"q":{"type":"string","description":"the bluebird id"}}}`) + `}`},
		{"tool parameter name", `{"model":"openai/gpt-4o-mini","messages":[` + user + `]` +
			tool("finds files", `{"type":"object","properties":{"bluebird_id":{"type":"string"}}}`) + `}`},
		{"tool-call arguments", `{"model":"openai/gpt-4o-mini","messages":[` + user + `,` + call(`{"q":"bluebird"}`) + `,` + result + `]}`},
		{"tool result", `{"model":"openai/gpt-4o-mini","messages":[` + user + `,` + call(`{"q":"x"}`) + `,` +
			`{"role":"tool","tool_call_id":"call_1","content":"found bluebird"}]}`},
		{"response_format schema", `{"model":"openai/gpt-4o-mini","messages":[` + user + `],"response_format":{"type":"json_schema",` +
			`"json_schema":{"name":"out","schema":{"type":"object","properties":{"a":{"type":"string","description":"bluebird"}}}}}}`},
		{"refusal part", `{"model":"openai/gpt-4o-mini","messages":[` + user + `,{"role":"assistant","content":[{"type":"refusal","refusal":"no bluebird"}]},` + user + `]}`},
		{"zero-width split", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"blue\u200bbird"}]}`},
		{"full-width form", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"ｂｌｕｅｂｉｒｄ"}]}`},
		{"soft hyphen", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"blue\u00adbird"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.body)) {
				t.Fatalf("test body is not JSON: %s", tt.body)
			}
			resp, body := h.chat(tt.body)
			wantAPIError(t, resp, body, 400, "invalid_request_error", "content_blocked", "")
		})
	}
	// Structure is not text: a key, the model, a role or a tool_call_id
	// named bluebird passes.
	resp, body := h.chat(`{"model":"openai/gpt-4o-mini","metadata":{"bluebird":"x"},"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"bluebird","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"bluebird","content":"ok"}]}`)
	wantStatus(t, resp, body, 200)
}

// A redaction inside tool-call arguments keeps them valid JSON upstream.
func TestRulesRedactRequestToolArguments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "pii", Direction: "request", Kind: "pii", PII: []string{"us_ssn", "credit_card"}, Action: "redact"})
	args := `{"ssn": "123-45-6789", "card": 4111111111111111, "note": "ok"}`
	resp, body := h.chat(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":` + quote(args) + `}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"done"}]}`)
	wantStatus(t, resp, body, 200)
	sent := h.mock.Requests()[h.mock.Count()-1].Body
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string }
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(sent, &req); err != nil {
		t.Fatalf("upstream got invalid JSON: %v\n%s", err, sent)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(req.Messages[1].ToolCalls[0].Function.Arguments), &got); err != nil {
		t.Fatalf("upstream arguments %q are not JSON: %v", req.Messages[1].ToolCalls[0].Function.Arguments, err)
	}
	want := map[string]any{"ssn": "[REDACTED:us_ssn]", "card": "[REDACTED:credit_card]", "note": "ok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("upstream arguments %v, want %v", got, want)
			break
		}
	}
}

// toolCallAnswer is a chat completion whose answer is a tool call with
// args, as an OpenAI-wire upstream sends it.
func toolCallAnswer(args string) string {
	return `{"id":"chatcmpl-t","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_9","type":"function",` +
		`"function":{"name":"lookup","arguments":` + quote(args) + `}}]},"logprobs":null,"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`
}

// answerArgs returns the arguments of the first tool call of a chat
// completion, failing when they are not JSON.
func answerArgs(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var a struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(body, &a); err != nil || len(a.Choices) == 0 || len(a.Choices[0].Message.ToolCalls) == 0 {
		t.Fatalf("answer %s: %v", body, err)
	}
	var args map[string]any
	raw := a.Choices[0].Message.ToolCalls[0].Function.Arguments
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", raw, err)
	}
	return args
}

// A PII redact rule on responses redacts an SSN that the model returns in
// a tool call: from an OpenAI-wire upstream, and from Anthropic's
// tool_use translated to OpenAI's shape, streamed or not.
func TestRulesRedactToolCallAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{LogBodies: ptr(true)}})
	h.addRule(admin.RuleInput{Name: "pii out", Direction: "response", Kind: "pii", PII: []string{"us_ssn"}, Action: "redact"})
	h.addKeyAt(h.gw.ID, "anthropic", "ant", "sk-ant-upstream-000001", h.mockURL)
	h.rebuild()
	ssn := "123-45-6789"

	t.Run("openai", func(t *testing.T) {
		h.mock.Script(providertest.Step{Body: toolCallAnswer(`{"ssn":"` + ssn + `","n":1}`)})
		resp, body := h.chat(chatSaying("openai/gpt-4o-mini", "look it up", ""))
		wantStatus(t, resp, body, 200)
		if args := answerArgs(t, body); args["ssn"] != "[REDACTED:us_ssn]" || args["n"] != 1.0 {
			t.Errorf("arguments %v, want the SSN redacted", args)
		}
		wantNoRaw(t, h.record(resp.Header.Get(RequestIDHeader)), ssn)
	})
	tools := `,"max_tokens":100,"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}]`
	t.Run("anthropic", func(t *testing.T) {
		resp, body := h.chat(chatSaying("anthropic/claude-sonnet-4-5", "my ssn is "+ssn, tools))
		wantStatus(t, resp, body, 200)
		if args := answerArgs(t, body); !strings.Contains(args["text"].(string), "[REDACTED:us_ssn]") || strings.Contains(string(body), ssn) {
			t.Errorf("answer %s: want the SSN redacted in the tool call", body)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		rec.RequestBody = "" // the rule is for responses: the question keeps its SSN
		wantNoRaw(t, rec, ssn)
	})
	t.Run("anthropic stream", func(t *testing.T) {
		for _, chunks := range []int{1, 4, 16} {
			resp, sr := h.openStream(t, chatSaying("anthropic/claude-sonnet-4-5@chunks="+itoa(chunks), "my ssn is "+ssn, tools+`,"stream":true`))
			args, evs := streamToolArgs(t, sr)
			resp.Body.Close()
			var a map[string]any
			if err := json.Unmarshal([]byte(args), &a); err != nil {
				t.Fatalf("chunks=%d: streamed arguments %q are not JSON: %v", chunks, args, err)
			}
			if s, _ := a["text"].(string); !strings.Contains(s, "[REDACTED:us_ssn]") || strings.Contains(strings.Join(evs, ""), "6789") {
				t.Errorf("chunks=%d: arguments %q; events %q", chunks, args, evs)
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			rec.RequestBody = ""
			wantNoRaw(t, rec, ssn)
		}
	})
}

// streamToolArgs reads a chat stream and returns the concatenated
// arguments of tool call 0 and the raw events.
func streamToolArgs(t *testing.T, sr *sseReader) (string, []string) {
	t.Helper()
	var args strings.Builder
	var raw []string
	for _, ev := range sr.all(t) {
		raw = append(raw, ev.data)
		if ev.data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int
						Function struct{ Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			t.Fatalf("event %q: %v", ev.data, err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == 0 {
					args.WriteString(tc.Function.Arguments)
				}
			}
		}
	}
	return args.String(), raw
}

// toolFrame is a stream chunk carrying an arguments delta of tool call 0.
func toolFrame(args string, first bool) string {
	head := `{"index":0,"function":{"arguments":` + quote(args) + `}}`
	if first {
		head = `{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":` + quote(args) + `}}`
	}
	return `data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` +
		head + `]},"finish_reason":null}]}` + "\n\n"
}

// Streamed tool-call argument deltas are scanned: an SSN cut across
// deltas at every position is redacted and the arguments stay JSON; a
// block rule ends the stream with an error event.
func TestRulesStreamToolCallArguments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	args := `{"who": "Jane", "ssn": "123-45-6789", "age": 41}`
	finish := `data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n"
	upstream := func(size int) string {
		frames := []string{roleFrame}
		for i := 0; i < len(args); i += size {
			frames = append(frames, toolFrame(args[i:min(i+size, len(args))], i == 0))
		}
		frames = append(frames, finish, "data: [DONE]\n\n")
		up := newSSEUpstream(t, 0, frames...)
		alias := "args" + itoa(size)
		h.addKeyAt(h.gw.ID, "openai-compatible", alias, "sk-upstream-args-000"+itoa(size), up.srv.URL+"/v1")
		h.rebuild()
		return alias
	}
	redact := h.addRule(admin.RuleInput{Name: "ssn", Direction: "response", Kind: "pii", PII: []string{"us_ssn"}, Action: "redact"})
	for _, size := range []int{1, 3, 7, 100} {
		alias := upstream(size)
		resp, sr := h.openStream(t, `{"model":"openai-compatible/m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
		got, evs := streamToolArgs(t, sr)
		resp.Body.Close()
		var a map[string]any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("deltas of %d: arguments %q are not JSON: %v", size, got, err)
		}
		if a["ssn"] != "[REDACTED:us_ssn]" || a["who"] != "Jane" || a["age"] != 41.0 {
			t.Errorf("deltas of %d: arguments %v", size, a)
		}
		if strings.Contains(strings.Join(evs, ""), "6789") {
			t.Errorf("deltas of %d: the SSN reached the client: %q", size, evs)
		}
		must(t, h.svc.DeleteKey(h.ctx, h.root, h.gw.ID, "openai-compatible", alias))
	}
	must(t, h.svc.DeleteRule(h.ctx, h.root, h.gw.ID, redact.ID))
	h.addRule(admin.RuleInput{Name: "no ssn", Direction: "response", Kind: "pii", PII: []string{"us_ssn"}, Action: "block"})
	upstream(2)
	text, evKinds, code, id := h.streamText(t, `{"model":"openai-compatible/m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if code != "content_blocked" || evKinds[len(evKinds)-1] != "error" || strings.Contains(text, "6789") {
		t.Errorf("events %v code %q", evKinds, code)
	}
	wantNoRaw(t, h.record(id), "123-45-6789")
}

// Reasoning and refusal text streamed by an OpenAI-compatible upstream is
// scanned like content.
func TestRulesStreamReasoningAndRefusal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "pii", Direction: "response", Kind: "pii", PII: []string{"email"}, Action: "redact"})
	frame := func(field, text string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"` + field + `":` + quote(text) + `},"finish_reason":null}]}` + "\n\n"
	}
	frames := []string{roleFrame, frame("reasoning_content", "mail jane"), frame("reasoning_content", ".doe@exam"), frame("reasoning_content", "ple.com now"),
		frame("refusal", "not to bob@example.org"),
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n", "data: [DONE]\n\n"}
	up := newSSEUpstream(t, 0, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "reason", "sk-upstream-reason-01", up.srv.URL+"/v1")
	h.rebuild()
	resp, sr := h.openStream(t, `{"model":"openai-compatible/m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	defer resp.Body.Close()
	var reasoning, refusal strings.Builder
	for _, ev := range sr.all(t) {
		if ev.data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Reasoning string `json:"reasoning_content"`
					Refusal   string `json:"refusal"`
				}
			}
		}
		must(t, json.Unmarshal([]byte(ev.data), &c))
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.Reasoning)
			refusal.WriteString(ch.Delta.Refusal)
		}
	}
	if reasoning.String() != "mail [REDACTED:email] now" || refusal.String() != "not to [REDACTED:email]" {
		t.Errorf("reasoning %q, refusal %q", reasoning.String(), refusal.String())
	}
}

// Token log probabilities would restate a redacted answer token by token:
// they are refused where response rules redact or block, and allowed
// where they only flag.
func TestRulesRefuseLogprobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "flag", Direction: "response", Kind: "pii", PII: []string{"email"}, Action: "flag"})
	resp, body := h.chat(chatSaying("openai/gpt-4o-mini", "hi", `,"logprobs":true`))
	wantStatus(t, resp, body, 200)
	h.addRule(admin.RuleInput{Name: "redact", Direction: "response", Kind: "pii", PII: []string{"email"}, Action: "redact"})
	resp, body = h.chat(chatSaying("openai/gpt-4o-mini", "hi", `,"logprobs":true,"top_logprobs":2`))
	wantAPIError(t, resp, body, 400, "invalid_request_error", "unsupported_feature", "logprobs")
	resp, body = h.chat(chatSaying("openai/gpt-4o-mini", "hi", `,"logprobs":false`))
	wantStatus(t, resp, body, 200)
}

// A guardrail event's excerpt never carries a secret beside the match: a
// flagged "password:" does not store the password after it, nor a key,
// a phone number or a card nearby.
func TestRulesExcerptKeepsNoNeighbouringSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addRule(admin.RuleInput{Name: "creds", Direction: "request", Kind: "keyword", Patterns: []string{"password:", "key"}, Action: "flag"})
	secrets := []string{"hunter2", "sk-proj-abcdefghijklmnopqrstuv", "555-0100", "4111", "Tr0ub4dor"}
	resp, body := h.chat(chatSaying("openai/gpt-4o-mini",
		"my password: hunter2 ok? key sk-proj-abcdefghijklmnopqrstuv call 415-555-0100 card 4111 1111 1111 1111 pw Tr0ub4dor", ""))
	wantStatus(t, resp, body, 200)
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if len(rec.Events) != 2 {
		t.Fatalf("events %+v", rec.Events)
	}
	for _, ev := range rec.Events {
		for _, s := range secrets {
			if strings.Contains(ev.Excerpt, s) {
				t.Errorf("excerpt %q holds %q", ev.Excerpt, s)
			}
		}
	}
}
