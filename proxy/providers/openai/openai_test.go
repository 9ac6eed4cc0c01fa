package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

// TestOpenAIRequestGolden records the upstream request body for a few
// request shapes: only "model" (and, for streams, "stream" and
// stream_options.include_usage) may differ from the client's body.
func TestOpenAIRequestGolden(t *testing.T) {
	tests := []struct {
		name   string
		op     string // chat, complete, embed
		stream bool
		body   string
	}{
		{"chat", "chat", false,
			`{"model":"smart","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"temperature":0.70,"max_tokens":1e2,"seed":42,"user":"u-1"}`},
		{"chat_unicode_tools", "chat", false,
			`{"messages":[{"role":"user","content":"caf\u00e9 日本 \"q\" \n 🎉"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"tool_choice":"auto","response_format":{"type":"json_object"},"model":"alias"}`},
		{"chat_stream", "chat", true,
			`{"model":"openai/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`},
		{"chat_stream_keeps_options", "chat", true,
			`{"model":"x","stream":true,"stream_options":{"include_usage":false,"include_obfuscation":false},"messages":[{"role":"user","content":"Hi"}],"n":2,"stop":["\n\n"]}`},
		{"chat_stream_null_options", "chat", true,
			`{"model":"x","stream":true,"stream_options":null,"messages":[{"role":"user","content":"Hi"}]}`},
		{"completions_stream", "complete", true,
			`{"model":"x","prompt":"Say this is a test","max_tokens":7,"stream":true}`},
		{"embeddings", "embed", false,
			`{"model":"x","input":["a","b"],"encoding_format":"float","dimensions":256}`},
	}
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body := `{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`
		if in, _ := io.ReadAll(r.Body); bytes.Contains(in, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			body = "data: [DONE]\n\n"
		}
		_, _ = io.WriteString(w, body)
	})
	o := New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(u.Requests())
			req := codectest.ChatRequest(u.URL+"/v1", tt.body)
			req.Stream = tt.stream
			ctx := context.Background()
			var err error
			var s providers.Stream
			switch {
			case tt.op == "chat" && !tt.stream:
				_, err = o.Chat(ctx, req)
			case tt.op == "chat":
				s, err = o.ChatStream(ctx, req)
			case tt.op == "complete":
				s, err = o.CompleteStream(ctx, req)
			case tt.op == "embed":
				_, err = o.Embed(ctx, req)
			}
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				if _, err := codectest.ReadChunks(s); err != io.EOF {
					t.Fatal(err)
				}
				s.Close()
			}
			if string(req.Body) != tt.body {
				t.Errorf("the adapter modified the request body")
			}
			got := u.Requests()[before]
			wantPath := map[string]string{"chat": "/v1/chat/completions", "complete": "/v1/completions", "embed": "/v1/embeddings"}[tt.op]
			if got.Path != wantPath {
				t.Errorf("path %s, want %s", got.Path, wantPath)
			}
			codectest.Golden(t, filepath.Join("testdata", "openai", tt.name+".json"), got.Body)
		})
	}
}

func TestOpenAIBaseURL(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"choices":[]}`) })
	o := New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	for _, base := range []string{u.URL + "/v1", u.URL + "/v1/", u.URL + "/v1//"} {
		if _, err := o.Chat(context.Background(), codectest.ChatRequest(base, `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New("openai-compatible", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), codectest.ChatRequest("", `{}`)); err == nil {
		t.Error("openai-compatible without a base URL: no error")
	}
	for _, r := range u.Requests() {
		if r.Path != "/v1/chat/completions" {
			t.Errorf("path %q", r.Path)
		}
	}
}

func TestOpenAIChatUsage(t *testing.T) {
	tests := []struct {
		name string
		body string
		want llm.Usage
	}{
		{"cached", `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":5,"total_tokens":1205,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			llm.Usage{PromptTokens: 1200, CompletionTokens: 5, TotalTokens: 1205, CachedTokens: 1024, Present: true}},
		{"explicit zero", `{"model":"m","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
			llm.Usage{Present: true}},
		{"no total", `{"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
			llm.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7, Present: true}},
		{"embeddings", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":8,"total_tokens":8}}`,
			llm.Usage{PromptTokens: 8, TotalTokens: 8, Present: true}},
		{"absent", `{"model":"m","choices":[]}`, llm.Usage{}},
		{"null", `{"model":"m","choices":[],"usage":null}`, llm.Usage{}},
		{"garbage counts", `{"model":"m","usage":{"prompt_tokens":-5,"completion_tokens":"7","total_tokens":1.5}}`, llm.Usage{Present: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tt.body)
			})
			resp, err := New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), codectest.ChatRequest(u.URL, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if string(resp.Body) != tt.body {
				t.Errorf("body changed: %s", resp.Body)
			}
		})
	}
}

