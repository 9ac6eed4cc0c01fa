package providertest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

const testKey = "sk-test-123"

func start(t *testing.T) *Server {
	t.Helper()
	s, url, err := Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if url != s.URL() || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("Start returned URL %q, URL() %q", url, s.URL())
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// post sends body to path with the test key (none when key is "").
func post(t *testing.T, s *Server, path, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

type errorResponse struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestChat(t *testing.T) {
	s := start(t)
	long := strings.Repeat("abcd ", 30) // 150 characters, 30 words
	tests := []struct {
		name, body                 string
		wantContent                string
		wantPrompt, wantCompletion int
	}{{
		name:           "string content",
		body:           `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are helpful"},{"role":"user","content":"Say hi to me"}]}`,
		wantContent:    "Hello from mock: Say hi to me",
		wantPrompt:     3 + 4,
		wantCompletion: 3 + 4,
	}, {
		name: "last user message, parts, escapes",
		body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"first question"},{"role":"assistant","content":null},` +
			`{"role":"user","content":[{"type":"text","text":"tell \"me\""},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"now"}]}]}`,
		wantContent:    `Hello from mock: tell "me" now`,
		wantPrompt:     2 + 3,
		wantCompletion: 3 + 3,
	}, {
		name:           "truncated to 100 characters",
		body:           `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + long + `"}]}`,
		wantContent:    "Hello from mock: " + long[:100],
		wantPrompt:     30,
		wantCompletion: 3 + 20,
	}, {
		name:           "no words counts 1 prompt token",
		body:           `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"   "}]}`,
		wantContent:    "Hello from mock:    ",
		wantPrompt:     1,
		wantCompletion: 3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, s, "/v1/chat/completions", testKey, tt.body)
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			got := decode[chatResponse](t, body)
			if !strings.HasPrefix(got.ID, "chatcmpl-mock-") || got.Object != "chat.completion" || got.Model != "gpt-4o-mini" || got.Created == 0 {
				t.Errorf("head: id %q object %q model %q created %d", got.ID, got.Object, got.Model, got.Created)
			}
			if len(got.Choices) != 1 {
				t.Fatalf("got %d choices, want 1: %s", len(got.Choices), body)
			}
			c := got.Choices[0]
			if c.Message.Role != "assistant" || c.Message.Content != tt.wantContent || c.FinishReason == nil || *c.FinishReason != "stop" {
				t.Errorf("choice: role %q content %q finish %v; want assistant %q stop", c.Message.Role, c.Message.Content, c.FinishReason, tt.wantContent)
			}
			want := &usage{PromptTokens: tt.wantPrompt, CompletionTokens: tt.wantCompletion, TotalTokens: tt.wantPrompt + tt.wantCompletion,
				PromptTokensDetails: &struct {
					CachedTokens int `json:"cached_tokens"`
				}{}}
			if diff := cmp.Diff(want, got.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	s := start(t)
	const chat = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		path, body string
		want       int
	}{
		{"/v1/chat/completions", chat, 200},
		{"/chat/completions", chat, 200},
		{"/v1/completions", `{"model":"m","prompt":"hi"}`, 200},
		{"/completions", `{"model":"m","prompt":"hi"}`, 200},
		{"/v1/embeddings", `{"model":"m","input":"hi"}`, 200},
		{"/embeddings", `{"model":"m","input":"hi"}`, 200},
		{"/v1/nope", chat, 404},
	} {
		resp := post(t, s, tt.path, testKey, tt.body)
		body := readAll(t, resp)
		if resp.StatusCode != tt.want {
			t.Errorf("POST %s: status %d, want %d: %s", tt.path, resp.StatusCode, tt.want, body)
		}
	}
	resp, err := http.Get(s.URL() + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

func TestAuthAndBadRequests(t *testing.T) {
	s := start(t)
	const chat = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, auth, body string
		want             int
		wantType         string
	}{
		{"no key", "", chat, 401, "invalid_request_error"},
		{"basic auth", "Basic dXNlcjpwYXNz", chat, 401, "invalid_request_error"},
		{"empty bearer", "Bearer  ", chat, 401, "invalid_request_error"},
		{"invalid JSON", "Bearer k", `{"model":`, 400, "invalid_request_error"},
		{"no model", "Bearer k", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error"},
		{"no messages", "Bearer k", `{"model":"m","messages":[]}`, 400, "invalid_request_error"},
		{"bad directive", "Bearer k", `{"model":"m@chunks=x","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error"},
		{"unknown directive", "Bearer k", `{"model":"m@colour=red","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := readAll(t, resp)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
			e := decode[errorResponse](t, body)
			if e.Error.Message == "" || e.Error.Type != tt.wantType {
				t.Errorf("error %s: want a message and type %q", body, tt.wantType)
			}
		})
	}
}

// sseEvent is one data line of a stream and when it arrived.
type sseEvent struct {
	data string
	at   time.Duration
}

// readSSE reads a stream line by line as it arrives, returning its data
// events with their arrival times and the read error that ended it (nil
// at a clean end).
func readSSE(t *testing.T, resp *http.Response, start time.Time) ([]sseEvent, error) {
	t.Helper()
	var events []sseEvent
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok && strings.HasSuffix(line, "\n") {
			events = append(events, sseEvent{data: data, at: time.Since(start)})
		}
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return events, err
		}
	}
}

