package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

const testdata = "testdata"

// TestAnthropicRequestGolden translates each OpenAI request in
// testdata/anthropic/requests/*.in.json and compares the Messages request
// with the matching .out.json.
func TestAnthropicRequestGolden(t *testing.T) {
	ins, _ := filepath.Glob(filepath.Join(testdata, "requests", "*.in.json"))
	if len(ins) < 10 {
		t.Fatalf("found %d request cases", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var flags struct {
				Stream bool `json:"stream"`
			}
			_ = json.Unmarshal(body, &flags)
			out, jsonTool, err := requestBody(body, nil, "claude-sonnet-4-5", flags.Stream, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := codectest.IndentJSON(t, out)
			if jsonTool != "" {
				got = append(got, "\n// json tool: "+jsonTool...)
			}
			codectest.Golden(t, filepath.Join(testdata, "requests", name+".out.json"), got)
		})
	}
}

func TestAnthropicRequestRefused(t *testing.T) {
	const user = `"messages":[{"role":"user","content":"Hi"}]`
	tests := []struct {
		name, body, want string
	}{
		{"n", `{"n":2,` + user + `}`, "anthropic does not support n > 1"},
		{"logprobs", `{"logprobs":true,` + user + `}`, "anthropic does not support logprobs"},
		{"top_logprobs", `{"top_logprobs":3,` + user + `}`, "anthropic does not support logprobs"},
		{"presence", `{"presence_penalty":0.5,` + user + `}`, "anthropic does not support presence_penalty"},
		{"frequency", `{"frequency_penalty":-1,` + user + `}`, "anthropic does not support frequency_penalty"},
		{"logit_bias", `{"logit_bias":{"50256":-100},` + user + `}`, "anthropic does not support logit_bias"},
		{"seed", `{"seed":42,` + user + `}`, "anthropic does not support seed"},
		{"audio", `{"modalities":["text","audio"],` + user + `}`, "anthropic does not support audio output"},
		{"functions", `{"functions":[{"name":"f"}],` + user + `}`, "anthropic does not support the deprecated functions"},
		{"function role", `{"messages":[{"role":"function","name":"f","content":"x"}]}`, "anthropic does not support the deprecated function role"},
		{"input_audio", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}]}`, "anthropic does not support audio input"},
		{"file", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "anthropic does not support file content parts"},
		{"json with tools", `{"response_format":{"type":"json_object"},"tools":[{"type":"function","function":{"name":"f"}}],` + user + `}`, "anthropic does not support response_format json_object together with tools"},
		{"schema not object", `{"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"array"}}},` + user + `}`, "whose type is not object"},
		{"custom tool", `{"tools":[{"type":"custom","custom":{"name":"x"}}],` + user + `}`, `anthropic does not support tools of type "custom"`},
		{"tool_choice allowed_tools", `{"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools"},` + user + `}`, "anthropic does not support this tool_choice"},
		{"ftp image", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "an image_url must be an http(s) URL or a base64 data URL"},
		{"bad arguments", `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[1].tool_calls[0]: the arguments are not a JSON object"},
		{"tool without id", `{"messages":[{"role":"tool","content":"x"}]}`, "a tool message needs tool_call_id"},
		{"only system", `{"messages":[{"role":"system","content":"Be nice."}]}`, "at least one user or assistant message"},
		{"wrong type", `{"messages":"Hi"}`, "does not fit the chat completions schema"},
		{"unknown role", `{"messages":[{"role":"robot","content":"Hi"}]}`, `unknown role "robot"`},
	}
	a := New(nil).(*Anthropic)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := requestBody([]byte(tt.body), nil, "m", false, 0)
			if e := providers.AsError(err); e == nil || e.Status != 400 || e.Retryable() || !strings.Contains(e.Message, tt.want) {
				t.Errorf("translation: got %v, want a 400 *Error containing %q", err, tt.want)
			}
			if err := a.Validate(&providers.Request{Op: llm.OpChat, Body: []byte(tt.body)}); err != nil {
				if e := providers.AsError(err); e == nil || e.Status != 400 || !strings.HasPrefix(e.Message, "anthropic does not support") {
					t.Errorf("Validate: %v", err)
				}
			}
		})
	}
	// Values that mean "off" are accepted by both.
	ok := `{"n":1,"logprobs":false,"top_logprobs":0,"presence_penalty":0,"frequency_penalty":0.0,"logit_bias":{},"seed":null,"modalities":["text"],"functions":null,` + user + `}`
	if err := a.Validate(&providers.Request{Op: llm.OpChat, Body: []byte(ok)}); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, _, err := requestBody([]byte(ok), nil, "m", false, 0); err != nil {
		t.Errorf("translation: %v", err)
	}
	if err := a.Validate(&providers.Request{Op: llm.OpEmbeddings, Body: []byte(`{"n":3}`)}); err != nil {
		t.Errorf("Validate of embeddings: %v (the capability check answers those)", err)
	}
}

// answerCases names the JSON tool of the response goldens that use one.
var answerJSONTools = map[string]string{"json_mode": "person"}

// TestAnthropicResponseGolden translates each answer in
// testdata/anthropic/responses/*.in.json and compares the OpenAI answer,
// Usage and model with the matching .out.json.
func TestAnthropicResponseGolden(t *testing.T) {
	ins, _ := filepath.Glob(filepath.Join(testdata, "responses", "*.in.json"))
	if len(ins) < 6 {
		t.Fatalf("found %d response cases", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, usage, model, err := answer(body, answerContext{
				jsonTool: answerJSONTools[name], created: 1700000000, model: "requested-model", key: codectest.TestKey})
			if err != nil {
				t.Fatal(err)
			}
			record, err := providers.MarshalJSON(struct {
				Answer       json.RawMessage `json:"answer"`
				Usage        llm.Usage       `json:"usage"`
				UsagePresent bool            `json:"usage_present"`
				Model        string          `json:"model"`
			}{out, usage, usage.Present, model})
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, filepath.Join(testdata, "responses", name+".out.json"), codectest.IndentJSON(t, record))
		})
	}
}

func TestAnthropicAnswerInvalid(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"error with 200", `{"type":"error","error":{"type":"api_error","message":"boom, key sk-abcdefghijklmnop"}}`, "boom, key [REDACTED]"},
		{"html", `<html>502</html>`, providers.ErrInvalidResponse},
		{"truncated", `{"id":"msg_1","content":[`, providers.ErrInvalidResponse},
		{"content not array", `{"id":"msg_1","content":"hi"}`, providers.ErrInvalidResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := answer([]byte(tt.body), answerContext{key: codectest.TestKey})
			if e := providers.AsError(err); e == nil || e.Status != http.StatusBadGateway || e.Message != tt.want {
				t.Errorf("got %v, want *Error 502 %q", err, tt.want)
			}
		})
	}
}

// streamCases are the stream goldens: an SSE file and the client's
// options, translated into testdata/anthropic/streams/<name>.out.
var streamCases = []struct {
	name, sse string
	wantUsage bool
	jsonTool  string
}{
	{"text", "text.sse", false, ""},
	{"text_usage", "text.sse", true, ""},
	{"tool_calls", "tool_calls.sse", true, ""},
	{"error_event", "error_event.sse", true, ""},
	{"missing_stop", "missing_stop.sse", true, ""},
	{"json_mode", "json_mode.sse", false, "person"},
	{"crlf_unknown_events", "crlf_unknown_events.sse", true, ""},
}

// translateStream runs the translator over data and records every chunk,
// how the stream ended and the usage, one line each.
func translateStream(t *testing.T, data []byte, sc streamContext) []byte {
	t.Helper()
	var tr translator
	tr.init(bytes.NewReader(data), &fastjson.Parser{}, sc)
	var out bytes.Buffer
	for {
		c, err := tr.Next()
		if err != nil {
			if err == io.EOF {
				out.WriteString("end: EOF\n")
			} else {
				e := providers.AsError(err)
				if e == nil {
					t.Fatalf("not an *Error: %v", err)
				}
				fmt.Fprintf(&out, "end: error status=%d retryable=%v message=%q\n", e.Status, e.Retryable(), e.Message)
			}
			break
		}
		if !json.Valid(c) {
			t.Fatalf("invalid chunk %s", c)
		}
		out.Write(c)
		out.WriteByte('\n')
	}
	u, _ := json.Marshal(tr.usage)
	fmt.Fprintf(&out, "usage: %s present=%v", u, tr.usage.Present)
	return out.Bytes()
}

func TestAnthropicStreamGolden(t *testing.T) {
	for _, tt := range streamCases {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testdata, "streams", tt.sse))
			if err != nil {
				t.Fatal(err)
			}
			got := translateStream(t, data, streamContext{jsonTool: tt.jsonTool, created: 1700000000,
				model: "requested-model", wantUsage: tt.wantUsage, key: codectest.TestKey})
			codectest.Golden(t, filepath.Join(testdata, "streams", tt.name+".out"), got)
		})
	}
}

func TestAnthropicStreamTooManyBlocks(t *testing.T) {
	var sb strings.Builder
	for i := range maxAnthropicBlocks + 1 {
		fmt.Fprintf(&sb, "data: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\"}}\n\n", i)
	}
	var tr translator
	tr.init(strings.NewReader(sb.String()), &fastjson.Parser{}, streamContext{})
	n := 0
	for {
		_, err := tr.Next()
		if err != nil {
			if e := providers.AsError(err); e == nil || e.Status != 502 || n != maxAnthropicBlocks {
				t.Errorf("after %d chunks: %v", n, err)
			}
			return
		}
		n++
	}
}

func TestAnthropicBaseURL(t *testing.T) {
	for _, tt := range []struct{ base, want string }{
		{"", "https://api.anthropic.com"},
		{"https://api.anthropic.com", "https://api.anthropic.com"},
		{"https://api.anthropic.com/", "https://api.anthropic.com"},
		{"https://api.anthropic.com/v1", "https://api.anthropic.com"},
		{"https://proxy.example/anthropic/v1/", "https://proxy.example/anthropic"},
	} {
		hr := httpRequest(&providers.Request{Cred: providers.Credential{BaseURL: tt.base, Key: codectest.TestKey},
			Traceparent: "00-x"}, nil)
		if hr.BaseURL != tt.want || hr.Path != "v1/messages" || hr.KeyHeader != "x-api-key" || hr.KeyPrefix != "" ||
			hr.Header.Get("Anthropic-Version") != "2023-06-01" || hr.Traceparent != "00-x" {
			t.Errorf("%q: got %+v", tt.base, hr)
		}
	}
}

func against(t *testing.T, m *providertest.Server, body string) (*Anthropic, *providers.Request) {
	t.Helper()
	a := New(codectest.NewTestClient(t, providers.ClientConfig{})).(*Anthropic)
	a.now = func() time.Time { return time.Unix(1700000000, 0) }
	req := codectest.ChatRequest(m.URL()+"/v1/", body)
	req.Model = "claude-sonnet-4-5"
	return a, req
}

func TestAnthropicMockChat(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	a, req := against(t, m, `{"model":"x","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi there"}]}`)
	resp, err := a.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"msg_mock_1","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4-5","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from mock: Hi there","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":0}}}`
	if diff := cmp.Diff(want, string(resp.Body)); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if u := resp.Usage; u != (llm.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9, Present: true}) || resp.Model != "claude-sonnet-4-5" {
		t.Errorf("usage %+v, model %q", u, resp.Model)
	}
	rec := m.Requests()[0]
	if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != string(codectest.TestKey) ||
		rec.Header.Get("Anthropic-Version") != "2023-06-01" || rec.Header.Get("Authorization") != "" {
		t.Errorf("upstream request: %s %v", rec.Path, rec.Header)
	}
	if !bytes.Contains(rec.Body, []byte(`"max_tokens":4096`)) || !bytes.Contains(rec.Body, []byte(`"system":"Be brief."`)) {
		t.Errorf("upstream body: %s", rec.Body)
	}
}

