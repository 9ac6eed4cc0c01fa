package openai

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
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

const azureTestdata = "testdata/azure"

func TestAzureHTTPRequest(t *testing.T) {
	deployments := map[string]string{"gpt-4o": "prod-4o"}
	tests := []struct {
		name, base, resource, version, model, op string
		want                                     string // BaseURL + "/" + Path
	}{
		{"resource", "", "acme-eu", "", "gpt-4o-mini", "chat/completions",
			"https://acme-eu.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21"},
		{"mapped", "", "acme", "2025-01-01-preview", "gpt-4o", "embeddings",
			"https://acme.openai.azure.com/openai/deployments/prod-4o/embeddings?api-version=2025-01-01-preview"},
		{"base wins", "https://llm.acme.example/", "acme", "", "gpt-4o", "completions",
			"https://llm.acme.example/openai/deployments/prod-4o/completions?api-version=2024-10-21"},
		{"base ends in /openai", "https://acme.openai.azure.com/openai/", "", "", "m", "chat/completions",
			"https://acme.openai.azure.com/openai/deployments/m/chat/completions?api-version=2024-10-21"},
		{"escaped", "http://127.0.0.1:1", "", "v 1&x", "a/b?c#d", "chat/completions",
			"http://127.0.0.1:1/openai/deployments/a%2Fb%3Fc%23d/chat/completions?api-version=v+1%26x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &providers.Request{Model: tt.model, Traceparent: "00-x",
				Cred: providers.Credential{Key: codectest.TestKey, BaseURL: tt.base,
					Options: providers.KeyOptions{Resource: tt.resource, APIVersion: tt.version, Deployments: deployments}}}
			hr, err := azureHTTPRequest(req, tt.op, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := hr.BaseURL + "/" + hr.Path; got != tt.want || hr.KeyHeader != "api-key" || hr.KeyPrefix != "" ||
				hr.Key != codectest.TestKey || hr.Traceparent != "00-x" {
				t.Errorf("got %s %+v, want %s", got, hr, tt.want)
			}
		})
	}
	if _, err := azureHTTPRequest(&providers.Request{Model: "m"}, "chat/completions", nil); err == nil || !strings.Contains(err.Error(), "options.resource") {
		t.Errorf("neither base_url nor resource: %v", err)
	}
	if _, err := azureHTTPRequest(&providers.Request{Cred: providers.Credential{BaseURL: "http://x"}}, "chat/completions", nil); providers.AsError(err) == nil || providers.AsError(err).Status != 400 {
		t.Errorf("no model: %v", err)
	}
}

func TestAzureStreamUsageVersions(t *testing.T) {
	for v, want := range map[string]bool{"2024-10-21": true, "2024-09-01-preview": true, "2025-04-01-preview": true,
		"2024-08-01-preview": false, "2024-06-01": false, "2023-05-15": false, "preview": true, "latest": true} {
		if got := azureStreamUsage(v); got != want {
			t.Errorf("%s: got %v, want %v", v, got, want)
		}
	}
}

// azureCapture is an upstream that records the raw request line, api-key
// and body, and answers with a file.
type azureCapture struct {
	mu   sync.Mutex
	reqs []string
}

func (c *azureCapture) handler(file, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ind bytes.Buffer
		if json.Indent(&ind, body, "", "  ") != nil {
			ind.Write(body)
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, fmt.Sprintf("%s %s\napi-key: %s\nauthorization: %q\n%s",
			r.Method, r.URL.RequestURI(), r.Header.Get("Api-Key"), r.Header.Get("Authorization"), ind.Bytes()))
		c.mu.Unlock()
		data, _ := os.ReadFile(filepath.Join(azureTestdata, file))
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(data)
	}
}

