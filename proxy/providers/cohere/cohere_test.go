package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// TestCohereRequestGolden translates each OpenAI request in
// testdata/cohere/requests/*.in.json and compares the v2 Chat request
// with the matching .out.json.
func TestCohereRequestGolden(t *testing.T) {
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
			co := New(nil).(*Cohere)
			if err := co.Validate(&providers.Request{Op: llm.OpChat, Body: body}); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			out, err := chatBody(body, "command-a-03-2025", flags.Stream, 0)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, filepath.Join(testdata, "requests", name+".out.json"), codectest.IndentJSON(t, out))
		})
	}
}

func TestCohereRequestRefused(t *testing.T) {
	const user = `"messages":[{"role":"user","content":"Hi"}]`
	const tools = `"tools":[{"type":"function","function":{"name":"f"}}],`
	tests := []struct {
		name, body, want string
		validate         bool // Validate refuses it too, before any attempt
	}{
		{"n", `{"n":2,` + user + `}`, "cohere does not support n > 1", true},
		{"logprobs", `{"logprobs":true,` + user + `}`, "cohere does not support logprobs", true},
		{"top_logprobs", `{"top_logprobs":2,` + user + `}`, "cohere does not support logprobs", true},
		{"logit_bias", `{"logit_bias":{"1":2},` + user + `}`, "cohere does not support logit_bias", true},
		{"audio", `{"modalities":["text","audio"],` + user + `}`, "cohere does not support audio output", true},
		{"prediction", `{"prediction":{"type":"content","content":"x"},` + user + `}`, "cohere does not support predicted outputs", true},
		{"web search", `{"web_search_options":{},` + user + `}`, "cohere does not support web_search_options", true},
		{"functions", `{"functions":[{"name":"f"}],` + user + `}`, "cohere does not support the deprecated functions", true},
		{"reasoning", `{"reasoning_effort":"low",` + user + `}`, "cohere does not support reasoning_effort", true},
		{"serial tools", `{"parallel_tool_calls":false,` + tools + user + `}`, "cohere does not support parallel_tool_calls: false", true},
		{"named tool", `{"tool_choice":{"type":"function","function":{"name":"f"}},` + tools + user + `}`, "cohere does not support a tool_choice naming a function", true},
		{"allowed tools", `{"tool_choice":{"type":"allowed_tools"},` + tools + user + `}`, "cohere does not support this tool_choice", true},
		{"odd tool_choice", `{"tool_choice":"any",` + tools + user + `}`, `cohere does not support tool_choice "any"`, true},
		{"custom tool", `{"tools":[{"type":"custom","custom":{"name":"x"}}],` + user + `}`, `cohere does not support tools of type "custom"`, false},
		{"response format", `{"response_format":{"type":"grammar"},` + user + `}`, `cohere does not support response_format "grammar"`, false},
		{"schema missing", `{"response_format":{"type":"json_schema","json_schema":{"name":"x"}},` + user + `}`, "cohere: response_format json_schema needs json_schema.schema", false},
		{"function role", `{"messages":[{"role":"function","name":"f","content":"x"}]}`, "cohere does not support the deprecated function role", false},
		{"input_audio", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}]}`, "cohere does not support audio input", false},
		{"file", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "cohere does not support file content parts", false},
		{"ftp image", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "an image_url must be an http(s) URL or a base64 data URL", false},
		{"image in system", `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},{"role":"user","content":"Hi"}]}`, "a system message may hold only text", false},
		{"image in tool", `{"messages":[{"role":"tool","tool_call_id":"c","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "images are allowed only in user messages", false},
		{"tool without id", `{"messages":[{"role":"tool","content":"x"}]}`, "a tool message needs tool_call_id", false},
		{"call without name", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0]: the call names no function", false},
		{"only system", `{"messages":[{"role":"system","content":"Be nice."}]}`, "at least one user, assistant or tool message", false},
		{"wrong type", `{"messages":"Hi"}`, "does not fit the chat completions schema", false},
		{"unknown role", `{"messages":[{"role":"robot","content":"Hi"}]}`, `unknown role "robot"`, false},
	}
	co := New(nil).(*Cohere)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chatBody([]byte(tt.body), "m", false, 0)
			if e := providers.AsError(err); e == nil || e.Status != 400 || e.Retryable() || !strings.Contains(e.Message, tt.want) {
				t.Errorf("translation: got %v, want a 400 *Error containing %q", err, tt.want)
			}
			err = co.Validate(&providers.Request{Op: llm.OpChat, Body: []byte(tt.body)})
			if e := providers.AsError(err); tt.validate && (e == nil || e.Status != 400 || !strings.Contains(e.Message, tt.want)) ||
				!tt.validate && err != nil {
				t.Errorf("Validate: got %v, want refused %v", err, tt.validate)
			}
		})
	}
	if err := co.Validate(&providers.Request{Op: llm.OpEmbeddings, Body: []byte(`{"n":3}`)}); err != nil {
		t.Errorf("Validate of embeddings: %v (the capability check answers those)", err)
	}
}

