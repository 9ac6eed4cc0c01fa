package bedrock

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Round trips through the adapter, the shared client and the mock's
// Bedrock wire format. The key pair is the one whose signatures the mock
// verifies, so every call here also proves the SigV4 signature right.

func startBedrockMock(t *testing.T) (*providertest.Server, *Bedrock) {
	t.Helper()
	// As leakCheck, also ignoring what the mock's fasthttp server leaves
	// behind: its idle-worker cleaner (up to 10 s after it stopped) and
	// the process-wide Date header ticker.
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
	s, _, err := providertest.Start(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, New(codectest.NewTestClient(t, providers.ClientConfig{}))
}

func mockRequest(s *providertest.Server, op llm.Operation, model, body string) *providers.Request {
	return &providers.Request{Op: op, Model: model, Body: []byte(body), Deadline: time.Now().Add(10 * time.Second),
		Cred: providers.Credential{KeyID: "pk_m", Key: secret.Value(providertest.MockSecretAccessKey), BaseURL: s.URL(),
			Options: providers.KeyOptions{Region: "us-east-1", AccessKeyID: providertest.MockAccessKeyID}}}
}

// chatOut is the part of a chat answer or chunk the tests read.
type chatOut struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message, Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
}

func decodeBedrockOut(t *testing.T, b []byte) chatOut {
	t.Helper()
	var out chatOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out
}

const mockChat = `{"model":"x","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi there"}],"max_tokens":50}`

func TestBedrockMockChat(t *testing.T) {
	s, b := startBedrockMock(t)
	resp, err := b.Chat(context.Background(), mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0", mockChat))
	if err != nil {
		t.Fatal(err)
	}
	out := decodeBedrockOut(t, resp.Body)
	c := out.Choices[0]
	if out.Object != "chat.completion" || c.Message.Content == nil || *c.Message.Content != "Hello from mock: Hi there" || *c.FinishReason != "stop" {
		t.Errorf("answer %s", resp.Body)
	}
	want := llm.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9, Present: true}
	if diff := cmp.Diff(want, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	rec := s.Requests()[0]
	if rec.Path != "/model/amazon.nova-lite-v1:0/converse" || !strings.HasPrefix(rec.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+providertest.MockAccessKeyID+"/") {
		t.Errorf("recorded %s %v", rec.Path, rec.Header)
	}
}

func TestBedrockMockStream(t *testing.T) {
	for _, wantUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "usage off", true: "usage on"}[wantUsage], func(t *testing.T) {
			s, b := startBedrockMock(t)
			req := mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0@chunks=5", mockChat)
			req.Stream, req.ClientWantsUsage = true, wantUsage
			st, err := b.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chunks, err := codectest.ReadChunks(st)
			if err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
			var text strings.Builder
			contentChunks, usageChunks, finish := 0, 0, ""
			for _, c := range chunks {
				out := decodeBedrockOut(t, []byte(c))
				if out.Usage != nil {
					usageChunks++
					continue
				}
				if d := out.Choices[0].Delta; d.Content != nil && d.Role == "" {
					contentChunks++
					text.WriteString(*d.Content)
				}
				if f := out.Choices[0].FinishReason; f != nil {
					finish = *f
				}
			}
			if contentChunks != 5 || text.String() != "Hello from mock: Hi there" || finish != "stop" {
				t.Errorf("%d content chunks %q, finish %q", contentChunks, text.String(), finish)
			}
			if usageChunks != map[bool]int{false: 0, true: 1}[wantUsage] {
				t.Errorf("%d usage chunks with include_usage %v", usageChunks, wantUsage)
			}
			if u := st.Usage(); !u.Present || u.PromptTokens != 4 || u.CompletionTokens != 5 {
				t.Errorf("usage %+v", u)
			}
		})
	}
}

