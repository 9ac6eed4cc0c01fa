package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// The native doors of CONTRACT §12 (door_native.go): /openai/responses and
// /anthropic/v1/messages pass the body through to a provider of the same
// wire and relay its answer as it came.

const responsesPath = "/v1/" + testTenant + "/" + testGateway + "/openai/responses"

// sseEvents splits an SSE body into its events' names and data.
func sseEvents(t *testing.T, body []byte) (names []string, data []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names, data = append(names, name), append(data, strings.TrimPrefix(line, "data: "))
			name = ""
		}
	}
	return names, data
}

func TestResponsesNativePlain(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	body := `{"model":"gpt-4o-mini","input":[{"role":"user","content":"say hello"}],"instructions":"Be brief.","store":true,"tools":[{"type":"web_search"}]}`
	resp, answer := h.do("POST", responsesPath, bearer(h.token), body)
	wantStatus(t, resp, answer, http.StatusOK)
	openaischema.Check(t, openaischema.Response, "the answer", answer)
	if !strings.Contains(string(answer), `"text":"Hello from mock: say hello"`) {
		t.Errorf("answer %s", answer)
	}
	reqs := h.mock.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/responses" || string(reqs[0].Body) != body {
		t.Fatalf("upstream got %d requests: %+v", len(reqs), reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+mainKey {
		t.Errorf("upstream Authorization %q", got)
	}
	rec := h.record(resp.Header.Get("x-sluice-request-id"))
	var u struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(answer, &u)
	price, ok := h.snaps.Load().Price("openai", "gpt-4o-mini")
	if !ok {
		t.Fatal("gpt-4o-mini is not priced")
	}
	wantCost := cost(price, llm.Usage{PromptTokens: u.Usage.InputTokens, CompletionTokens: u.Usage.OutputTokens})
	if rec.Status != 200 || rec.Provider != "openai" || rec.Model != "gpt-4o-mini" || rec.TokensIn != u.Usage.InputTokens ||
		rec.TokensOut != u.Usage.OutputTokens || u.Usage.OutputTokens == 0 || rec.CostUSD != wantCost || wantCost <= 0 || len(rec.Flags) != 0 || rec.Operation != "responses" {
		t.Errorf("record %+v, want tokens %d/%d cost %v", rec, u.Usage.InputTokens, u.Usage.OutputTokens, wantCost)
	}
	if resp.Header.Get("x-sluice-provider") != "openai" || resp.Header.Get("x-sluice-cache") != "BYPASS" {
		t.Errorf("headers %v", resp.Header)
	}
}

func TestResponsesNativeStream(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	resp, answer := h.do("POST", responsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"say hello","stream":true}`)
	wantStatus(t, resp, answer, http.StatusOK)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	names, data := sseEvents(t, answer)
	var seq []string
	var text strings.Builder
	for i, d := range data {
		openaischema.Check(t, openaischema.ResponseStreamEvent, names[i], []byte(d))
		var v struct{ Type, Delta string }
		if err := json.Unmarshal([]byte(d), &v); err != nil || v.Type != names[i] {
			t.Fatalf("event %q data %s: %v", names[i], d, err)
		}
		if len(seq) == 0 || seq[len(seq)-1] != v.Type {
			seq = append(seq, v.Type)
		}
		text.WriteString(v.Delta)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed"
	if strings.Join(seq, " ") != want || text.String() != "Hello from mock: say hello" {
		t.Errorf("events %v, text %q", seq, text.String())
	}
	if bytes.Contains(answer, []byte("[DONE]")) {
		t.Error("a Responses stream ends with response.completed, not [DONE]")
	}
	reqs := h.mock.Requests()
	if len(reqs) != 1 || bytes.Contains(reqs[0].Body, []byte("stream_options")) {
		t.Errorf("upstream body %s", reqs[0].Body)
	}
	rec := h.record(resp.Header.Get("x-sluice-request-id"))
	if rec.Status != 200 || rec.TokensIn != 2 || rec.TokensOut != 5 || rec.CostUSD <= 0 || len(rec.Flags) != 0 {
		t.Errorf("record %+v", rec)
	}
}

func TestResponsesNativeErrors(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	cases := []struct {
		name, path, body string
		step             *providertest.Step
		status           int
		code             string
	}{
		{"upstream 400 is relayed", responsesPath, `{"model":"gpt-4o-mini","input":"hi"}`, &providertest.Step{Status: 400}, 400, "upstream_error"},
		{"bad max_output_tokens", responsesPath, `{"model":"gpt-4o-mini","input":"hi","max_output_tokens":0}`, nil, 400, "invalid_request"},
		{"not JSON", responsesPath, `{"model":`, nil, 400, "invalid_json"},
		{"forbidden field", responsesPath, `{"model":"gpt-4o-mini","input":"hi","base_url":"http://x"}`, nil, 400, "invalid_request"},
		{"responses on another provider", gwPath("anthropic/responses"), `{"model":"m","input":"hi"}`, nil, 404, "not_found"},
		{"messages on openai", gwPath("openai/v1/messages"), `{"model":"m","messages":[]}`, nil, 404, "not_found"},
		{"unknown operation on the messages door", gwPath("anthropic/v1/messages/batches"), `{}`, nil, 404, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.step != nil {
				h.mock.Script(*tc.step)
			}
			resp, body := h.do("POST", tc.path, bearer(h.token), tc.body)
			wantStatus(t, resp, body, tc.status)
			openaischema.Check(t, openaischema.Error, "the error", body)
			if got := errCode(body); got != tc.code {
				t.Errorf("code %q, want %q: %s", got, tc.code, body)
			}
		})
	}
}

const nativeMessagesPath = "/v1/" + testTenant + "/" + testGateway + "/anthropic/v1/messages"

// anthropicKey is the upstream key of the anthropic key messagesHarness adds.
const anthropicKey = "sk-ant-upstream-native-0001"

// messagesHarness is a harness with an anthropic key on the mock.
func messagesHarness(t *testing.T) *harness {
	h := newHarness(t, harnessConfig{})
	h.addKey(h.gw.ID, "anthropic", "main", anthropicKey)
	h.rebuild()
	return h
}

// anthropicHeaders are the headers an Anthropic SDK sends: the token as
// x-api-key, the API version and a beta.
func anthropicHeaders(token string) http.Header {
	return http.Header{"X-Api-Key": {token}, "Content-Type": {"application/json"},
		"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"prompt-caching-2024-07-31"}}
}

type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type, Message, Code string
	} `json:"error"`
}

func TestMessagesNativePlain(t *testing.T) {
	h := messagesHarness(t)
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"say hello"}]}`
	resp, answer := h.do("POST", nativeMessagesPath, anthropicHeaders(h.token), body)
	wantStatus(t, resp, answer, http.StatusOK)
	var got struct {
		Type    string
		Content []struct{ Type, Text string }
		Usage   struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal(answer, &got); err != nil || got.Type != "message" || len(got.Content) != 1 ||
		got.Content[0].Text != "Hello from mock: say hello" {
		t.Fatalf("answer %s (%v)", answer, err)
	}
	reqs := h.mock.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages" || string(reqs[0].Body) != body {
		t.Fatalf("upstream got %+v", reqs)
	}
	if hd := reqs[0].Header; hd.Get("X-Api-Key") != anthropicKey || hd.Get("Anthropic-Beta") != "prompt-caching-2024-07-31" ||
		hd.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("upstream headers %v", hd)
	}
	rec := h.record(resp.Header.Get("x-sluice-request-id"))
	price, ok := h.snaps.Load().Price("anthropic", "claude-sonnet-4-5")
	if !ok {
		t.Fatal("claude-sonnet-4-5 is not priced")
	}
	wantCost := cost(price, llm.Usage{PromptTokens: got.Usage.InputTokens, CompletionTokens: got.Usage.OutputTokens})
	if rec.Status != 200 || rec.Provider != "anthropic" || rec.TokensIn != got.Usage.InputTokens || rec.TokensOut != got.Usage.OutputTokens ||
		got.Usage.OutputTokens == 0 || rec.CostUSD != wantCost || wantCost <= 0 || rec.Operation != "messages" {
		t.Errorf("record %+v, want cost %v", rec, wantCost)
	}
}

func TestMessagesNativeStream(t *testing.T) {
	h := messagesHarness(t)
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"say hello"}]}`
	resp, answer := h.do("POST", nativeMessagesPath, anthropicHeaders(h.token), body)
	wantStatus(t, resp, answer, http.StatusOK)
	names, data := sseEvents(t, answer)
	var seq []string
	var text strings.Builder
	for i, d := range data {
		var v struct {
			Type  string
			Delta struct{ Text string }
		}
		if err := json.Unmarshal([]byte(d), &v); err != nil || v.Type != names[i] {
			t.Fatalf("event %q data %s: %v", names[i], d, err)
		}
		if len(seq) == 0 || seq[len(seq)-1] != v.Type {
			seq = append(seq, v.Type)
		}
		text.WriteString(v.Delta.Text)
	}
	if len(seq) < 2 || seq[0] != "message_start" || seq[len(seq)-1] != "message_stop" || !strings.Contains(strings.Join(seq, " "), "content_block_delta") ||
		text.String() != "Hello from mock: say hello" {
		t.Errorf("events %v, text %q", seq, text.String())
	}
	rec := h.record(resp.Header.Get("x-sluice-request-id"))
	if rec.Status != 200 || rec.TokensIn == 0 || rec.TokensOut == 0 || rec.CostUSD <= 0 || len(rec.Flags) != 0 {
		t.Errorf("record %+v", rec)
	}
}

func TestMessagesNativeCountTokens(t *testing.T) {
	h := messagesHarness(t)
	resp, answer := h.do("POST", nativeMessagesPath+"/count_tokens", anthropicHeaders(h.token),
		`{"model":"claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"say hello"}]}`)
	wantStatus(t, resp, answer, http.StatusOK)
	if string(answer) != `{"input_tokens":4}` {
		t.Errorf("answer %s", answer)
	}
	if reqs := h.mock.Requests(); len(reqs) != 1 || reqs[0].Path != "/v1/messages/count_tokens" {
		t.Fatalf("upstream got %+v", reqs)
	}
	rec := h.record(resp.Header.Get("x-sluice-request-id"))
	if rec.Status != 200 || rec.CostUSD != 0 || rec.TokensIn != 0 || len(rec.Flags) != 0 || rec.Operation != "count_tokens" {
		t.Errorf("record %+v", rec)
	}
}