func TestAnthropicMockTools(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	body := `{"model":"x","tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}],"messages":[{"role":"user","content":"cats"}]}`
	a, req := against(t, m, body)
	resp, err := a.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got providers.OpenAIChatCompletion
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	want := []providers.OpenAIToolCall{{ID: "toolu_mock_1", Type: "function", Function: providers.OpenAIFunctionCall{Name: "search", Arguments: `{"text":"cats"}`}}}
	if diff := cmp.Diff(want, c.Message.ToolCalls); diff != "" || c.Message.Content != nil || c.FinishReason != "tool_calls" {
		t.Errorf("tool calls (-want +got):\n%s\ncontent %v, finish %q", diff, c.Message.Content, c.FinishReason)
	}

	// Streamed: the argument pieces add up to the same JSON.
	req.Stream = true
	s, err := a.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := codectest.ReadChunks(s)
	if err != io.EOF {
		t.Fatal(err)
	}
	var args, finish string
	for _, c := range chunks {
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []providers.OpenAIToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(c), &ch); err != nil {
			t.Fatal(err)
		}
		for _, ch := range ch.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if args != `{"text":"cats"}` || finish != "tool_calls" {
		t.Errorf("streamed arguments %q, finish %q", args, finish)
	}
}

func TestAnthropicMockStream(t *testing.T) {
	for _, wantUsage := range []bool{false, true} {
		t.Run(fmt.Sprint("usage=", wantUsage), func(t *testing.T) {
			codectest.MockLeakCheck(t)
			m := codectest.StartMock(t)
			a, req := against(t, m, `{"model":"x","stream":true,"messages":[{"role":"user","content":"Hi there"}]}`)
			req.Stream, req.ClientWantsUsage = true, wantUsage
			s, err := a.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			chunks, err := codectest.ReadChunks(s)
			if err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
			head := `{"id":"msg_mock_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-sonnet-4-5",`
			choice := func(delta, finish string) string {
				return head + `"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}`
			}
			want := []string{
				choice(`{"role":"assistant","content":""}`, "null"),
				choice(`{"content":"Hello fr"}`, "null"),
				choice(`{"content":"om mock:"}`, "null"),
				choice(`{"content":" Hi there"}`, "null"),
				choice(`{}`, `"stop"`),
			}
			if wantUsage {
				want = append(want, head+`"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}}}`)
			}
			if diff := cmp.Diff(want, chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if u := s.Usage(); u != (llm.Usage{PromptTokens: 2, CompletionTokens: 5, TotalTokens: 7, Present: true}) {
				t.Errorf("usage %+v", u)
			}
			if body := m.Requests()[0].Body; !bytes.Contains(body, []byte(`"stream":true`)) {
				t.Errorf("upstream body lacks stream: %s", body)
			}
		})
	}
}

func TestAnthropicMockErrors(t *testing.T) {
	tests := []struct {
		name      string
		step      providertest.Step
		noKey     bool
		stream    bool
		status    int
		retryable bool
		retry     time.Duration
		msg       string
	}{
		{name: "429", step: providertest.Step{Status: 429, RetryAfter: "2"}, status: 429, retryable: true, retry: 2 * time.Second, msg: "rate limit"},
		{name: "429 stream", step: providertest.Step{Status: 429, RetryAfter: "3"}, stream: true, status: 429, retryable: true, retry: 3 * time.Second, msg: "rate limit"},
		{name: "529", step: providertest.Step{Status: 529}, status: 503, retryable: true, msg: "Overloaded (mock). (anthropic status 529)"},
		{name: "529 stream", step: providertest.Step{Status: 529}, stream: true, status: 503, retryable: true, msg: "anthropic status 529"},
		{name: "500", step: providertest.Step{Status: 500}, status: 500, retryable: true, msg: "Internal server error"},
		{name: "400", step: providertest.Step{Status: 400}, status: 400, msg: "Request failed with status 400"},
		{name: "404", step: providertest.Step{Status: 404}, status: 404, msg: "status 404"},
		{name: "no key", noKey: true, status: 401, msg: "x-api-key header is required"},
		{name: "reset", step: providertest.Step{ResetAfter: 1}, stream: true, status: 0, retryable: true, msg: "the stream ended before message_stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.MockLeakCheck(t)
			m := codectest.StartMock(t)
			m.Script(tt.step)
			a, req := against(t, m, `{"model":"x","messages":[{"role":"user","content":"Hi"}]}`)
			if tt.noKey {
				req.Cred.Key = ""
			}
			var err error
			if tt.stream {
				req.Stream = true
				var s providers.Stream
				if s, err = a.ChatStream(context.Background(), req); err == nil {
					_, err = codectest.ReadChunks(s)
					s.Close()
				}
			} else {
				_, err = a.Chat(context.Background(), req)
			}
			e := providers.AsError(err)
			if e == nil || e.Status != tt.status || e.Retryable() != tt.retryable || e.RetryAfter != tt.retry || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %#v, want status %d retryable %v retry-after %v message ~%q", err, tt.status, tt.retryable, tt.retry, tt.msg)
			}
			if strings.Contains(e.Error(), string(codectest.TestKey)) {
				t.Errorf("the key leaked: %v", e)
			}
		})
	}
}