// TestCohereResponseGolden translates each answer in
// testdata/cohere/responses/*.in.json and compares the OpenAI answer and
// Usage with the matching .out.json.
func TestCohereResponseGolden(t *testing.T) {
	ins, _ := filepath.Glob(filepath.Join(testdata, "responses", "*.in.json"))
	if len(ins) < 8 {
		t.Fatalf("found %d response cases", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, usage, err := answer(body, 1700000000, "command-a-03-2025", codectest.TestKey)
			if err != nil {
				t.Fatal(err)
			}
			record, err := providers.MarshalJSON(struct {
				Answer       json.RawMessage `json:"answer"`
				Usage        llm.Usage       `json:"usage"`
				UsagePresent bool            `json:"usage_present"`
			}{out, usage, usage.Present})
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, filepath.Join(testdata, "responses", name+".out.json"), codectest.IndentJSON(t, record))
		})
	}
}

func TestCohereAnswerInvalid(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"error with 200", `{"id":"x","message":"invalid request: boom, key sk-abcdefghijklmnop"}`, 502, "invalid request: boom, key [REDACTED]"},
		{"finish ERROR", `{"id":"x","finish_reason":"ERROR","message":{"role":"assistant","content":[]}}`, 502, "cohere: the generation failed"},
		{"html", `<html>502</html>`, 502, providers.ErrInvalidResponse},
		{"truncated", `{"id":"x","message":{"content":[`, 502, providers.ErrInvalidResponse},
		{"content not array", `{"id":"x","message":{"content":"hi"}}`, 502, providers.ErrInvalidResponse},
		{"no message", `{"id":"x"}`, 502, providers.ErrInvalidResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := answer([]byte(tt.body), 0, "m", codectest.TestKey)
			if e := providers.AsError(err); e == nil || e.Status != tt.status || e.Message != tt.want || !e.Retryable() {
				t.Errorf("got %v, want retryable *Error %d %q", err, tt.status, tt.want)
			}
		})
	}
}

// streamCases are the stream goldens: an SSE file and whether the
// client asked for usage, translated into testdata/cohere/streams/<name>.out.
var streamCases = []struct {
	name, sse string
	wantUsage bool
}{
	{"text", "text.sse", false},
	{"text_usage", "text.sse", true},
	{"tool_calls", "tool_calls.sse", true},
	{"error_end", "error_end.sse", true},
	{"error_object", "error_object.sse", true},
	{"missing_end", "missing_end.sse", true},
	{"crlf_unknown_events", "crlf_unknown_events.sse", true},
}

// translateCohereStream runs the translator over data and records every
// chunk, how the stream ended and the usage, one line each.
func translateCohereStream(t *testing.T, data []byte, wantUsage bool) []byte {
	t.Helper()
	var tr translator
	tr.init(bytes.NewReader(data), &fastjson.Parser{}, streamContext{created: 1700000000,
		model: "command-a-03-2025", wantUsage: wantUsage, key: codectest.TestKey})
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

func TestCohereStreamGolden(t *testing.T) {
	for _, tt := range streamCases {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testdata, "streams", tt.sse))
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, filepath.Join(testdata, "streams", tt.name+".out"), translateCohereStream(t, data, tt.wantUsage))
		})
	}
}

