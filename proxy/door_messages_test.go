package proxy

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with the file path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		must(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("got\n%s\nwant (%s)\n%s", got, path, want)
	}
}

// TestMessagesAnswerGolden encodes the OpenAI answers of
// testdata/messages/answer_*.json as Anthropic messages.
func TestMessagesAnswerGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/messages/answer_*.json")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			must(t, err)
			out := new(messagesDoor).answer(bytes.TrimSpace(in))
			if !json.Valid(out) {
				t.Fatalf("not JSON: %s", out)
			}
			var ind bytes.Buffer
			must(t, json.Indent(&ind, out, "", "  "))
			golden(t, strings.TrimSuffix(f, ".json")+".messages", append(ind.Bytes(), '\n'))
		})
	}
}

// TestMessagesStreamGolden translates the OpenAI chunk streams of
// testdata/messages/stream_*.chunks (one chunk a line) into whole
// Anthropic event streams; a "cut" stream ends with an error.
func TestMessagesStreamGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/messages/stream_*.chunks")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			must(t, err)
			d := &messagesDoor{inputTokens: 11}
			var out []byte
			for _, line := range bytes.Split(bytes.TrimSpace(in), []byte("\n")) {
				out = d.appendChunk(out, line)
			}
			var end *apierr.Error
			if strings.Contains(f, "cut") {
				end = &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeAPI, Code: "upstream_error", Message: "the upstream stream broke"}
			}
			out = d.appendEnd(out, end)
			checkEventStream(t, out)
			golden(t, strings.TrimSuffix(f, ".chunks")+".events", out)
		})
	}
}

// checkEventStream checks that out is well-formed SSE of Anthropic
// events: each event's name is its data's type, and the data is JSON.
func checkEventStream(t *testing.T, out []byte) {
	t.Helper()
	for _, ev := range bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n")) {
		name, data, ok := bytes.Cut(ev, []byte("\n"))
		if !ok || !bytes.HasPrefix(name, []byte("event: ")) || !bytes.HasPrefix(data, []byte("data: ")) {
			t.Fatalf("malformed event %q", ev)
		}
		var v fastjson.Parser
		d, err := v.ParseBytes(data[len("data: "):])
		if err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		if got := string(d.GetStringBytes("type")); got != string(name[len("event: "):]) {
			t.Errorf("event %s has type %s", name, got)
		}
	}
}

func TestMessagesErrorBody(t *testing.T) {
	tests := []struct {
		status int
		typ    string
	}{
		{400, "invalid_request_error"}, {401, "authentication_error"}, {403, "permission_error"},
		{404, "not_found_error"}, {413, "request_too_large"}, {429, "rate_limit_error"},
		{500, "api_error"}, {502, "api_error"}, {504, "api_error"}, {503, "overloaded_error"},
		{415, "invalid_request_error"}, {410, "invalid_request_error"},
	}
	for _, tt := range tests {
		e := apierr.New(tt.status, "some_code", "what \"went\" wrong")
		var got struct {
			Type  string
			Error struct{ Type, Message, Code, Param string }
		}
		must(t, json.Unmarshal(new(messagesDoor).errorBody(e.WithParam("model")), &got))
		if got.Type != "error" || got.Error.Type != tt.typ || got.Error.Message != `what "went" wrong` || got.Error.Code != "some_code" || got.Error.Param != "model" {
			t.Errorf("%d: got %+v, want type %s", tt.status, got, tt.typ)
		}
	}
}