func TestMessagesNativeErrors(t *testing.T) {
	h := messagesHarness(t)
	ok := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, path, body string
		step             *providertest.Step
		status           int
		typ, code        string
	}{
		{"upstream 429", nativeMessagesPath, ok, &providertest.Step{Status: 429, Times: 3}, 429, "rate_limit_error", "rate_limit_exceeded"},
		{"upstream overloaded, retries exhausted", nativeMessagesPath, ok, &providertest.Step{Status: 529, Times: 3}, 502, "api_error", "upstream_error"},
		{"no messages", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[]}`, nil, 400, "invalid_request_error", "invalid_request"},
		{"not JSON", nativeMessagesPath, `{`, nil, 400, "invalid_request_error", "invalid_json"},
		{"count_tokens streamed", nativeMessagesPath + "/count_tokens", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil, 400, "invalid_request_error", "invalid_request"},
		{"unknown gateway", "/v1/" + testTenant + "/nope/anthropic/v1/messages", ok, nil, 404, "not_found_error", "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.step != nil {
				h.mock.Script(*tc.step)
			}
			resp, body := h.do("POST", tc.path, anthropicHeaders(h.token), tc.body)
			wantStatus(t, resp, body, tc.status)
			var e anthropicErrorBody
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != tc.typ || e.Error.Message == "" ||
				(tc.code != "" && e.Error.Code != tc.code) {
				t.Errorf("error body %s, want type %s code %s", body, tc.typ, tc.code)
			}
		})
	}
}

// TestNativeDoorWithoutKeys: a native door on a gateway without a key of
// its provider is a 400 provider_not_configured, in the door's shape.
func TestNativeDoorWithoutKeys(t *testing.T) {
	h := newHarness(t, harnessConfig{}) // an openai key only
	resp, body := h.do("POST", nativeMessagesPath, anthropicHeaders(h.token),
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, body, http.StatusBadRequest)
	var e anthropicErrorBody
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Type != "invalid_request_error" || e.Error.Code != "provider_not_configured" {
		t.Errorf("error %s", body)
	}
	if n := len(h.mock.Requests()); n != 0 {
		t.Errorf("the mock got %d requests", n)
	}
}

// TestNativeMessagesUnauthenticated: a bad token on the Messages door is
// Anthropic's authentication_error (the door is known before the token is
// checked).
func TestNativeMessagesUnauthenticated(t *testing.T) {
	h := messagesHarness(t)
	resp, body := h.do("POST", nativeMessagesPath, anthropicHeaders("sk-sl-not-a-token"),
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, body, http.StatusUnauthorized)
	var e anthropicErrorBody
	if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != "authentication_error" || e.Error.Code != "invalid_token" {
		t.Errorf("error %s", body)
	}
}

// TestNativeHardBudgetCapsOutput: under a hard budget a native request
// without a maximum output is sent with one (max_output_tokens,
// max_tokens), and one with its own is sent as it came.
func TestNativeHardBudgetCapsOutput(t *testing.T) {
	h := messagesHarness(t)
	h.update(hardBudget(money.FromFloat(100), "monthly"))
	resp, body := h.do("POST", responsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"hi"}`)
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = h.do("POST", nativeMessagesPath, anthropicHeaders(h.token),
		`{"model":"claude-sonnet-4-5","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, body, http.StatusOK)
	reqs := h.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d upstream requests", len(reqs))
	}
	if want := `{"model":"gpt-4o-mini","input":"hi","max_output_tokens":` + strconv.Itoa(defaultMaxTokens) + `}`; string(reqs[0].Body) != want {
		t.Errorf("responses upstream body %s, want %s", reqs[0].Body, want)
	}
	if want := `{"model":"claude-sonnet-4-5","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}`; string(reqs[1].Body) != want {
		t.Errorf("messages upstream body %s", reqs[1].Body)
	}
}

// TestNativeContentRules: request rules and the rules of a complete
// answer apply to native bodies (every string is scanned); response rules
// apply to native streams too, the answer split in many deltas: text,
// and tool input, whose redaction keeps it valid JSON.
func TestNativeContentRules(t *testing.T) {
	h := messagesHarness(t)
	h.addRule(admin.RuleInput{Name: "bluebird", Direction: "both", Kind: "keyword", Patterns: []string{"Project Bluebird"}, Action: "redact"})
	h.addRule(admin.RuleInput{Name: "falcon", Direction: "response", Kind: "keyword", Patterns: []string{"peregrine falcon"}, Action: "redact"})
	resp, body := h.do("POST", responsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"tell me about Project Bluebird"}`)
	wantStatus(t, resp, body, http.StatusOK)
	reqs := h.mock.Requests()
	if len(reqs) != 1 || bytes.Contains(reqs[0].Body, []byte("Bluebird")) || bytes.Contains(body, []byte("Bluebird")) {
		t.Errorf("upstream got %s, client got %s", reqs[0].Body, body)
	}
	// Token log probabilities would restate what the rules redact.
	resp, body = h.do("POST", responsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"hi","include":["message.output_text.logprobs"]}`)
	wantAPIError(t, resp, body, http.StatusBadRequest, "invalid_request_error", "unsupported_feature", "include")
	// The mock answers in many deltas, all held by the rules' window
	// until the block ends (TestNativeStreamRulesWindow streams more).
	prompt := "the peregrine falcon dives"
	for _, tc := range []struct {
		name, path, body string
		hdr              http.Header
	}{
		{"responses", responsesPath, `{"model":"gpt-4o-mini","input":` + quote(prompt) + `,"stream":true}`, bearer(h.token)},
		{"messages", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":` + quote(prompt) + `}]}`, anthropicHeaders(h.token)},
		{"messages tool", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":1000,"stream":true,"tools":[{"name":"note","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":` + quote(prompt) + `}]}`, anthropicHeaders(h.token)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.mock.Script(providertest.Step{Chunks: 30})
			resp, body := h.do("POST", tc.path, tc.hdr, tc.body)
			wantStatus(t, resp, body, http.StatusOK)
			if bytes.Contains(body, []byte("falcon")) {
				t.Errorf("the redacted words reached the client: %s", body)
			}
			names, data := sseEvents(t, body)
			var text, input strings.Builder
			for i, d := range data {
				var ev struct {
					Type  string
					Delta json.RawMessage
				}
				must(t, json.Unmarshal([]byte(d), &ev))
				if ev.Type != names[i] {
					t.Errorf("event %q carries type %q", names[i], ev.Type)
				}
				var delta struct {
					Text        string `json:"text"`
					PartialJSON string `json:"partial_json"`
				}
				switch ev.Type {
				case "response.output_text.delta":
					var s string
					must(t, json.Unmarshal(ev.Delta, &s))
					text.WriteString(s)
				case "content_block_delta":
					must(t, json.Unmarshal(ev.Delta, &delta))
					text.WriteString(delta.Text)
					input.WriteString(delta.PartialJSON)
				}
			}
			want := "Hello from mock: " + strings.Replace(prompt, "peregrine falcon", "[REDACTED:keyword]", 1)
			if tc.name == "messages tool" {
				var in struct{ Text string }
				if err := json.Unmarshal([]byte(input.String()), &in); err != nil || !strings.Contains(in.Text, "[REDACTED:keyword]") {
					t.Errorf("tool input %s (%v), want valid JSON with the redaction", input.String(), err)
				}
				return
			}
			if text.String() != want || names[len(names)-1] != map[string]string{"responses": "response.completed", "messages": "message_stop"}[tc.name] {
				t.Errorf("text %q, events %v; want %q and the clean end", text.String(), names, want)
			}
		})
	}
}