func TestCohereStreamTooManyToolCalls(t *testing.T) {
	var sb strings.Builder
	for i := range maxCohereToolCalls + 1 {
		fmt.Fprintf(&sb, "data: {\"type\":\"tool-call-start\",\"index\":%d,\"delta\":{\"message\":{\"tool_calls\":{\"id\":\"t\",\"function\":{\"name\":\"f\"}}}}}\n\n", i)
	}
	var tr translator
	tr.init(strings.NewReader(sb.String()), &fastjson.Parser{}, streamContext{})
	n := 0
	for {
		_, err := tr.Next()
		if err != nil {
			if e := providers.AsError(err); e == nil || e.Status != 502 || n != maxCohereToolCalls {
				t.Errorf("after %d chunks: %v", n, err)
			}
			return
		}
		n++
	}
}

// TestCohereEmbedGolden translates each /v2/embed answer in
// testdata/cohere/embed/*.in.json, as floats and as base64.
func TestCohereEmbedGolden(t *testing.T) {
	ins, _ := filepath.Glob(filepath.Join(testdata, "embed", "*.in.json"))
	if len(ins) < 2 {
		t.Fatalf("found %d embed cases", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var n struct {
				Embeddings struct {
					Float []json.RawMessage `json:"float"`
				} `json:"embeddings"`
			}
			if err := json.Unmarshal(body, &n); err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, b64 := range []bool{false, true} {
				resp, err := embedAnswer(body, len(n.Embeddings.Float), "embed-v4.0", b64)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, codectest.IndentJSON(t, resp.Body)...)
				got = fmt.Appendf(got, "\nusage: %+v\n", resp.Usage)
			}
			codectest.Golden(t, filepath.Join(testdata, "embed", name+".out"), got)
		})
	}
	for _, body := range []string{`{"embeddings":{"float":[[1]]}}`, `{"embeddings":{"float":[{"a":1}]}}`, `{"message":"x"}`, `[]`} {
		if _, err := embedAnswer([]byte(body), 2, "m", false); providers.AsError(err) == nil || providers.AsError(err).Status != 502 {
			t.Errorf("%s: got %v, want a 502", body, err)
		}
	}
}

func TestCohereBaseURL(t *testing.T) {
	for _, tt := range []struct{ base, want string }{
		{"", "https://api.cohere.com"},
		{"https://api.cohere.com/", "https://api.cohere.com"},
		{"https://api.cohere.com/v2", "https://api.cohere.com"},
		{"https://api.cohere.ai/v1/", "https://api.cohere.ai"},
		{"https://proxy.example/cohere", "https://proxy.example/cohere"},
	} {
		hr := httpRequest(&providers.Request{Cred: providers.Credential{BaseURL: tt.base, Key: codectest.TestKey}}, "v2/chat", nil)
		if hr.BaseURL != tt.want || hr.Path != "v2/chat" || hr.KeyHeader != "" || hr.Key != codectest.TestKey {
			t.Errorf("%q: got %+v", tt.base, hr)
		}
	}
}

func against(t *testing.T, m *providertest.Server, body string) (*Cohere, *providers.Request) {
	t.Helper()
	co := New(codectest.NewTestClient(t, providers.ClientConfig{})).(*Cohere)
	co.now = func() time.Time { return time.Unix(1700000000, 0) }
	req := codectest.ChatRequest(m.URL(), body)
	req.Model = "command-a-03-2025"
	return co, req
}