func TestMessagesDoorDecode(t *testing.T) {
	var p fastjson.Parser
	in, e := new(messagesDoor).decode(&p, []byte(`{"model":"openai/gpt-4o-mini","max_tokens":20,"stream":true,"system":"s","messages":[{"role":"user","content":"hi"}]}`), llm.OpChat)
	if e != nil {
		t.Fatal(e)
	}
	if in.model != "openai/gpt-4o-mini" || !in.stream || !in.includeUsage || in.maxTokens != 20 || !bytes.Contains(in.body, []byte(`"role":"system"`)) {
		t.Errorf("got %+v %s", in, in.body)
	}
	for _, tt := range []struct{ body, code, param string }{
		{`{"model":"m","messages":[{"role":"user","content":"x"}]}`, apierr.CodeInvalidRequest, "max_tokens"},
		{`{"model":"m","max_tokens":5,"top_k":3,"messages":[{"role":"user","content":"x"}]}`, apierr.CodeUnsupportedFeature, "top_k"},
		{`{"model":"m","max_tokens":5,"messages":[],"api_base":"http://x"}`, apierr.CodeInvalidRequest, "api_base"},
		{`{"model":"m","max_tokens":5,"max_tokens":6,"messages":[]}`, apierr.CodeInvalidJSON, ""},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document"}]}]}`, apierr.CodeUnsupportedFeature, "messages[0].content[0]"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":5}]}`, apierr.CodeInvalidRequest, ""},
	} {
		_, e := new(messagesDoor).decode(&p, []byte(tt.body), llm.OpChat)
		if e == nil || e.Status != 400 || e.Code != tt.code || e.Param != tt.param {
			t.Errorf("%s: got %+v, want 400 %s %s", tt.body, e, tt.code, tt.param)
		}
	}
}

const messagesPath = "/v1/" + testTenant + "/" + testGateway + "/compat/v1/messages"

// TestMessagesDoor drives /compat/v1/messages through the whole pipeline
// to the mock's OpenAI wire: the upstream receives an OpenAI chat body,
// the client reads Anthropic's message, events and errors.
func TestMessagesDoor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
	body := `{"model":"openai/gpt-4o-mini","max_tokens":64,"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"say hello"}]}]}`

	t.Run("answer", func(t *testing.T) {
		before := len(h.mock.Requests())
		resp, b := h.do("POST", messagesPath, hdr, body)
		wantStatus(t, resp, b, 200)
		var msg struct {
			Type, Role, Model string
			StopReason        string `json:"stop_reason"`
			Content           []struct{ Type, Text string }
			Usage             struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			}
		}
		must(t, json.Unmarshal(b, &msg))
		if len(msg.Content) != 1 || msg.Content[0].Type != "text" || !strings.Contains(msg.Content[0].Text, "say hello") ||
			msg.StopReason != "end_turn" || msg.Usage.OutputTokens == 0 || msg.Usage.InputTokens == 0 {
			t.Errorf("answer %s", b)
		}
		reqs := h.mock.Requests()[before:]
		if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
			t.Fatalf("upstream requests %+v", reqs)
		}
		var sent struct {
			Model     string
			MaxTokens int64 `json:"max_tokens"`
			Messages  []struct{ Role string }
		}
		must(t, json.Unmarshal(reqs[0].Body, &sent))
		if sent.Model != "gpt-4o-mini" || sent.MaxTokens != 64 || len(sent.Messages) != 2 || sent.Messages[0].Role != "system" {
			t.Errorf("upstream body %s", reqs[0].Body)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 200 || rec.Provider != "openai" || rec.TokensOut == 0 || rec.Operation != "messages" {
			t.Errorf("record %+v", rec)
		}
	})

	t.Run("stream", func(t *testing.T) {
		resp, b := h.do("POST", messagesPath, hdr, strings.Replace(body, `"max_tokens":64`, `"max_tokens":64,"stream":true`, 1))
		wantStatus(t, resp, b, 200)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("content type %q", ct)
		}
		checkEventStream(t, b)
		var names []string
		for _, line := range strings.Split(string(b), "\n") {
			if n, ok := strings.CutPrefix(line, "event: "); ok && (len(names) == 0 || names[len(names)-1] != n) {
				names = append(names, n)
			}
		}
		want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("events %v, want %v\n%s", names, want, b)
		}
		if !strings.Contains(string(b), `"stop_reason":"end_turn"`) || strings.Contains(string(b), "[DONE]") {
			t.Errorf("stream %s", b)
		}
	})

	t.Run("tool call", func(t *testing.T) {
		h.mock.Script(providertest.Step{Body: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`})
		resp, b := h.do("POST", messagesPath, hdr, `{"model":"openai/gpt-4o-mini","max_tokens":64,"messages":[{"role":"user","content":"weather?"}],"tools":[{"name":"w","input_schema":{"type":"object"}}]}`)
		wantStatus(t, resp, b, 200)
		if !strings.Contains(string(b), `{"type":"tool_use","id":"call_1","name":"w","input":{"city":"Paris"}}`) || !strings.Contains(string(b), `"stop_reason":"tool_use"`) {
			t.Errorf("answer %s", b)
		}
	})

	for _, tt := range []struct {
		name   string
		hdr    http.Header
		body   string
		status int
		typ    string
		code   string
	}{
		{"no token", http.Header{"Content-Type": {"application/json"}}, body, 401, "authentication_error", apierr.CodeMissingToken},
		{"unknown model", hdr, strings.Replace(body, "openai/gpt-4o-mini", "nosuch", 1), 400, "invalid_request_error", apierr.CodeUnknownModel},
		{"unsupported", hdr, strings.Replace(body, `"max_tokens":64`, `"max_tokens":64,"top_k":2`, 1), 400, "invalid_request_error", apierr.CodeUnsupportedFeature},
		{"bearer", http.Header{"Authorization": {"Bearer nope"}, "Content-Type": {"application/json"}}, body, 401, "authentication_error", apierr.CodeInvalidToken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := h.do("POST", messagesPath, tt.hdr, tt.body)
			wantStatus(t, resp, b, tt.status)
			var got struct {
				Type  string
				Error struct{ Type, Code string }
			}
			must(t, json.Unmarshal(b, &got))
			if got.Type != "error" || got.Error.Type != tt.typ || got.Error.Code != tt.code {
				t.Errorf("error %s, want %s %s", b, tt.typ, tt.code)
			}
		})
	}

	t.Run("upstream rate limit", func(t *testing.T) {
		resp, b := h.do("POST", messagesPath, hdr, strings.Replace(body, "gpt-4o-mini", "gpt-4o-mini@status=429", 1))
		if resp.StatusCode != 429 || !strings.Contains(string(b), `"type":"rate_limit_error"`) {
			t.Errorf("got %d %s", resp.StatusCode, b)
		}
	})
}

// TestMessagesDoorCache: a cached answer is served again in the door's
// shape, streamed or not.
func TestMessagesDoorCache(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	hdr := http.Header{"Authorization": {"Bearer " + h.token}, "Content-Type": {"application/json"}}
	for _, stream := range []string{"false", "true"} {
		body := `{"model":"openai/gpt-4o-mini","max_tokens":64,"stream":` + stream + `,"messages":[{"role":"user","content":"cache me"}]}`
		_, first := h.do("POST", messagesPath, hdr, body)
		resp, b := h.do("POST", messagesPath, hdr, body)
		wantStatus(t, resp, b, 200)
		wantCache(t, resp, "HIT")
		if stream == "true" {
			checkEventStream(t, b)
		}
		if !strings.Contains(string(b), `"text":"Hello from mock: cache me"`) && !strings.Contains(string(b), `"text":"Hello from mock: "`) {
			t.Errorf("stream %s: hit %s\nfirst %s", stream, b, first)
		}
	}
}

// TestMessagesCountTokens: count_tokens is answered by the gateway — no
// upstream call, no rate limit counted — and logged.
func TestMessagesCountTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{RateLimit: rpm(1)}})
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}}
	path := messagesPath + "/count_tokens"
	body := `{"model":"openai/gpt-4o-mini","system":"Be brief.","messages":[{"role":"user","content":"count the tokens of this sentence"}]}`
	var n [2]int64
	for i := range n {
		resp, b := h.do("POST", path, hdr, body)
		wantStatus(t, resp, b, 200)
		var got struct {
			InputTokens int64 `json:"input_tokens"`
		}
		must(t, json.Unmarshal(b, &got))
		n[i] = got.InputTokens
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 200 || rec.CostUSD != 0 || rec.Model != "gpt-4o-mini" || rec.Operation != "count_tokens" {
			t.Errorf("record %+v", rec)
		}
	}
	if n[0] < 10 || n[0] != n[1] {
		t.Errorf("input_tokens %v", n)
	}
	if len(h.mock.Requests()) != 0 {
		t.Errorf("count_tokens called the upstream %d times", len(h.mock.Requests()))
	}
	// The one request a minute is still there for the Messages door.
	resp, b := h.do("POST", messagesPath, hdr, strings.Replace(body, `"system"`, `"max_tokens":5,"system"`, 1))
	wantStatus(t, resp, b, 200)
	resp, b = h.do("POST", path, hdr, strings.Replace(body, "openai/gpt-4o-mini", "nosuch", 1))
	wantStatus(t, resp, b, 400)
}

// messagesErrCode is error.code of an Anthropic-shaped error body.
func messagesErrCode(b []byte) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(b, &e)
	return e.Error.Code
}

// FuzzMessagesDoorEncode: whatever chunks and answers come back from the
// providers, the door writes well-formed Anthropic events and JSON.
func FuzzMessagesDoorEncode(f *testing.F) {
	files, _ := filepath.Glob("testdata/messages/*.chunks")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	answers, _ := filepath.Glob("testdata/messages/answer_*.json")
	for _, p := range answers {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := new(messagesDoor)
		var out []byte
		for _, line := range bytes.Split(b, []byte("\n")) {
			out = d.appendChunk(out, line)
		}
		out = d.appendEnd(out, nil)
		checkEventStream(t, out)
		if a := new(messagesDoor).answer(b); !bytes.Equal(a, b) && !json.Valid(a) {
			t.Fatalf("answer of %q is not JSON: %s", b, a)
		}
	})
}

// TestMessagesBudgetRefusal: a hard budget's refusal on the Messages door
// is Anthropic's rate_limit_error with the code budget_exceeded, and
// keeps x-should-retry: false so that the SDK does not retry it.
func TestMessagesBudgetRefusal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: hardBudget(money.FromFloat(0.000001), "monthly")})
	setPrice(h)
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}}
	resp, b := h.do("POST", messagesPath, hdr, `{"model":"openai/`+pricedModel+`","max_tokens":8,"messages":[{"role":"user","content":"say hello to the test"}]}`)
	wantStatus(t, resp, b, http.StatusTooManyRequests)
	var got struct {
		Type  string
		Error struct{ Type, Code string }
	}
	must(t, json.Unmarshal(b, &got))
	if got.Type != "error" || got.Error.Type != "rate_limit_error" || got.Error.Code != apierr.CodeBudgetExceeded {
		t.Errorf("error %s", b)
	}
	if v := resp.Header.Get("x-should-retry"); v != "false" {
		t.Errorf("x-should-retry %q, want false", v)
	}
}