// TestAzureGolden sends each operation to a recording upstream that
// answers with a recorded Azure answer, and compares what went out (URL,
// key header, body) and what came back (body, usage, model, or the
// chunks) with testdata/azure/requests/<name>.txt.
func TestAzureGolden(t *testing.T) {
	chat := `{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}],"temperature":0.2,"stream":%s}`
	tests := []struct {
		name, op, body, answer, version string
		wantUsage                       bool
	}{
		{"chat", "chat", fmt.Sprintf(chat, "false"), "responses/chat.json", "", false},
		{"content_filtered", "chat", fmt.Sprintf(chat, "false"), "responses/content_filtered.json", "", false},
		{"completions", "complete", `{"model":"gpt-4o","prompt":"Once upon","max_tokens":2}`, "responses/completions.json", "", false},
		{"embeddings", "embed", `{"model":"gpt-4o","input":"hello there you","encoding_format":"float"}`, "responses/embeddings.json", "", false},
		{"chat_stream", "stream", fmt.Sprintf(chat, "true"), "streams/chat.sse", "", false},
		{"chat_stream_usage", "stream", `{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}`, "streams/chat.sse", "", true},
		{"chat_stream_old_version", "stream", fmt.Sprintf(chat, "true"), "streams/chat.sse", "2024-06-01", false},
		{"content_filter_stream", "stream", fmt.Sprintf(chat, "true"), "streams/content_filter.sse", "", true},
		{"completions_stream", "complete_stream", `{"model":"gpt-4o","prompt":"Once","stream":true}`, "streams/completions.sse", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c azureCapture
			ct := "application/json"
			if strings.HasSuffix(tt.answer, ".sse") {
				ct = "text/event-stream"
			}
			u := codectest.NewUpstream(t, c.handler(tt.answer, ct))
			a := NewAzure(codectest.NewTestClient(t, providers.ClientConfig{})).(*Azure)
			req := codectest.ChatRequest(u.URL, tt.body)
			req.Model = "gpt-4o"
			req.Cred.Options = providers.KeyOptions{Deployments: map[string]string{"gpt-4o": "prod-4o"}, APIVersion: tt.version}
			req.Stream, req.ClientWantsUsage = strings.Contains(tt.op, "stream"), tt.wantUsage
			var got bytes.Buffer
			var resp *providers.Response
			var s providers.Stream
			var err error
			switch tt.op {
			case "chat":
				resp, err = a.Chat(context.Background(), req)
			case "complete":
				resp, err = a.Complete(context.Background(), req)
			case "embed":
				resp, err = a.Embed(context.Background(), req)
			case "stream":
				s, err = a.ChatStream(context.Background(), req)
			case "complete_stream":
				s, err = a.CompleteStream(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				chunks, err := codectest.ReadChunks(s)
				_ = s.Close()
				if err != io.EOF {
					t.Fatalf("stream ended with %v", err)
				}
				for _, c := range chunks {
					got.WriteString(c + "\n")
				}
				fmt.Fprintf(&got, "usage: %+v\n", s.Usage())
			} else {
				got.Write(codectest.IndentJSON(t, resp.Body))
				fmt.Fprintf(&got, "\nusage: %+v\nmodel: %s\n", resp.Usage, resp.Model)
			}
			if len(c.reqs) != 1 {
				t.Fatalf("%d upstream requests", len(c.reqs))
			}
			record := "→ " + strings.ReplaceAll(c.reqs[0], string(codectest.TestKey), "<key>") + "\n← " + got.String()
			codectest.Golden(t, filepath.Join(azureTestdata, "requests", tt.name+".txt"), []byte(record))
		})
	}
}

func azureAgainst(t *testing.T, m *providertest.Server, body string) (*Azure, *providers.Request) {
	t.Helper()
	a := NewAzure(codectest.NewTestClient(t, providers.ClientConfig{})).(*Azure)
	req := codectest.ChatRequest(m.URL(), body)
	req.Model = "gpt-4o-mini"
	req.Cred.Options = providers.KeyOptions{Deployments: map[string]string{"gpt-4o-mini": "mini-eu"}}
	return a, req
}

func TestAzureMockChat(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	a, req := azureAgainst(t, m, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi there"}]}`)
	resp, err := a.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil || len(got.Choices) != 1 ||
		got.Choices[0].Message.Content != "Hello from mock: Hi there" || got.Model != "mini-eu" {
		t.Errorf("answer %s (%v)", resp.Body, err)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 2, CompletionTokens: 5, TotalTokens: 7, Present: true}) || resp.Model != "mini-eu" {
		t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
	}
	rec := m.Requests()[0]
	if rec.Path != "/openai/deployments/mini-eu/chat/completions" || rec.Query != "api-version=2024-10-21" ||
		rec.Header.Get("Api-Key") != string(codectest.TestKey) || rec.Header.Get("Authorization") != "" {
		t.Errorf("upstream request: %s?%s %v", rec.Path, rec.Query, rec.Header)
	}
}

func TestAzureMockStream(t *testing.T) {
	for _, op := range []string{"chat", "completions"} {
		for _, wantUsage := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s usage=%v", op, wantUsage), func(t *testing.T) {
				codectest.MockLeakCheck(t)
				m := codectest.StartMock(t)
				body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi there"}]}`
				if op == "completions" {
					body = `{"model":"gpt-4o-mini","stream":true,"prompt":"Hi there"}`
				}
				a, req := azureAgainst(t, m, body)
				req.Stream, req.ClientWantsUsage = true, wantUsage
				var s providers.Stream
				var err error
				if op == "chat" {
					s, err = a.ChatStream(context.Background(), req)
				} else {
					s, err = a.CompleteStream(context.Background(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				chunks, err := codectest.ReadChunks(s)
				if err != io.EOF {
					t.Fatalf("got %v, want io.EOF", err)
				}
				var text strings.Builder
				usageChunks := 0
				for _, c := range chunks {
					var ch struct {
						Choices []struct {
							Text  string `json:"text"`
							Delta struct {
								Content string `json:"content"`
							} `json:"delta"`
						} `json:"choices"`
						Usage *struct{} `json:"usage"`
					}
					if err := json.Unmarshal([]byte(c), &ch); err != nil {
						t.Fatal(err)
					}
					for _, c := range ch.Choices {
						text.WriteString(c.Text + c.Delta.Content)
					}
					if ch.Usage != nil {
						usageChunks++
					}
				}
				if text.String() != "Hello from mock: Hi there" || (usageChunks == 1) != wantUsage {
					t.Errorf("text %q, %d usage chunks:\n%s", text.String(), usageChunks, strings.Join(chunks, "\n"))
				}
				if u := s.Usage(); u.PromptTokens != 2 || u.CompletionTokens != 5 || !u.Present {
					t.Errorf("usage %+v", u)
				}
				rec := m.Requests()[0]
				if want := "/openai/deployments/mini-eu/" + strings.Replace(op, "chat", "chat/completions", 1); rec.Path != want ||
					!bytes.Contains(rec.Body, []byte(`"stream_options":{"include_usage":true}`)) {
					t.Errorf("upstream request %s %s", rec.Path, rec.Body)
				}
			})
		}
	}
}