func TestCohereMockChat(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	co, req := against(t, m, `{"model":"x","messages":[{"role":"user","content":"Hi there"},{"role":"system","content":"Be brief."}],"top_p":0.5}`)
	resp, err := co.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"mock-1","object":"chat.completion","created":1700000000,"model":"command-a-03-2025","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from mock: Hi there","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":0}}}`
	if diff := cmp.Diff(want, string(resp.Body)); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if u := resp.Usage; u != (llm.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9, Present: true}) {
		t.Errorf("usage %+v", u)
	}
	rec := m.Requests()[0]
	if rec.Path != "/v2/chat" || rec.Header.Get("Authorization") != "Bearer "+string(codectest.TestKey) {
		t.Errorf("upstream request: %s %v", rec.Path, rec.Header)
	}
	if !bytes.Contains(rec.Body, []byte(`"messages":[{"role":"system","content":"Be brief."},{"role":"user"`)) ||
		!bytes.Contains(rec.Body, []byte(`"p":0.5`)) {
		t.Errorf("upstream body: %s", rec.Body)
	}
}

func TestCohereMockTools(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	body := `{"model":"x","tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}],"tool_choice":"required","messages":[{"role":"user","content":"cats"}]}`
	co, req := against(t, m, body)
	resp, err := co.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got providers.OpenAIChatCompletion
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	want := []providers.OpenAIToolCall{{ID: "search_mock_1", Type: "function", Function: providers.OpenAIFunctionCall{Name: "search", Arguments: `{"text":"cats"}`}}}
	if diff := cmp.Diff(want, c.Message.ToolCalls); diff != "" || c.Message.Content == nil ||
		*c.Message.Content != "I will call search." || c.FinishReason != "tool_calls" {
		t.Errorf("tool calls (-want +got):\n%s\ncontent %v, finish %q", diff, c.Message.Content, c.FinishReason)
	}
	if !bytes.Contains(m.Requests()[0].Body, []byte(`"tool_choice":"REQUIRED"`)) {
		t.Errorf("upstream body: %s", m.Requests()[0].Body)
	}

	// Streamed: the plan is content, the argument pieces add up.
	req.Stream = true
	s, err := co.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := codectest.ReadChunks(s)
	if err != io.EOF {
		t.Fatal(err)
	}
	var content, args, id, name, finish string
	for _, c := range chunks {
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   string                     `json:"content"`
					ToolCalls []providers.OpenAIToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(c), &ch); err != nil {
			t.Fatal(err)
		}
		for _, ch := range ch.Choices {
			content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
				id += tc.ID
				name += tc.Function.Name
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if content != "I will call search." || args != `{"text":"cats"}` || id != "search_mock_1" || name != "search" || finish != "tool_calls" {
		t.Errorf("streamed content %q, arguments %q, id %q, name %q, finish %q", content, args, id, name, finish)
	}
}

func TestCohereMockStream(t *testing.T) {
	for _, wantUsage := range []bool{false, true} {
		t.Run(fmt.Sprint("usage=", wantUsage), func(t *testing.T) {
			codectest.MockLeakCheck(t)
			m := codectest.StartMock(t)
			co, req := against(t, m, `{"model":"x","stream":true,"messages":[{"role":"user","content":"Hi there"}]}`)
			req.Stream, req.ClientWantsUsage = true, wantUsage
			s, err := co.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			chunks, err := codectest.ReadChunks(s)
			if err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
			head := `{"id":"mock-1","object":"chat.completion.chunk","created":1700000000,"model":"command-a-03-2025",`
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

func TestCohereMockEmbed(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	co, _ := against(t, m, "")
	for _, tt := range []struct {
		name, body string
		base64     bool
		texts      []string
		tokens     int64
	}{
		{"string", `{"model":"x","input":"hello world"}`, false, []string{"hello world"}, 2},
		{"array base64", `{"model":"x","input":["a b","c"],"encoding_format":"base64","dimensions":256}`, true, []string{"a b", "c"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := &providers.Request{Op: llm.OpEmbeddings, Model: "embed-v4.0", Body: []byte(tt.body),
				Cred: providers.Credential{Key: codectest.TestKey, BaseURL: m.URL()}, Deadline: time.Now().Add(10 * time.Second)}
			resp, err := co.Embed(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Object string `json:"object"`
				Data   []struct {
					Object    string          `json:"object"`
					Index     int             `json:"index"`
					Embedding json.RawMessage `json:"embedding"`
				} `json:"data"`
				Model string `json:"model"`
				Usage struct {
					PromptTokens int64 `json:"prompt_tokens"`
					TotalTokens  int64 `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Object != "list" || len(got.Data) != len(tt.texts) || got.Model != "embed-v4.0" || got.Usage.PromptTokens != tt.tokens ||
				resp.Usage != (llm.Usage{PromptTokens: tt.tokens, TotalTokens: tt.tokens, Present: true}) {
				t.Fatalf("answer %s, usage %+v", resp.Body, resp.Usage)
			}
			for i, d := range got.Data {
				if d.Object != "embedding" || d.Index != i || (d.Embedding[0] == '"') != tt.base64 {
					t.Errorf("data[%d] = %s %d %s", i, d.Object, d.Index, d.Embedding)
				}
			}
			rec := m.Requests()[len(m.Requests())-1]
			var sent embedRequest
			if err := json.Unmarshal(rec.Body, &sent); err != nil || rec.Path != "/v2/embed" ||
				!cmp.Equal(sent.Texts, tt.texts) || sent.InputType != "search_document" || !cmp.Equal(sent.EmbeddingTypes, []string{"float"}) {
				t.Errorf("upstream request %s %s", rec.Path, rec.Body)
			}
		})
	}
	for _, tt := range []struct{ body, want string }{
		{`{"input":[1,2,3]}`, "cohere does not support token arrays"},
		{`{"input":[[1],[2]]}`, "cohere does not support token arrays"},
		{`{"input":[]}`, "cohere: input must not be empty"},
		{`{"input":5}`, "cohere: input must be a string or an array of strings"},
		{`{"input":"x","encoding_format":"int8"}`, `cohere does not support encoding_format "int8"`},
		{`{"input":[` + strings.Repeat(`"x",`, maxTexts) + `"x"]}`, "at most 96 inputs"},
	} {
		req := &providers.Request{Op: llm.OpEmbeddings, Model: "m", Body: []byte(tt.body), Cred: providers.Credential{Key: codectest.TestKey, BaseURL: m.URL()}}
		if _, err := co.Embed(context.Background(), req); providers.AsError(err) == nil || providers.AsError(err).Status != 400 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want 400 ~%q", tt.body, err, tt.want)
		}
	}
}

func TestCohereMockErrors(t *testing.T) {
	tests := []struct {
		name      string
		step      providertest.Step
		noKey     bool
		stream    bool
		embed     bool
		status    int
		retryable bool
		retry     time.Duration
		msg       string
	}{
		{name: "429", step: providertest.Step{Status: 429, RetryAfter: "2"}, status: 429, retryable: true, retry: 2 * time.Second, msg: "Trial key"},
		{name: "429 stream", step: providertest.Step{Status: 429, RetryAfter: "3"}, stream: true, status: 429, retryable: true, retry: 3 * time.Second, msg: "Trial key"},
		{name: "429 embed", step: providertest.Step{Status: 429, RetryAfter: "1"}, embed: true, status: 429, retryable: true, retry: time.Second, msg: "Trial key"},
		{name: "500", step: providertest.Step{Status: 500}, status: 500, retryable: true, msg: "internal server error"},
		{name: "500 embed", step: providertest.Step{Status: 500}, embed: true, status: 500, retryable: true, msg: "internal server error"},
		{name: "400", step: providertest.Step{Status: 400}, status: 400, msg: "invalid request"},
		{name: "404 stream", step: providertest.Step{Status: 404}, stream: true, status: 404, msg: "model not found"},
		{name: "498", step: providertest.Step{Status: 498}, status: 401, msg: "(cohere status 498)"},
		{name: "499", step: providertest.Step{Status: 499}, status: 503, retryable: true, msg: "(cohere status 499)"},
		{name: "no key", noKey: true, status: 401, msg: "no api key supplied"},
		{name: "json instead of stream", step: providertest.Step{Body: `{"message":"not streaming today"}`}, stream: true, status: 502, retryable: true, msg: "not streaming today"},
		{name: "reset", step: providertest.Step{ResetAfter: 1}, stream: true, status: 0, retryable: true, msg: "the stream ended before message-end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.MockLeakCheck(t)
			m := codectest.StartMock(t)
			m.Script(tt.step)
			co, req := against(t, m, `{"model":"x","messages":[{"role":"user","content":"Hi"}]}`)
			if tt.noKey {
				req.Cred.Key = ""
			}
			var err error
			switch {
			case tt.embed:
				req.Op, req.Body = llm.OpEmbeddings, []byte(`{"input":"Hi"}`)
				_, err = co.Embed(context.Background(), req)
			case tt.stream:
				req.Stream = true
				var s providers.Stream
				if s, err = co.ChatStream(context.Background(), req); err == nil {
					_, err = codectest.ReadChunks(s)
					s.Close()
				}
			default:
				_, err = co.Chat(context.Background(), req)
			}
			e := providers.AsError(err)
			if e == nil || e.Status != tt.status || e.Retryable() != tt.retryable || e.RetryAfter != tt.retry || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %#v, want status %d retryable %v retry-after %v message ~%q", err, tt.status, tt.retryable, tt.retry, tt.msg)
			}
			if want := tt.status == 401; e.KeyRejected != want {
				t.Errorf("KeyRejected %v, want %v", e.KeyRejected, want)
			}
			if strings.Contains(e.Error(), string(codectest.TestKey)) {
				t.Errorf("the key leaked: %v", e)
			}
		})
	}
}

func TestCohereStreamCloseEarly(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	co, req := against(t, m, `{"model":"x","messages":[{"role":"user","content":"Hi"}]}`)
	req.Model = "command-a@chunks=50@delay=5ms"
	req.Stream = true
	s, err := co.ChatStream(context.Background(), req)
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

// FuzzCohereStream feeds the stream translator, and the answer and
// embeddings translations, arbitrary bytes: no panic, every chunk and
// answer valid JSON, usage never negative, and every failure an *Error
// with a short, key-free message.
func FuzzCohereStream(f *testing.F) {
	f.Add([]byte("event: message-start\ndata: {\"type\":\"message-start\",\"id\":\"x\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, wantUsage := range []bool{false, true} {
			var tr translator
			tr.init(bytes.NewReader(data), &fastjson.Parser{}, streamContext{model: "m", wantUsage: wantUsage, key: codectest.TestKey})
			for range 10000 {
				c, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					checkCohereError(t, err)
					if _, again := tr.Next(); again != err {
						t.Fatalf("error not sticky: %v then %v", err, again)
					}
					break
				}
				if !json.Valid(c) || c[0] != '{' {
					t.Fatalf("invalid chunk %q", c)
				}
			}
			if u := tr.usage; u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 {
				t.Fatalf("negative usage %+v", u)
			}
		}
		out, u, err := answer(data, 0, "m", codectest.TestKey)
		if err != nil {
			checkCohereError(t, err)
		} else if !json.Valid(out) || u.PromptTokens < 0 || u.CompletionTokens < 0 {
			t.Fatalf("invalid answer %q, usage %+v", out, u)
		}
		if resp, err := embedAnswer(data, 1, "m", true); err != nil {
			checkCohereError(t, err)
		} else if !json.Valid(resp.Body) || resp.Usage.PromptTokens < 0 {
			t.Fatalf("invalid embeddings %q", resp.Body)
		}
	})
}

func checkCohereError(t *testing.T, err error) {
	t.Helper()
	e := providers.AsError(err)
	if e == nil || len(e.Message) > providers.MaxMessage+len("cohere: the generation failed: ") || strings.Contains(e.Error(), "0123456789") {
		t.Fatalf("bad error %#v", err)
	}
}

func TestFuzzCohereStreamSeeds(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzCohereStream"))
	if err != nil || len(entries) < 5 {
		t.Fatalf("seed corpus: %d entries, %v", len(entries), err)
	}
}

// BenchmarkCohereStream translates a 20-delta text stream.
func BenchmarkCohereStream(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("event: message-start\ndata: {\"id\":\"c1\",\"type\":\"message-start\",\"delta\":{\"message\":{\"role\":\"assistant\",\"content\":[]}}}\n\n")
	for range 20 {
		sb.WriteString("event: content-delta\ndata: {\"type\":\"content-delta\",\"index\":0,\"delta\":{\"message\":{\"content\":{\"text\":\"Hello there\"}}}}\n\n")
	}
	sb.WriteString("event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{\"finish_reason\":\"COMPLETE\",\"usage\":{\"tokens\":{\"input_tokens\":25,\"output_tokens\":40}}}}\n\n")
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