// TestNativeUsageEstimated: a native answer without usage is billed with
// the gateway's estimate of its prompt and answer, flagged.
func TestNativeUsageEstimated(t *testing.T) {
	h := messagesHarness(t)
	for _, tc := range []struct {
		name, path, body string
		hdr              http.Header
	}{
		{"responses", responsesPath, `{"model":"gpt-4o-mini","instructions":"Be brief.","input":"say hello to the estimate"}`, bearer(h.token)},
		{"responses streamed", responsesPath, `{"model":"gpt-4o-mini","input":[{"role":"user","content":"say hello to the estimate"}],"stream":true}`, bearer(h.token)},
		{"messages", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":50,"system":"Be brief.","messages":[{"role":"user","content":"say hello to the estimate"}]}`, anthropicHeaders(h.token)},
		{"messages streamed", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"say hello to the estimate"}]}`, anthropicHeaders(h.token)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.mock.Script(providertest.Step{NoUsage: true})
			resp, body := h.do("POST", tc.path, tc.hdr, tc.body)
			wantStatus(t, resp, body, http.StatusOK)
			rec := h.record(resp.Header.Get("x-sluice-request-id"))
			if rec.TokensIn < 4 || rec.TokensOut < 4 || !strings.Contains(strings.Join(rec.Flags, ","), "usage_estimated") {
				t.Errorf("record tokens %d/%d flags %v", rec.TokensIn, rec.TokensOut, rec.Flags)
			}
		})
	}
}

// nativeFrames are the events of a native stream answering text in
// deltas of n bytes: Anthropic's (anthropic) or the Responses API's.
func nativeFrames(text string, n int, anthropic bool) []string {
	var f []string
	ev := func(name, data string) { f = append(f, "event: "+name+"\ndata: "+data+"\n\n") }
	if anthropic {
		ev("message_start", `{"type":"message_start","message":{"id":"msg_w","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	} else {
		ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_w","object":"response","status":"in_progress","model":"gpt-4o-mini","output":[]}}`)
	}
	for i := 0; i < len(text); i += n {
		p := quote(text[i:min(i+n, len(text))])
		if anthropic {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+p+`}}`)
		} else {
			ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_w","output_index":0,"content_index":0,"delta":`+p+`}`)
		}
	}
	if anthropic {
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":90}}`)
		ev("message_stop", `{"type":"message_stop"}`)
		return f
	}
	ev("response.output_text.done", `{"type":"response.output_text.done","sequence_number":2,"item_id":"msg_w","output_index":0,"content_index":0,"text":`+quote(text)+`}`)
	ev("response.completed", `{"type":"response.completed","sequence_number":3,"response":{"id":"resp_w","object":"response","status":"completed","model":"gpt-4o-mini","output":[{"type":"message","id":"msg_w","role":"assistant","content":[{"type":"output_text","text":`+quote(text)+`}]}],"usage":{"input_tokens":5,"output_tokens":90,"total_tokens":95}}}`)
	return f
}