func TestBedrockMockToolCall(t *testing.T) {
	s, b := startBedrockMock(t)
	body := `{"messages":[{"role":"user","content":"Paris"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}],"tool_choice":"required"}`
	resp, err := b.Chat(context.Background(), mockRequest(s, llm.OpChat, "anthropic.claude-3-5-haiku-20241022-v1:0", body))
	if err != nil {
		t.Fatal(err)
	}
	c := decodeBedrockOut(t, resp.Body).Choices[0]
	if len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "get_weather" ||
		c.Message.ToolCalls[0].Function.Arguments != `{"text":"Paris"}` || *c.FinishReason != "tool_calls" || c.Message.Content != nil {
		t.Errorf("answer %s", resp.Body)
	}

	req := mockRequest(s, llm.OpChat, "anthropic.claude-3-5-haiku-20241022-v1:0@chunks=4", body)
	req.Stream = true
	st, err := b.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chunks, err := codectest.ReadChunks(st)
	if err != io.EOF {
		t.Fatal(err)
	}
	var args strings.Builder
	id, finish := "", ""
	for _, ch := range chunks {
		out := decodeBedrockOut(t, []byte(ch))
		for _, tc := range out.Choices[0].Delta.ToolCalls {
			if tc.ID != "" {
				id = tc.ID
			}
			args.WriteString(tc.Function.Arguments)
		}
		if f := out.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if !strings.HasPrefix(id, "tooluse_mock_") || args.String() != `{"text":"Paris"}` || finish != "tool_calls" {
		t.Errorf("tool call %q %q, finish %q", id, args.String(), finish)
	}
}

func TestBedrockMockEmbeddings(t *testing.T) {
	tests := []struct {
		name, model, body string
		inputs            int
		calls             int
		tokens            int64
	}{
		{"titan", "amazon.titan-embed-text-v2:0", `{"input":["one two","three"],"dimensions":256}`, 2, 2, 3},
		{"titan one", "amazon.titan-embed-text-v1", `{"input":"just one"}`, 1, 1, 2},
		{"cohere batches", "cohere.embed-english-v3", `{"input":[` + strings.TrimSuffix(strings.Repeat(`"a b",`, 100), ",") + `]}`, 100, 2, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := startBedrockMock(t)
			embed := func(body string) [][]float32 {
				resp, err := b.Embed(context.Background(), mockRequest(s, llm.OpEmbeddings, tt.model, body))
				if err != nil {
					t.Fatal(err)
				}
				if resp.Usage.PromptTokens != tt.tokens || resp.Usage.TotalTokens != tt.tokens || !resp.Usage.Present {
					t.Errorf("usage %+v, want %d tokens", resp.Usage, tt.tokens)
				}
				var out struct {
					Object string `json:"object"`
					Data   []struct {
						Index     int             `json:"index"`
						Embedding json.RawMessage `json:"embedding"`
					} `json:"data"`
					Model string `json:"model"`
					Usage struct {
						PromptTokens int64 `json:"prompt_tokens"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(resp.Body, &out); err != nil {
					t.Fatal(err)
				}
				if out.Object != "list" || out.Model != tt.model || len(out.Data) != tt.inputs || out.Usage.PromptTokens != tt.tokens {
					t.Fatalf("answer %s", resp.Body)
				}
				vecs := make([][]float32, len(out.Data))
				for i, d := range out.Data {
					if d.Index != i {
						t.Errorf("index %d at %d", d.Index, i)
					}
					if d.Embedding[0] == '"' {
						var s string
						_ = json.Unmarshal(d.Embedding, &s)
						raw, _ := base64.StdEncoding.DecodeString(s)
						for j := 0; j+4 <= len(raw); j += 4 {
							vecs[i] = append(vecs[i], math.Float32frombits(binary.LittleEndian.Uint32(raw[j:])))
						}
					} else if err := json.Unmarshal(d.Embedding, &vecs[i]); err != nil {
						t.Fatal(err)
					}
					if len(vecs[i]) != 8 {
						t.Errorf("embedding %d has %d numbers", i, len(vecs[i]))
					}
				}
				return vecs
			}
			floats := embed(tt.body)
			if n := s.Count(); n != tt.calls {
				t.Errorf("%d upstream calls, want %d", n, tt.calls)
			}
			b64 := embed(strings.Replace(tt.body, "{", `{"encoding_format":"base64",`, 1))
			if diff := cmp.Diff(floats, b64); diff != "" {
				t.Errorf("base64 differs from float (-float +base64):\n%s", diff)
			}
		})
	}
}

func TestBedrockEmbedRefused(t *testing.T) {
	b := New(codectest.NewTestClient(t, providers.ClientConfig{}))
	tests := []struct{ model, body, want string }{
		{"meta.llama3-70b-instruct-v1:0", `{"input":"x"}`, `not "meta.llama3-70b-instruct-v1:0"`},
		{"amazon.titan-embed-text-v1", `{"input":[[1,2,3]]}`, "not token arrays"},
		{"amazon.titan-embed-text-v1", `{"input":"x","dimensions":256}`, "does not support dimensions"},
		{"cohere.embed-english-v3", `{"input":[]}`, "at least one input"},
		{"cohere.embed-english-v3", `{"input":"x","encoding_format":"int8"}`, `encoding_format "int8"`},
	}
	for _, tt := range tests {
		err := b.Validate(&providers.Request{Op: llm.OpEmbeddings, Model: tt.model, Body: []byte(tt.body)})
		if e := providers.AsError(err); e == nil || e.Status != 400 || !strings.HasPrefix(e.Message, "bedrock ") || !strings.Contains(e.Message, tt.want) {
			t.Errorf("%s %s: got %v, want a 400 with %q", tt.model, tt.body, err, tt.want)
		}
	}
}

// TestBedrockMockErrors: statuses pass through, 429 and 5xx are
// retryable, 4xx are not, Retry-After is kept, and no message carries
// the credential.
func TestBedrockMockErrors(t *testing.T) {
	tests := []struct {
		name      string
		step      providertest.Step
		op        string // chat, stream, embed
		status    int
		retryable bool
		msg       string
	}{
		{"throttled", providertest.Step{Status: 429, RetryAfter: "3"}, "chat", 429, true, "Too many requests"},
		{"throttled stream", providertest.Step{Status: 429}, "stream", 429, true, "Too many requests"},
		{"server error", providertest.Step{Status: 500}, "chat", 500, true, "internal error"},
		{"unavailable embed", providertest.Step{Status: 503}, "embed", 503, true, "unable to process"},
		{"validation", providertest.Step{Status: 400}, "chat", 400, false, "Malformed input request"},
		{"access denied stream", providertest.Step{Status: 403}, "stream", 403, false, "don't have access"},
		{"not found embed", providertest.Step{Status: 404}, "embed", 404, false, "Could not resolve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := startBedrockMock(t)
			s.Script(tt.step)
			var err error
			switch tt.op {
			case "chat":
				_, err = b.Chat(context.Background(), mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0", mockChat))
			case "stream":
				req := mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0", mockChat)
				req.Stream = true
				var st providers.Stream
				if st, err = b.ChatStream(context.Background(), req); st != nil {
					st.Close()
				}
			case "embed":
				_, err = b.Embed(context.Background(), mockRequest(s, llm.OpEmbeddings, "cohere.embed-english-v3", `{"input":"x"}`))
			}
			e := providers.AsError(err)
			if e == nil || e.Status != tt.status || e.Retryable() != tt.retryable || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %#v, want *Error %d (retryable %v) with %q", err, tt.status, tt.retryable, tt.msg)
			}
			if tt.step.RetryAfter != "" && e.RetryAfter != 3*time.Second {
				t.Errorf("RetryAfter %v", e.RetryAfter)
			}
		})
	}
}

// TestBedrockMockBadSignature: a wrong secret is a 403 from the mock's
// signature check, not retried, and the message names neither key.
func TestBedrockMockBadSignature(t *testing.T) {
	s, b := startBedrockMock(t)
	req := mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0", mockChat)
	req.Cred.Key = "wrongSecretAccessKey/0123456789abcdefghij"
	_, err := b.Chat(context.Background(), req)
	e := providers.AsError(err)
	if e == nil || e.Status != http.StatusForbidden || e.Retryable() || !strings.Contains(e.Message, "signature") {
		t.Fatalf("got %#v, want a 403 about the signature", err)
	}
	if strings.Contains(e.Error(), "wrongSecret") || strings.Contains(e.Error(), providertest.MockAccessKeyID) {
		t.Errorf("the error names a key: %v", e)
	}
}

// TestBedrockMockStreamReset: a connection cut mid-stream is an *Error
// after the chunks that arrived, never a clean end.
func TestBedrockMockStreamReset(t *testing.T) {
	s, b := startBedrockMock(t)
	s.Script(providertest.Step{ResetAfter: 2, Chunks: 4})
	req := mockRequest(s, llm.OpChat, "amazon.nova-lite-v1:0", mockChat)
	req.Stream = true
	st, err := b.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chunks, err := codectest.ReadChunks(st)
	if e := providers.AsError(err); e == nil || len(chunks) != 3 || !strings.Contains(e.Message, "ended before messageStop") {
		t.Fatalf("got %d chunks and %v, want 3 chunks and a truncation error", len(chunks), err)
	}
}

// TestBedrockStreamNotAStream: a JSON answer to ConverseStream is a 502.
func TestBedrockStreamNotAStream(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":"not a stream, key `+testSecret.Reveal()+`"}`)
	})
	b := New(codectest.NewTestClient(t, providers.ClientConfig{}))
	req := &providers.Request{Op: llm.OpChat, Model: testModel, Body: []byte(mockChat), Stream: true,
		Cred: cred(u.URL), Deadline: time.Now().Add(10 * time.Second)}
	_, err := b.ChatStream(context.Background(), req)
	if e := providers.AsError(err); e == nil || e.Status != 502 || strings.Contains(e.Message, testSecret.Reveal()) {
		t.Errorf("got %v, want a scrubbed 502", err)
	}
}

// TestBedrockStreamEarlyException: an exception before any content is the
// ChatStream error, with its status, so that it can still be retried; one
// after content arrives from Next.
func TestBedrockStreamEarlyException(t *testing.T) {
	tests := []struct {
		name      string
		frames    []frame
		status    int
		wantFirst bool
	}{
		{"throttled first", []frame{{"exception", "throttlingException", `{"message":"Too many requests"}`}}, 429, false},
		{"unavailable after messageStart", []frame{ev("messageStart", `{"role":"assistant"}`),
			{"exception", "serviceUnavailableException", `{"message":"overloaded"}`}}, 503, true},
		{"empty", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.LeakCheck(t)
			body := encodeBedrockFrames(t, tt.frames)
			u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
				_, _ = w.Write(body)
			})
			b := New(codectest.NewTestClient(t, providers.ClientConfig{}))
			req := &providers.Request{Op: llm.OpChat, Model: testModel, Body: []byte(mockChat), Stream: true,
				Cred: cred(u.URL), Deadline: time.Now().Add(10 * time.Second)}
			st, err := b.ChatStream(context.Background(), req)
			if !tt.wantFirst {
				if e := providers.AsError(err); e == nil || e.Status != tt.status || !e.Retryable() {
					t.Fatalf("got %v, want a retryable %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chunks, err := codectest.ReadChunks(st)
			if e := providers.AsError(err); len(chunks) != 1 || e == nil || e.Status != 503 || !strings.Contains(e.Message, "overloaded") {
				t.Fatalf("got %d chunks and %v", len(chunks), err)
			}
		})
	}
}