func TestOpenAIInvalidAnswer(t *testing.T) {
	tests := []struct{ name, ctype, body, wantMsg string }{
		{"html", "text/html", "<!DOCTYPE html><html><body>Welcome to nginx!</body></html>", providers.ErrInvalidResponse},
		{"truncated", "application/json", `{"id":"chatcmpl-1","choices":[`, providers.ErrInvalidResponse},
		{"array", "application/json", `[1,2]`, providers.ErrInvalidResponse},
		{"empty", "application/json", ``, providers.ErrInvalidResponse},
		{"error with 200", "application/json", `{"error":{"message":"model overloaded, key sk-abcdefghijklmnop"}}`, "model overloaded, key [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				_, _ = io.WriteString(w, tt.body)
			})
			_, err := New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), codectest.ChatRequest(u.URL, `{}`))
			if e := providers.AsError(err); e == nil || e.Status != http.StatusBadGateway || e.Message != tt.wantMsg {
				t.Errorf("got %#v, want *Error 502 %q", err, tt.wantMsg)
			}
		})
	}
}

// The events of a typical OpenAI stream with include_usage.
const (
	evRole  = `{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`
	evHel   = `{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}`
	evStop  = `{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`
	evUsage = `{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23,"prompt_tokens_details":{"cached_tokens":16}}}`
	// evStopUsage is a final chunk with choices and usage (vLLM, some
	// OpenAI-compatible servers).
	evStopUsage = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`
)

func TestOpenAIStreamUsage(t *testing.T) {
	wantUsage := llm.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23, CachedTokens: 16, Present: true}
	tests := []struct {
		name       string
		events     []string
		clientWant bool
		want       []string
		wantUsage  llm.Usage
	}{
		{"usage chunk dropped", []string{
			"data: " + evRole + "\n\n", ": keep-alive\n\n", "data: " + evHel + "\n\n", "data:\n\n",
			"data: " + evStop + "\n\n", "data: " + evUsage + "\n\n", "data: [DONE]\n\n"},
			false, []string{evRole, evHel, evStop}, wantUsage},
		{"usage chunk kept", []string{
			"data: " + evRole + "\n\n", "data: " + evHel + "\n\n", "data: " + evStop + "\n\n",
			"data: " + evUsage + "\n\n", "data: [DONE]\n\n"},
			true, []string{evRole, evHel, evStop, evUsage}, wantUsage},
		{"choices and usage passed on", []string{
			"data: " + evHel + "\r\n\r\n", "data: " + evStopUsage + "\r\n\r\n", "data: [DONE]\r\n\r\n"},
			false, []string{evHel, evStopUsage},
			llm.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23, Present: true}},
		{"no usage", []string{"data: " + evHel + "\n\n", "data: [DONE]\n\n"},
			false, []string{evHel}, llm.Usage{}},
		{"split across writes", []string{"da", "ta: " + evHel[:30], evHel[30:] + "\n", "\ndata: [DO", "NE]\n\n"},
			false, []string{evHel}, llm.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.LeakCheck(t)
			u := codectest.NewUpstream(t, codectest.SSEHandler(tt.events...))
			req := codectest.ChatRequest(u.URL, `{"model":"x","stream":true,"messages":[]}`)
			req.Stream, req.ClientWantsUsage = true, tt.clientWant
			s, err := New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := codectest.ReadChunks(s)
			if err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUsage, s.Usage()); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if _, err := s.Next(); err != io.EOF {
				t.Errorf("after the end: %v", err)
			}
			if body := u.Requests()[0].Body; !bytes.Contains(body, []byte(`"stream_options":{"include_usage":true}`)) {
				t.Errorf("upstream body lacks include_usage: %s", body)
			}
		})
	}
}

func TestOpenAIStreamErrors(t *testing.T) {
	tests := []struct {
		name    string
		h       http.HandlerFunc
		chunks  int
		check   func(*providers.Error) bool
		wantMsg string
	}{
		{"error event", codectest.SSEHandler("data: "+evHel+"\n\n", `data: {"error":{"message":"The server had an error while processing your request. Bearer sk-abcdefghijklm","type":"server_error"}}`+"\n\n"),
			1, func(e *providers.Error) bool { return e.Status == 502 }, "The server had an error while processing your request. Bearer [REDACTED]"},
		{"named error event", codectest.SSEHandler("event: error\ndata: {\"message\":\"overloaded\"}\n\n"),
			0, func(e *providers.Error) bool { return e.Status == 502 }, "overloaded"},
		{"no [DONE]", codectest.SSEHandler("data: "+evHel+"\n\n", "data: "+evStop+"\n\n"),
			2, func(e *providers.Error) bool { return errors.Is(e, io.ErrUnexpectedEOF) }, "the stream ended before [DONE]"},
		{"cut mid event", codectest.SSEHandler("data: "+evHel+"\n\n", "data: {\"id\":"),
			1, func(e *providers.Error) bool { return errors.Is(e, io.ErrUnexpectedEOF) }, "the stream ended before [DONE]"},
		{"not json", codectest.SSEHandler("data: <html>\n\n"),
			0, func(e *providers.Error) bool { return e.Status == 502 }, "upstream sent an invalid stream event"},
		{"cut connection", func(w http.ResponseWriter, r *http.Request) {
			codectest.SSEHandler("data: "+evHel+"\n\n")(w, r)
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}, 1, func(e *providers.Error) bool { return errors.Is(e, io.ErrUnexpectedEOF) }, "the stream ended before [DONE]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.LeakCheck(t)
			u := codectest.NewUpstream(t, tt.h)
			s, err := New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := codectest.ReadChunks(s)
			e := providers.AsError(err)
			if len(got) != tt.chunks || e == nil || !tt.check(e) || e.Message != tt.wantMsg {
				t.Fatalf("got %d chunks and %#v, want %d chunks and %q", len(got), err, tt.chunks, tt.wantMsg)
			}
			if _, again := s.Next(); again != err {
				t.Errorf("error not sticky: %v", again)
			}
		})
	}
}

func TestOpenAIStreamNotAStream(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","choices":[]}`)
	})
	_, err := New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if e := providers.AsError(err); e == nil || e.Status != 502 || e.Message != providers.ErrInvalidResponse {
		t.Errorf("got %v, want *Error 502", err)
	}
}

