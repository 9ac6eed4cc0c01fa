package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// responsesHeader is the header of a /compat/responses call with token.
func responsesHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}
}

// TestResponsesReasoningRelayed: on /compat/responses, reasoning.effort
// is a thinking budget for Anthropic and Claude on Bedrock (the effort for
// OpenAI-wire targets), and a reasoning item the door wrote with its
// encrypted_content reaches them as the signed thinking block of the
// assistant turn after it; an OpenAI-wire target gets neither the thinking
// nor its signature.
func TestResponsesReasoningRelayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	signed := string(llm.AppendThinkingContent(nil, &llm.Part{Kind: llm.PartThinking, Text: "Add them.", Signature: "sig-abc=="}))
	body := func(model string) string {
		return `{"model":"` + model + `","max_output_tokens":4096,"reasoning":{"effort":"medium"},"input":[` +
			`{"role":"user","content":"2+2?"},` +
			`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Add them."}],"encrypted_content":"` + signed + `"},` +
			`{"type":"function_call","call_id":"tu_1","name":"calc","arguments":"{\"x\":1}"},` +
			`{"type":"function_call_output","call_id":"tu_1","output":"4"},` +
			`{"role":"user","content":"and 3+3?"}],` +
			`"tools":[{"type":"function","name":"calc","parameters":{"type":"object"}}]}`
	}
	for _, tt := range []struct {
		name, model string
		// want are the JSON fragments the upstream must receive; not those
		// it must not.
		want, not []string
	}{
		{"anthropic", "anthropic/claude-sonnet-4-5", []string{
			`"max_tokens":4096`, `"thinking":{"type":"enabled","budget_tokens":3072}`,
			`{"role":"assistant","content":[{"type":"thinking","thinking":"Add them.","signature":"sig-abc=="},{"type":"tool_use","id":"tu_1","name":"calc","input":{"x":1}}]}`,
		}, []string{"reasoning_effort"}},
		{"bedrock", "bedrock/anthropic.claude-sonnet-4-5-v1:0", []string{
			`"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":3072}}`,
			`{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Add them.","signature":"sig-abc=="}}},{"toolUse":{"toolUseId":"tu_1","name":"calc","input":{"x":1}}}]}`,
		}, []string{"reasoning_effort"}},
		{"openai", "openai/gpt-4o-mini", []string{`"reasoning_effort":"medium"`}, []string{"sig-abc", "Add them.", "budget_tokens"}},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				b := body(tt.model)
				if stream {
					b = strings.Replace(b, `"max_output_tokens":4096`, `"max_output_tokens":4096,"stream":true`, 1)
				}
				relayOnce(t, h, compatResponsesPath, responsesHeader(h.token), b, tt.want, tt.not)
			})
		}
	}

	// With no room for a budget under max_output_tokens, Anthropic refuses
	// the effort, naming it, rather than dropping it.
	resp, out := h.do("POST", compatResponsesPath, responsesHeader(h.token),
		`{"model":"anthropic/claude-sonnet-4-5","max_output_tokens":1500,"reasoning":{"effort":"low"},"input":"hi"}`)
	wantStatus(t, resp, out, 400)
	if !strings.Contains(string(out), "reasoning_effort") {
		t.Errorf("refusal %s", out)
	}
}

// TestThinkingBudget: each effort's budget, cut to leave the answer room
// under max_output_tokens (Anthropic's default max_tokens when absent).
func TestThinkingBudget(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tt := range []struct {
		effort string
		max    *int64
		want   int64
	}{
		{"minimal", nil, 1024}, {"low", nil, 1024}, {"medium", nil, 3072}, {"high", nil, 3072},
		{"medium", n(32000), 8192}, {"high", n(32000), 24576}, {"high", n(10000), 8976},
		{"low", n(2047), 0}, {"low", n(2048), 1024}, {"", nil, 0},
	} {
		r := &llm.Request{MaxOutputTokens: tt.max}
		if tt.effort != "" {
			r.Reasoning = &llm.Reasoning{Effort: tt.effort}
		}
		if got := thinkingBudget(r); got != tt.want {
			t.Errorf("%s with max %v: got %d, want %d", tt.effort, tt.max, got, tt.want)
		}
	}
}