// TestNativeStreamRulesWindow: on a native stream longer than the rules'
// hold-back window, the text goes out delta by delta; a match split
// across deltas is redacted whole, in the deltas and in the events that
// restate the text; a block ends the stream with the door's error event
// after the text before it, none of the match sent.
func TestNativeStreamRulesWindow(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	must(t, h.svc.DeleteKey(h.ctx, h.root, h.gw.ID, "openai", "main"))
	h.addRule(admin.RuleInput{Name: "falcon", Direction: "response", Kind: "keyword", Patterns: []string{"peregrine falcon"}, Action: "redact"})
	h.addRule(admin.RuleInput{Name: "rule b", Direction: "response", Kind: "keyword", Patterns: []string{"Project Bluebird"}, Action: "block"})
	text := strings.Repeat("wind ", 80) + "the peregrine falcon dives " + strings.Repeat("rain ", 80)
	blocked := strings.Repeat("wind ", 80) + "about Project Bluebird " + strings.Repeat("rain ", 80)
	for _, anthropic := range []bool{true, false} {
		name, path, hdr, body := "responses", responsesPath, bearer(h.token), `{"model":"gpt-4o-mini","input":"hi","stream":true}`
		provider := "openai"
		if anthropic {
			name, path, hdr, body = "messages", nativeMessagesPath, anthropicHeaders(h.token), `{"model":"claude-sonnet-4-5","max_tokens":500,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
			provider = "anthropic"
		}
		t.Run(name, func(t *testing.T) {
			ok := newSSEUpstream(t, 0, nativeFrames(text, 7, anthropic)...)
			h.addKeyAt(h.gw.ID, provider, "redact", "sk-upstream-native-01", ok.srv.URL+"/v1")
			h.rebuild()
			resp, b := h.do("POST", path, hdr, body)
			wantStatus(t, resp, b, http.StatusOK)
			if bytes.Contains(b, []byte("peregrine")) || bytes.Contains(b, []byte("falcon")) {
				t.Errorf("the match reached the client: %s", b)
			}
			got, code := doorText(t, b, true)
			if want := strings.Replace(text, "peregrine falcon", "[REDACTED:keyword]", 1); got != want || code != "" {
				t.Errorf("text %q (error %q), want %q", got, code, want)
			}
			if names, _ := sseEvents(t, b); len(names) < len(text)/7/2 {
				t.Errorf("%d events: the deltas were not relayed one by one", len(names))
			}
			must(t, h.svc.DeleteKey(h.ctx, h.root, h.gw.ID, provider, "redact"))

			bad := newSSEUpstream(t, 0, nativeFrames(blocked, 7, anthropic)...)
			h.addKeyAt(h.gw.ID, provider, "block", "sk-upstream-native-02", bad.srv.URL+"/v1")
			h.rebuild()
			resp, b = h.do("POST", path, hdr, body)
			wantStatus(t, resp, b, http.StatusOK)
			got, code = doorText(t, b, true)
			if code != "content_blocked" || !strings.HasPrefix(got, "wind wind") || strings.Contains(string(b), "Bluebird") || strings.Contains(string(b), "rain") {
				t.Errorf("text %q error %q, want the text before the match then content_blocked: %s", got, code, b)
			}
			must(t, h.svc.DeleteKey(h.ctx, h.root, h.gw.ID, provider, "block"))
		})
	}
}
