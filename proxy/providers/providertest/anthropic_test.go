package providertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

// postAnthropic sends body to /v1/messages with the given x-api-key and
// anthropic-version (none when "").
func postAnthropic(t *testing.T, s *Server, key, version, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if version != "" {
		req.Header.Set("Anthropic-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anthropicEvents reads an event stream into "name data" lines.
func anthropicEvents(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var out []string
	var name string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if !json.Valid([]byte(data)) {
				t.Errorf("invalid event data %q", data)
			}
			out = append(out, name+" "+data)
		}
	}
	return out
}

const anthropicHi = `{"model":"claude-sonnet-4-5","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"Say hi"}]}`

func TestAnthropicMessage(t *testing.T) {
	s := start(t)
	resp := postAnthropic(t, s, testKey, "2023-06-01", anthropicHi)
	body := readAll(t, resp)
	want := `{"id":"msg_mock_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello from mock: Say hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}`
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(body) != want {
		t.Errorf("status %d %s:\n%s\nwant\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
	}
	rec := s.Requests()[0]
	if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != testKey {
		t.Errorf("recorded %s %v", rec.Path, rec.Header)
	}
}

func TestAnthropicTools(t *testing.T) {
	s := start(t)
	tools := `"tools":[{"name":"search","input_schema":{"type":"object"}},{"name":"other","input_schema":{"type":"object"}}]`
	tests := []struct {
		name, body, wantStop, wantBlock string
	}{
		{"tool use", `{"model":"m","max_tokens":10,` + tools + `,"messages":[{"role":"user","content":"find \"cats\""}]}`,
			"tool_use", `{"type":"tool_use","id":"toolu_mock_1","name":"search","input":{"text":"find \"cats\""}}`},
		{"tool_choice none", `{"model":"m","max_tokens":10,` + tools + `,"tool_choice":{"type":"none"},"messages":[{"role":"user","content":"hi"}]}`,
			"end_turn", `{"type":"text","text":"Hello from mock: hi"}`},
		{"after a tool result", `{"model":"m","max_tokens":10,` + tools + `,"messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"search","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"found"}]}]}`,
			"end_turn", `{"type":"text","text":"Hello from mock: hi"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := readAll(t, postAnthropic(t, s, testKey, "2023-06-01", tt.body))
			var got struct {
				Content    []json.RawMessage `json:"content"`
				StopReason string            `json:"stop_reason"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Content) != 1 || string(got.Content[0]) != tt.wantBlock || got.StopReason != tt.wantStop {
				t.Errorf("got %s", body)
			}
		})
	}
}