// FuzzChunk feeds stream chunk and answer parsing arbitrary bytes: no
// panic, counts never negative, and every failure an *Error 502 with a
// short, valid, key-free message.
func FuzzChunk(f *testing.F) {
	f.Add([]byte(evUsage))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p fastjson.Parser
		c, err := providers.InspectChunk(&p, data, codectest.TestKey)
		codectest.CheckFuzzed(t, c.Usage, err)
		if c.UsageOnly && !c.Usage.Present {
			t.Fatal("usage-only chunk without usage")
		}
		u, _, err := providers.InspectAnswer(&p, data, codectest.TestKey)
		codectest.CheckFuzzed(t, u, err)
	})
}

func TestFuzzChunkSeeds(t *testing.T) {
	// The seed corpus must stay parseable by the fuzz target's signature.
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzChunk"))
	if err != nil || len(entries) < 5 {
		t.Fatalf("seed corpus: %d entries, %v", len(entries), err)
	}
}

var benchRequestBody = []byte(`{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant that answers briefly and precisely."},{"role":"user","content":"Summarise the plot of Hamlet in two sentences, and name the three main characters."}],"temperature":0.2,"max_tokens":256,"stream":true,"user":"user-1234"}`)

func BenchmarkRewriteBody(b *testing.B) {
	var dst []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequestBody)))
	for b.Loop() {
		var err error
		dst, err = rewriteBody(dst[:0], benchRequestBody, "gpt-4o-mini", true, outputCap{})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChat is a whole non-streamed round trip against a local
// fasthttp server: rewrite, send, read, copy out, parse usage.
func BenchmarkChat(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(codectest.BenchAnswer)
	}}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown() }()
	c := providers.NewClient(providers.ClientConfig{AllowPrivate: true})
	defer c.CloseIdleConnections()
	o := New("openai", c)
	req := &providers.Request{Op: llm.OpChat, Model: "gpt-4o-mini", Body: benchRequestBody,
		Cred: providers.Credential{Key: codectest.TestKey, BaseURL: "http://" + ln.Addr().String() + "/v1"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req.Deadline = time.Now().Add(10 * time.Second)
		resp, err := o.Chat(ctx, req)
		if err != nil || resp.Usage.TotalTokens != 89 {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkChatStream is a streamed round trip of 20 chunks plus usage.
func BenchmarkChatStream(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var body []byte
	for range 20 {
		body = append(body, "data: "+evHel+"\n\n"...)
	}
	body = append(body, "data: "+evUsage+"\n\ndata: [DONE]\n\n"...)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/event-stream")
		ctx.SetBodyStream(bytes.NewReader(body), -1) // chunked, as upstreams send it
	}}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown() }()
	c := providers.NewClient(providers.ClientConfig{AllowPrivate: true})
	defer c.CloseIdleConnections()
	o := New("openai", c)
	req := &providers.Request{Op: llm.OpChat, Model: "gpt-4o-mini", Body: benchRequestBody, Stream: true,
		Cred: providers.Credential{Key: codectest.TestKey, BaseURL: "http://" + ln.Addr().String() + "/v1"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req.Deadline = time.Now().Add(10 * time.Second)
		s, err := o.ChatStream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := s.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		s.Close()
		if n != 20 || !s.Usage().Present {
			b.Fatal(n, s.Usage())
		}
	}
}