// contents returns the delta contents (or texts) of the content chunks.
func contents(t *testing.T, events []sseEvent) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		if e.data == "[DONE]" {
			continue
		}
		c := decode[chatResponse](t, []byte(e.data))
		if len(c.Choices) == 0 || c.Choices[0].FinishReason != nil || c.Choices[0].Delta.Role != "" {
			continue
		}
		if c.Choices[0].Delta.Content != nil {
			out = append(out, *c.Choices[0].Delta.Content)
		} else {
			out = append(out, c.Choices[0].Text)
		}
	}
	return out
}

func TestStreamChunksArriveSeparately(t *testing.T) {
	s := start(t)
	const delay = 60 * time.Millisecond
	s.Script(Step{ChunkDelay: delay, Chunks: 3})
	t0 := time.Now()
	resp := post(t, s, "/v1/chat/completions", testKey,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"one two three four"}]}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	events, err := readSSE(t, resp, t0)
	if err != nil {
		t.Fatal(err)
	}
	// role, 3 content, finish, [DONE]
	if len(events) != 6 {
		t.Fatalf("got %d events, want 6: %v", len(events), events)
	}
	if events[0].at > delay/2 {
		t.Errorf("role chunk arrived after %v, want at once", events[0].at)
	}
	for i := 1; i <= 3; i++ {
		if gap := events[i].at - events[i-1].at; gap < delay*3/4 {
			t.Errorf("content chunk %d arrived %v after the previous event, want about %v", i, gap, delay)
		}
	}
	if got := strings.Join(contents(t, events), ""); got != "Hello from mock: one two three four" {
		t.Errorf("content %q", got)
	}
	first := decode[chatResponse](t, []byte(events[0].data))
	if first.Object != "chat.completion.chunk" || first.Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %s, want the role", events[0].data)
	}
	fin := decode[chatResponse](t, []byte(events[4].data))
	if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
		t.Errorf("finish chunk %s", events[4].data)
	}
	if events[5].data != "[DONE]" {
		t.Errorf("last event %q, want [DONE]", events[5].data)
	}
}

func TestStreamUsage(t *testing.T) {
	s := start(t)
	for _, tt := range []struct {
		name, path, body string
		noUsage          bool
		wantUsage        bool
	}{
		{"chat include_usage", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b"}]}`, false, true},
		{"chat no include_usage", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"a b"}]}`, false, false},
		{"chat include_usage but NoUsage", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b"}]}`, true, false},
		{"completion include_usage", "/v1/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"prompt":"a b"}`, false, true},
		{"completion no include_usage", "/completions", `{"model":"m","stream":true,"prompt":"a b"}`, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.Script(Step{Chunks: 5, NoUsage: tt.noUsage})
			events, err := readSSE(t, post(t, s, tt.path, testKey, tt.body), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got := contents(t, events); len(got) != 5 || strings.Join(got, "") != "Hello from mock: a b" {
				t.Errorf("contents %q, want 5 pieces of the answer", got)
			}
			if events[len(events)-1].data != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", events[len(events)-1].data)
			}
			var usages []*usage
			for _, e := range events[:len(events)-1] {
				c := decode[chatResponse](t, []byte(e.data))
				if c.Usage != nil {
					if len(c.Choices) != 0 {
						t.Errorf("usage chunk with choices: %s", e.data)
					}
					usages = append(usages, c.Usage)
				}
			}
			if !tt.wantUsage {
				if len(usages) != 0 {
					t.Errorf("got usage chunks %v, want none", usages)
				}
				return
			}
			if len(usages) != 1 {
				t.Fatalf("got %d usage chunks, want 1", len(usages))
			}
			if u := usages[0]; u.PromptTokens != 2 || u.CompletionTokens != 5 || u.TotalTokens != 7 {
				t.Errorf("usage %+v, want 2+5=7", u)
			}
			if last := decode[chatResponse](t, []byte(events[len(events)-2].data)); last.Usage == nil {
				t.Errorf("the usage chunk is not the last before [DONE]")
			}
		})
	}
}