func TestAnthropicStream(t *testing.T) {
	s := start(t)
	resp := postAnthropic(t, s, testKey, "2023-06-01", `{"model":"claude-sonnet-4-5@chunks=2","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Say hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	want := []string{
		`message_start {"type":"message_start","message":{"id":"msg_mock_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`ping {"type": "ping"}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from "}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"mock: Say hi"}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}`,
		`message_stop {"type":"message_stop"}`,
	}
	if diff := cmp.Diff(want, anthropicEvents(t, resp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAnthropicStreamToolNoUsage(t *testing.T) {
	s := start(t)
	s.Script(Step{NoUsage: true, Chunks: 2})
	resp := postAnthropic(t, s, testKey, "2023-06-01", `{"model":"m","max_tokens":100,"stream":true,"tools":[{"name":"search","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"x"}]}`)
	events := anthropicEvents(t, resp)
	var args string
	for _, e := range events {
		if strings.Contains(e, `"usage"`) {
			t.Errorf("usage with NoUsage: %s", e)
		}
		if strings.HasPrefix(e, "content_block_delta ") {
			var ev struct {
				Delta struct {
					Type        string `json:"type"`
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			_ = json.Unmarshal([]byte(strings.TrimPrefix(e, "content_block_delta ")), &ev)
			if ev.Delta.Type != "input_json_delta" {
				t.Errorf("delta %s", e)
			}
			args += ev.Delta.PartialJSON
		}
	}
	if args != `{"text":"x"}` || !strings.Contains(events[1], `"type":"tool_use","id":"toolu_mock_1","name":"search"`) ||
		!strings.Contains(events[len(events)-2], `"stop_reason":"tool_use"`) {
		t.Errorf("arguments %q, events %q", args, events)
	}
}

func TestAnthropicErrors(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, key, version, body string
		step                     *Step
		status                   int
		typ, msg, retryAfter     string
	}{
		{name: "no key", version: "2023-06-01", body: anthropicHi, status: 401, typ: "authentication_error", msg: "x-api-key header is required"},
		{name: "no version", key: testKey, body: anthropicHi, status: 400, typ: "invalid_request_error", msg: "anthropic-version: header is required"},
		{name: "no max_tokens", key: testKey, version: "v", body: `{"model":"m","messages":[{"role":"user","content":"x"}]}`, status: 400, typ: "invalid_request_error", msg: "max_tokens: Field required"},
		{name: "no messages", key: testKey, version: "v", body: `{"model":"m","max_tokens":1,"messages":[]}`, status: 400, typ: "invalid_request_error", msg: "messages: at least one message is required"},
		{name: "bad json", key: testKey, version: "v", body: `{"model":`, status: 400, typ: "invalid_request_error", msg: "invalid JSON body"},
		{name: "bad directive", key: testKey, version: "v", body: `{"model":"m@nope=1","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, status: 400, typ: "invalid_request_error", msg: "unknown mock directive"},
		{name: "529 step", step: &Step{Status: 529}, body: anthropicHi, status: 529, typ: "overloaded_error", msg: "Overloaded"},
		{name: "429 step", step: &Step{Status: 429, RetryAfter: "7"}, body: anthropicHi, status: 429, typ: "rate_limit_error", msg: "rate limit", retryAfter: "7"},
		{name: "500 directive", key: testKey, version: "v", body: `{"model":"m@status=500","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, status: 500, typ: "api_error", msg: "Internal server error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.step != nil {
				s.Script(*tt.step)
			}
			resp := postAnthropic(t, s, tt.key, tt.version, tt.body)
			got := decode[anthropicError](t, readAll(t, resp))
			if resp.StatusCode != tt.status || got.Type != "error" || got.Error.Type != tt.typ || !strings.Contains(got.Error.Message, tt.msg) ||
				resp.Header.Get("Retry-After") != tt.retryAfter {
				t.Errorf("status %d, %+v, Retry-After %q", resp.StatusCode, got, resp.Header.Get("Retry-After"))
			}
		})
	}
}

func TestAnthropicResetAndLatency(t *testing.T) {
	s := start(t)
	s.Script(Step{ResetAfter: 1, Latency: 30 * time.Millisecond})
	began := time.Now()
	resp := postAnthropic(t, s, testKey, "2023-06-01", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	events := anthropicEvents(t, resp)
	if time.Since(began) < 30*time.Millisecond {
		t.Error("latency not honoured")
	}
	// message_start, content_block_start, ping and one delta; then the cut.
	if len(events) != 4 || !strings.HasPrefix(events[3], "content_block_delta ") {
		t.Errorf("events %q", events)
	}
}

func FuzzAnthropicRequest(f *testing.F) {
	f.Add([]byte(anthropicHi))
	f.Add([]byte(`{"model":"m","max_tokens":5,"stream":true,"tools":[{"name":"t"}],"messages":[{"role":"user","content":[{"type":"text","text":"a\"b"}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":null}]}`))
	s := New(Options{MaxRecorded: -1})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.IndexByte(body, '@') >= 0 {
			t.Skip("directives can wait for hours; parseModel has its own fuzz target")
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil)
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/v1/messages")
		ctx.Request.Header.Set("x-api-key", "k")
		ctx.Request.Header.Set("anthropic-version", "2023-06-01")
		ctx.Request.SetBody(body)
		h(&ctx)
		if ctx.Response.IsBodyStream() {
			ctx.Response.Reset()
			return
		}
		if !json.Valid(ctx.Response.Body()) {
			t.Errorf("invalid JSON answer %q", ctx.Response.Body())
		}
	})
}