func TestAnthropicStreamCloseEarly(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	a, req := against(t, m, `{"model":"x@chunks=50@delay=5ms","messages":[{"role":"user","content":"Hi"}]}`)
	req.Stream = true
	s, err := a.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil || s.Close() != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("Next after Close: %v", err)
	}
}

// FuzzAnthropicStream feeds the stream translator, and the answer
// translation, arbitrary bytes: no panic, every chunk and answer valid
// JSON, usage never negative, and every failure an *Error with a short,
// key-free message.
func FuzzAnthropicStream(f *testing.F) {
	f.Add([]byte("event: ping\ndata: {\"type\":\"ping\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr translator
		// Half the inputs relay thinking too (providers.Request.ThinkingBlocks).
		tr.init(bytes.NewReader(data), &fastjson.Parser{}, streamContext{
			jsonTool: "person", model: "m", wantUsage: true, key: codectest.TestKey, thinkingBlocks: len(data)%2 == 1})
		for range 10000 {
			c, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkAnthropicError(t, err)
				if _, again := tr.Next(); again != err {
					t.Fatalf("error not sticky: %v then %v", err, again)
				}
				break
			}
			if !json.Valid(c) || c[0] != '{' {
				t.Fatalf("invalid chunk %q", c)
			}
		}
		if u := tr.usage; u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CachedTokens < 0 || u.CacheCreationTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
		out, _, _, err := answer(data, answerContext{jsonTool: "person", key: codectest.TestKey})
		if err != nil {
			checkAnthropicError(t, err)
		} else if !json.Valid(out) {
			t.Fatalf("invalid answer %q", out)
		}
	})
}

func checkAnthropicError(t *testing.T, err error) {
	t.Helper()
	e := providers.AsError(err)
	if e == nil || len(e.Message) > providers.MaxMessage || strings.Contains(e.Error(), "0123456789") {
		t.Fatalf("bad error %#v", err)
	}
}

func TestFuzzAnthropicStreamSeeds(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzAnthropicStream"))
	if err != nil || len(entries) < 5 {
		t.Fatalf("seed corpus: %d entries, %v", len(entries), err)
	}
}

// BenchmarkAnthropicStream translates a 20-delta text stream.
func BenchmarkAnthropicStream(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n")
	for range 20 {
		sb.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello there\"}}\n\n")
	}
	sb.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":40}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	data := []byte(sb.String())
	var p fastjson.Parser
	var tr translator
	r := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r.Reset(data)
		tr.init(r, &p, streamContext{model: "m", wantUsage: true})
		for {
			if _, err := tr.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}