func TestResetAfter(t *testing.T) {
	s := start(t)
	s.Script(Step{Chunks: 4, ResetAfter: 2})
	events, err := readSSE(t, post(t, s, "/v1/chat/completions", testKey,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b c d"}]}`), time.Now())
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error %v, want unexpected EOF", err)
	}
	if got := contents(t, events); len(got) != 2 {
		t.Errorf("got %d content chunks %q, want 2", len(got), got)
	}
	for _, e := range events {
		if e.data == "[DONE]" {
			t.Error("stream sent [DONE] before the reset")
		}
	}

	// Not streamed: the connection closes without a response.
	s.Script(Step{ResetAfter: 1})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("got status %d, want a connection error", resp.StatusCode)
	}

	// The mock keeps serving afterwards.
	if resp := post(t, s, "/v1/chat/completions", testKey, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Errorf("after resets: status %d, want 200", resp.StatusCode)
	}
}

func TestScript(t *testing.T) {
	s := start(t)
	s.Script(
		Step{Status: 503, Times: 2},
		Step{Status: 429, RetryAfter: "7"},
		Step{Status: 502, Body: "<html>bad gateway</html>"},
		Step{Body: `{"custom":true}`},
	)
	type result struct {
		Status      int
		RetryAfter  string
		ContentType string
		Body        string
	}
	var got []result
	for range 6 {
		resp := post(t, s, "/v1/chat/completions", testKey, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		body := readAll(t, resp)
		r := result{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), ContentType: resp.Header.Get("Content-Type")}
		switch {
		case resp.StatusCode >= 400 && r.ContentType == "application/json":
			e := decode[errorResponse](t, body)
			r.Body = e.Error.Type
		case resp.StatusCode == 200 && strings.Contains(string(body), "chat.completion"):
			r.Body = "default"
		default:
			r.Body = string(body)
		}
		got = append(got, r)
	}
	want := []result{
		{503, "", "application/json", "server_error"},
		{503, "", "application/json", "server_error"},
		{429, "7", "application/json", "requests"},
		{502, "", "text/html; charset=utf-8", "<html>bad gateway</html>"},
		{200, "", "application/json", `{"custom":true}`},
		{200, "", "application/json", "default"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	if n := s.Count(); n != 6 {
		t.Errorf("Count %d, want 6", n)
	}
}

func TestLatency(t *testing.T) {
	s := start(t)
	const latency = 80 * time.Millisecond
	for _, tt := range []struct {
		name, model string
		step        Step
	}{
		{"step", "m", Step{Latency: latency}},
		{"directive", "m@latency=80ms", Step{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.Script(tt.step)
			t0 := time.Now()
			resp := post(t, s, "/v1/chat/completions", testKey, `{"model":"`+tt.model+`","messages":[{"role":"user","content":"hi"}]}`)
			if took := time.Since(t0); took < latency {
				t.Errorf("answered after %v, want at least %v", took, latency)
			}
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
}

func TestDirectives(t *testing.T) {
	for _, tt := range []struct {
		in, model string
		want      Step
		wantErr   bool
	}{
		{in: "gpt-4o-mini", model: "gpt-4o-mini"},
		{in: "gpt-4o-mini@chunks=5@delay=50ms", model: "gpt-4o-mini", want: Step{Chunks: 5, ChunkDelay: 50 * time.Millisecond}},
		{in: "m@latency=5ms@status=503@reset=2", model: "m", want: Step{Latency: 5 * time.Millisecond, Status: 503, ResetAfter: 2}},
		{in: "m@chunks=0", wantErr: true},
		{in: "m@chunks=-1", wantErr: true},
		{in: "m@delay=fast", wantErr: true},
		{in: "m@status=999", wantErr: true},
		{in: "m@status", wantErr: true},
		{in: "m@", wantErr: true},
		{in: "m@temperature=1", wantErr: true},
		{in: "m@cache_read=10@cache_write=20@cache_write_1h=5@reasoning=7", model: "m",
			want: Step{Detail: UsageDetail{CacheRead: 10, CacheWrite: 20, CacheWrite1h: 5, Reasoning: 7}}},
		{in: "m@cache_write_1h=9", model: "m"}, // more one-hour writes than writes: capped
		{in: "m@reasoning=-1", wantErr: true},
		{in: "m@cache_read=x", wantErr: true},
	} {
		model, d, err := parseModel(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseModel(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		var got Step
		d.apply(&got)
		if model != tt.model || got != tt.want {
			t.Errorf("parseModel(%q) = %q %+v, want %q %+v", tt.in, model, got, tt.model, tt.want)
		}
	}

	// A directive overrides the scripted step and is not echoed back.
	s := start(t)
	s.Script(Step{Chunks: 2})
	events, err := readSSE(t, post(t, s, "/v1/chat/completions", testKey,
		`{"model":"gpt-4o-mini@chunks=5@delay=1ms","stream":true,"messages":[{"role":"user","content":"hi"}]}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(t, events); len(got) != 5 {
		t.Errorf("got %d content chunks, want 5", len(got))
	}
	if m := decode[chatResponse](t, []byte(events[0].data)).Model; m != "gpt-4o-mini" {
		t.Errorf("model %q, want gpt-4o-mini", m)
	}
	resp := post(t, s, "/v1/chat/completions", testKey, `{"model":"m@status=503","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 503 {
		t.Errorf("@status=503: status %d", resp.StatusCode)
	}
}

func TestCompletions(t *testing.T) {
	s := start(t)
	body := readAll(t, post(t, s, "/v1/completions", testKey, `{"model":"m","prompt":["first one","say this"]}`))
	got := decode[chatResponse](t, body)
	if got.Object != "text_completion" || !strings.HasPrefix(got.ID, "cmpl-mock-") || len(got.Choices) != 1 || got.Choices[0].Text != "Hello from mock: say this" {
		t.Errorf("completion %s", body)
	}
	if u := got.Usage; u == nil || u.PromptTokens != 4 || u.CompletionTokens != 5 || u.TotalTokens != 9 {
		t.Errorf("usage %+v, want 4+5=9", u)
	}
	body = readAll(t, post(t, s, "/v1/completions", testKey, `{"model":"m","prompt":[1,2,3]}`))
	if u := decode[chatResponse](t, body).Usage; u == nil || u.PromptTokens != 3 {
		t.Errorf("token prompt usage %+v, want 3 prompt tokens", u)
	}
}

func TestEmbeddings(t *testing.T) {
	s := start(t)
	type embeddingResponse struct {
		Object string `json:"object"`
		Data   []struct {
			Object    string          `json:"object"`
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	}
	get := func(body string) embeddingResponse {
		t.Helper()
		resp := post(t, s, "/v1/embeddings", testKey, body)
		b := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		return decode[embeddingResponse](t, b)
	}
	floats := func(raw json.RawMessage) []float32 {
		t.Helper()
		return decode[[]float32](t, raw)
	}

	one := get(`{"model":"text-embedding-3-small","input":"hello world"}`)
	if one.Object != "list" || one.Model != "text-embedding-3-small" || len(one.Data) != 1 || one.Data[0].Object != "embedding" {
		t.Fatalf("response %+v", one)
	}
	if one.Usage != (usage{PromptTokens: 2, TotalTokens: 2}) {
		t.Errorf("usage %+v, want 2 prompt tokens", one.Usage)
	}
	vec := floats(one.Data[0].Embedding)
	var norm float64
	for _, f := range vec {
		norm += float64(f) * float64(f)
	}
	if len(vec) != 8 || math.Abs(norm-1) > 1e-4 {
		t.Errorf("vector %v: want 8 numbers of length 1", vec)
	}

	many := get(`{"model":"e","input":["a b c","hello world","x"]}`)
	if len(many.Data) != 3 || many.Usage.PromptTokens != 6 {
		t.Fatalf("batch: %d vectors, usage %+v", len(many.Data), many.Usage)
	}
	for i, d := range many.Data {
		if d.Index != i {
			t.Errorf("data[%d].index = %d", i, d.Index)
		}
	}
	if diff := cmp.Diff(vec, floats(many.Data[1].Embedding)); diff != "" {
		t.Errorf("the same text got another vector (-first +batch):\n%s", diff)
	}
	if cmp.Equal(vec, floats(many.Data[0].Embedding)) {
		t.Error("different texts got the same vector")
	}

	b64 := get(`{"model":"e","input":"hello world","encoding_format":"base64"}`)
	raw, err := base64.StdEncoding.DecodeString(decode[string](t, b64.Data[0].Embedding))
	if err != nil || len(raw) != 32 {
		t.Fatalf("base64 embedding: %v, %d bytes", err, len(raw))
	}
	for i := range 8 {
		if f := math.Float32frombits(binary.LittleEndian.Uint32(raw[i*4:])); f != vec[i] {
			t.Errorf("base64 [%d] = %v, float [%d] = %v", i, f, i, vec[i])
		}
	}

	resp := post(t, s, "/v1/embeddings", testKey, `{"model":"e","input":{"x":1}}`)
	if resp.StatusCode != 400 {
		t.Errorf("object input: status %d, want 400", resp.StatusCode)
	}
}

func TestRequestsRecorded(t *testing.T) {
	s := start(t)
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	post(t, s, "/v1/chat/completions?trace=1", "key-one", body)
	post(t, s, "/chat/completions", "key-two", body)
	post(t, s, "/v1/chat/completions", "", body)

	got := s.Requests()
	if len(got) != 3 || s.Count() != 3 {
		t.Fatalf("recorded %d, Count %d, want 3", len(got), s.Count())
	}
	for i, want := range []struct{ path, query, auth string }{
		{"/v1/chat/completions", "trace=1", "Bearer key-one"},
		{"/chat/completions", "", "Bearer key-two"},
		{"/v1/chat/completions", "", ""},
	} {
		r := got[i]
		if r.Method != "POST" || r.Path != want.path || r.Query != want.query || r.Header.Get("Authorization") != want.auth || string(r.Body) != body {
			t.Errorf("request %d: %s %s?%s auth %q body %q; want %+v", i, r.Method, r.Path, r.Query, r.Header.Get("Authorization"), r.Body, want)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Time.IsZero() {
			t.Errorf("request %d: header %v, time %v", i, r.Header, r.Time)
		}
	}

	// The control paths, for other processes.
	resp, err := http.Get(s.URL() + "/_mock/stats")
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, resp); string(b) != `{"requests":3}` {
		t.Errorf("stats %s", b)
	}
	resp.Body.Close()
	resp, err = http.Post(s.URL()+"/_mock/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || s.Count() != 0 || len(s.Requests()) != 0 {
		t.Errorf("after reset: status %d, Count %d, %d recorded", resp.StatusCode, s.Count(), len(s.Requests()))
	}
}

func TestMaxRecorded(t *testing.T) {
	s := New(Options{MaxRecorded: 2})
	h := s.Handler()
	for _, p := range []string{"/a", "/b", "/c"} {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil)
		ctx.Request.SetRequestURI(p)
		h(&ctx)
	}
	var paths []string
	for _, r := range s.Requests() {
		paths = append(paths, r.Path)
	}
	if diff := cmp.Diff([]string{"/b", "/c"}, paths); diff != "" || s.Count() != 3 {
		t.Errorf("Count %d, paths (-want +got):\n%s", s.Count(), diff)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	s, url, err := Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Script(Step{ChunkDelay: time.Hour})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan error, 1) // Close's one result
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not end a stream waiting between chunks")
	}
	if _, err := net.Dial("tcp", strings.TrimPrefix(url, "http://")); err == nil {
		t.Error("still listening after Close")
	}
}