// TestResponsesReasoningAnswer: Anthropic's thinking blocks reach the
// Responses client as reasoning items — the thinking as the summary, and,
// when include asks, the signed block as encrypted_content — and those
// items sent back as input reach Anthropic as the same blocks.
func TestResponsesReasoningAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	answer := providertest.Step{Body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"thinking","thinking":"Let me add.","signature":"sig-xyz=="},{"type":"redacted_thinking","data":"ZW5j"},{"type":"text","text":"4"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`}
	ask := `{"model":"anthropic/claude-sonnet-4-5","max_output_tokens":4096,"reasoning":{"effort":"low"},"input":"2+2?"`

	h.mock.Script(answer)
	resp, out := h.do("POST", compatResponsesPath, responsesHeader(h.token), ask+`}`)
	wantStatus(t, resp, out, 200)
	openaischema.Check(t, openaischema.Response, "the response", out)
	if !strings.Contains(string(out), `{"type":"reasoning","id":"rs_msg_1_0","status":"completed","summary":[{"type":"summary_text","text":"Let me add."}]},`+
		`{"type":"reasoning","id":"rs_msg_1_1","status":"completed","summary":[]},`) || strings.Contains(string(out), "encrypted_content") {
		t.Errorf("answer without include: %s", out)
	}

	h.mock.Script(answer)
	resp, out = h.do("POST", compatResponsesPath, responsesHeader(h.token), ask+`,"include":["reasoning.encrypted_content"]}`)
	wantStatus(t, resp, out, 200)
	openaischema.Check(t, openaischema.Response, "the response", out)
	var r struct {
		Output []json.RawMessage `json:"output"`
	}
	must(t, json.Unmarshal(out, &r))
	if len(r.Output) != 3 || !bytes.Contains(r.Output[0], []byte(`"encrypted_content":"sluice.thinking.v1.`)) ||
		!bytes.Contains(r.Output[1], []byte(`"encrypted_content":"sluice.thinking.v1.`)) {
		t.Fatalf("answer with include: %s", out)
	}

	// The next turn sends the output back: Anthropic gets the blocks.
	items := make([]string, len(r.Output))
	for i, it := range r.Output {
		items[i] = string(it)
	}
	input := `[{"role":"user","content":"2+2?"},` + strings.Join(items, ",") + `,{"role":"user","content":"and 3+3?"}]`
	before := len(h.mock.Requests())
	resp, out = h.do("POST", compatResponsesPath, responsesHeader(h.token), strings.Replace(ask, `"2+2?"`, input, 1)+`}`)
	wantStatus(t, resp, out, 200)
	reqs := h.mock.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("upstream requests %+v", reqs)
	}
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"Let me add.","signature":"sig-xyz=="},{"type":"redacted_thinking","data":"ZW5j"},{"type":"text","text":"4"}]}`
	if !strings.Contains(string(reqs[0].Body), want) {
		t.Errorf("upstream body %s\nlacks %s", reqs[0].Body, want)
	}
}

// TestResponsesStreamThinking translates the chunk streams the Anthropic
// and Bedrock codecs write for signed thinking (the Messages door's
// goldens, which hold them to the codecs' own) into Responses events:
// the reasoning summary events, valid against the spec, a reasoning item
// per signed block with its encrypted_content, which decodes back to the
// block.
func TestResponsesStreamThinking(t *testing.T) {
	for _, name := range []string{"anthropic", "bedrock"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile("testdata/messages/stream_thinking_" + name + ".chunks")
			must(t, err)
			d := new(responsesDoor)
			d.encrypted = true
			var out []byte
			for _, line := range bytes.Split(bytes.TrimSpace(in), []byte("\n")) {
				out = d.appendChunk(out, line)
			}
			out = d.appendEnd(out, nil)
			types := checkResponsesStream(t, out)
			want := "response.created,response.in_progress,response.output_item.added,response.reasoning_summary_part.added," +
				"response.reasoning_summary_text.delta,response.reasoning_summary_text.delta,response.reasoning_summary_text.done," +
				"response.reasoning_summary_part.done,response.output_item.done,response.output_item.added,response.output_item.done," +
				"response.output_item.added,response.content_part.added,response.output_text.delta,response.output_text.done," +
				"response.content_part.done,response.output_item.done,response.completed"
			if got := strings.Join(types, ","); got != want {
				t.Errorf("events\n got %s\nwant %s", got, want)
			}
			if name == "anthropic" {
				golden(t, "testdata/responses/stream_thinking_anthropic.events", out)
			}
			// The completed response's reasoning items, sent back, are the
			// signed blocks.
			i := bytes.LastIndex(out, []byte("data: "))
			var p fastjson.Parser
			v, err := p.ParseBytes(bytes.TrimSpace(out[i+len("data: "):]))
			must(t, err)
			var items []string
			for _, it := range v.GetArray("response", "output") {
				items = append(items, it.String())
			}
			r, err := llm.DecodeOpenAIResponses([]byte(`{"model":"m","input":[{"role":"user","content":"q"},` + strings.Join(items, ",") + `]}`))
			must(t, err)
			parts := r.Messages[1].Parts
			if len(parts) != 3 || parts[0].Kind != llm.PartThinking || parts[0].Text != "Add 2 and 2. It is 4." ||
				parts[0].Signature != "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" || parts[1].Kind != llm.PartRedactedThinking || parts[1].Data != "ZW5jcnlwdGVk" {
				t.Errorf("parts back %+v", parts)
			}
		})
	}
}

// TestResponsesDoorOptions: logprobs, their alternatives and the service
// tier reach an OpenAI-wire target and the answer's logprobs come back on
// output_text; a provider without logprobs refuses them; truncation
// "auto" is accepted; an unknown include is a 400.
func TestResponsesDoorOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	hdr := responsesHeader(h.token)
	lp := `{"token":"Hi","logprob":-0.1,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.1,"bytes":[72,105]},{"token":"Hey","logprob":-2.5,"bytes":[72,101,121]}]}`
	h.mock.Script(providertest.Step{Body: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","service_tier":"flex","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Hi"},"logprobs":{"content":[` + lp + `]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`})
	before := len(h.mock.Requests())
	resp, out := h.do("POST", compatResponsesPath, hdr, `{"model":"openai/gpt-4o-mini","input":"hi","include":["message.output_text.logprobs"],`+
		`"top_logprobs":2,"service_tier":"flex","truncation":"auto","tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{},"additionalProperties":false}}]}`)
	wantStatus(t, resp, out, 200)
	openaischema.Check(t, openaischema.Response, "the response", out)
	if !strings.Contains(string(out), `"logprobs":[`+lp+`]`) || !strings.Contains(string(out), `"service_tier":"flex"`) {
		t.Errorf("answer %s", out)
	}
	reqs := h.mock.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("upstream requests %+v", reqs)
	}
	for _, w := range []string{`"logprobs":true`, `"top_logprobs":2`, `"service_tier":"flex"`, `"strict":true`} {
		if !bytes.Contains(reqs[0].Body, []byte(w)) {
			t.Errorf("upstream body lacks %s: %s", w, reqs[0].Body)
		}
	}

	for _, tt := range []struct {
		name, body, code string
	}{
		{"anthropic logprobs", `{"model":"anthropic/claude-sonnet-4-5","input":"hi","include":["message.output_text.logprobs"]}`, apierr.CodeUnsupportedFeature},
		{"gemini logprobs", `{"model":"google/gemini-2.5-flash","input":"hi","top_logprobs":3}`, apierr.CodeUnsupportedFeature},
		{"unknown include", `{"model":"openai/gpt-4o-mini","input":"hi","include":["everything"]}`, apierr.CodeInvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := h.do("POST", compatResponsesPath, hdr, tt.body)
			wantStatus(t, resp, out, 400)
			openaischema.Check(t, openaischema.Error, "the error", out)
			if !strings.Contains(string(out), `"code":"`+tt.code+`"`) {
				t.Errorf("error %s, want %s", out, tt.code)
			}
		})
	}
}

// TestResponsesStreamLogprobs: a stream's logprobs are on its
// output_text deltas, the done events and the completed response.
func TestResponsesStreamLogprobs(t *testing.T) {
	lp := `{"token":"Hi","logprob":-0.1,"bytes":[72,105],"top_logprobs":[]}`
	d := new(responsesDoor)
	var out []byte
	for _, c := range []string{
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[` + lp + `]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"!"},"logprobs":{"content":[` + lp + `]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	} {
		out = d.appendChunk(out, []byte(c))
	}
	out = d.appendEnd(out, nil)
	checkResponsesStream(t, out)
	if n := strings.Count(string(out), `"logprobs":[`+lp+`]`); n != 2 {
		t.Errorf("%d deltas with their logprobs, want 2:\n%s", n, out)
	}
	if n := strings.Count(string(out), `"logprobs":[`+lp+`,`+lp+`]`); n != 4 {
		t.Errorf("%d done events and items with all logprobs, want 4:\n%s", n, out)
	}
}