func TestAzureMockCompletionsAndEmbeddings(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	a, req := azureAgainst(t, m, `{"model":"gpt-4o-mini","prompt":"Once upon a time"}`)
	resp, err := a.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(resp.Body, []byte(`"text":"Hello from mock: Once upon a time"`)) ||
		resp.Usage != (llm.Usage{PromptTokens: 4, CompletionTokens: 7, TotalTokens: 11, Present: true}) {
		t.Errorf("completion %s, usage %+v", resp.Body, resp.Usage)
	}
	req.Body = []byte(`{"model":"text-embedding-3-small","input":["a b","c"]}`)
	req.Model = "text-embedding-3-small"
	resp, err = a.Embed(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Data []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil || len(got.Data) != 2 || len(got.Data[0].Embedding) != 8 ||
		resp.Usage != (llm.Usage{PromptTokens: 3, TotalTokens: 3, Present: true}) {
		t.Errorf("embeddings %s, usage %+v", resp.Body, resp.Usage)
	}
	recs := m.Requests()
	if recs[0].Path != "/openai/deployments/mini-eu/completions" || recs[1].Path != "/openai/deployments/text-embedding-3-small/embeddings" {
		t.Errorf("paths %s, %s", recs[0].Path, recs[1].Path)
	}
}

func TestAzureMockErrors(t *testing.T) {
	tests := []struct {
		name      string
		step      providertest.Step
		noKey     bool
		version   string
		stream    bool
		status    int
		retryable bool
		retry     time.Duration
		msg       string
	}{
		{name: "429", step: providertest.Step{Status: 429, RetryAfter: "2"}, status: 429, retryable: true, retry: 2 * time.Second, msg: "exceeded token rate limit"},
		{name: "429 stream", step: providertest.Step{Status: 429, RetryAfter: "3"}, stream: true, status: 429, retryable: true, retry: 3 * time.Second, msg: "exceeded token rate limit"},
		{name: "500", step: providertest.Step{Status: 500}, status: 500, retryable: true, msg: "error while processing"},
		{name: "503 stream", step: providertest.Step{Status: 503}, stream: true, status: 503, retryable: true, msg: "status 503"},
		{name: "400 content filter", step: providertest.Step{Status: 400}, status: 400, msg: "content management policy"},
		{name: "no key", noKey: true, status: 401, msg: "Access denied"},
		{name: "bad api-version", version: "someday", status: 404, msg: "Resource not found"},
		{name: "reset", step: providertest.Step{ResetAfter: 1}, stream: true, status: 0, retryable: true, msg: "the stream ended before [DONE]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.MockLeakCheck(t)
			m := codectest.StartMock(t)
			m.Script(tt.step)
			a, req := azureAgainst(t, m, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`)
			req.Cred.Options.APIVersion = tt.version
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

func TestAzureStreamNotAStream(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"error":{"code":"OperationNotSupported","message":"streaming is off"}}`)
	})
	a := NewAzure(codectest.NewTestClient(t, providers.ClientConfig{})).(*Azure)
	req := codectest.ChatRequest(u.URL, `{"messages":[{"role":"user","content":"Hi"}],"stream":true}`)
	req.Stream = true
	if _, err := a.ChatStream(context.Background(), req); providers.AsError(err) == nil || providers.AsError(err).Status != 502 ||
		providers.AsError(err).Message != "streaming is off" {
		t.Errorf("got %v, want a 502 with the upstream's message", err)
	}
}

func TestAzureStreamCloseEarly(t *testing.T) {
	codectest.MockLeakCheck(t)
	m := codectest.StartMock(t)
	a, req := azureAgainst(t, m, `{"model":"x","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	req.Model, req.Stream = "gpt-4o-mini@chunks=50@delay=5ms", true
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
	if rec := m.Requests()[0]; rec.Path != "/openai/deployments/gpt-4o-mini@chunks=50@delay=5ms/chat/completions" {
		t.Errorf("path %s", rec.Path)
	}
}
