package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// now is the clock of the golden answers.
var now = time.Unix(1750000000, 0)

func newTestGemini(t *testing.T) *Gemini {
	t.Helper()
	g := New(codectest.NewTestClient(t, providers.ClientConfig{})).(*Gemini)
	g.now = func() time.Time { return now }
	return g
}

// indent pretty-prints JSON for golden files that people read.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return out.Bytes()
}

// Upstream answers each Gemini method with a minimal valid answer and
// records the request line and body.
type upstream struct {
	*codectest.Upstream
	mu   sync.Mutex
	uris []string
}

func newGeminiUpstream(t *testing.T) *upstream {
	g := &upstream{}
	g.Upstream = codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.uris = append(g.uris, r.RequestURI)
		g.mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			codectest.SSEHandler(`data: {"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`+"\r\n\r\n")(w, r)
		case strings.HasSuffix(r.URL.Path, ":embedContent"):
			_, _ = io.WriteString(w, `{"embedding":{"values":[0.5,-0.25]}}`)
		case strings.HasSuffix(r.URL.Path, ":batchEmbedContents"):
			var in struct{ Requests []json.RawMessage }
			_ = json.NewDecoder(r.Body).Decode(&in)
			_, _ = io.WriteString(w, `{"embeddings":[`+strings.Repeat(`{"values":[0.5]},`, len(in.Requests)-1)+`{"values":[0.5]}]}`)
		default:
			_, _ = io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`)
		}
	})
	return g
}

// TestGeminiRequestGolden records the Gemini request for OpenAI requests
// of every shape the adapter translates.
func TestGeminiRequestGolden(t *testing.T) {
	tests := []struct {
		name, model, op string // op: chat, stream, embed
		body            string
	}{
		{"plain", "gemini-2.5-flash", "chat",
			`{"model":"google/gemini-2.5-flash","messages":[{"role":"user","content":"Hello"}],"user":"u-1"}`},
		{"system", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Answer in French."}]},{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":"there"}]}]}`},
		{"multi_turn_merge", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":"Hi"},{"role":"user","content":"Are you there?"},{"role":"assistant","content":"Yes."},{"role":"assistant","content":[{"type":"text","text":"How can I help?"}]},{"role":"user","content":"Tell me a joke about <b> & \"quotes\""}]}`},
		{"tools", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":"Weather in Paris and Rome?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},{"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_a","content":"{\"temp\":21,\"sky\":\"clear\"}"},{"role":"tool","tool_call_id":"call_b","content":"light rain"},` +
				`{"role":"user","content":"And now?"}],` +
				`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
				`{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}],` +
				`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":true}`},
		{"tool_choice_required", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":"What time is it?"}],"tools":[{"type":"function","function":{"name":"now"}}],"tool_choice":"required"}`},
		{"images", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":[{"type":"text","text":"Compare these."},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"}},` +
				`{"type":"image_url","image_url":{"url":"https://example.com/cat.webp?size=large"}},` +
				`{"type":"image_url","image_url":"https://cdn.example.com/images/12345"},` +
				`{"type":"input_audio","input_audio":{"data":"SUQzBA==","format":"mp3"}},` +
				`{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf"}}]}]}`},
		{"response_format_json_schema", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":"A recipe, please."}],"response_format":{"type":"json_schema","json_schema":{"name":"recipe","strict":true,"schema":{"type":"object","properties":{"name":{"type":"string"},"steps":{"type":"array","items":{"type":"string"}}},"required":["name","steps"]}}}}`},
		{"response_format_json_object", "gemini-2.5-flash", "chat",
			`{"messages":[{"role":"user","content":"JSON please."}],"response_format":{"type":"json_object"}}`},
		{"generation_config", "gemini-2.5-pro", "chat",
			`{"messages":[{"role":"user","content":"Hi"}],"temperature":0.70,"top_p":0.9,"max_tokens":100,"max_completion_tokens":200,"stop":"\n\n","n":2,"seed":42,"presence_penalty":0.5,"frequency_penalty":-0.5,"reasoning_effort":"low"}`},
		{"stream", "gemini-2.5-flash", "stream",
			`{"messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":10,"stop":["END","STOP"]}`},
		{"model_path", "models/tuned model/v1", "chat",
			`{"messages":[{"role":"user","content":"Hi"}]}`},
		{"thought_signatures", "gemini-3-pro-preview", "chat",
			`{"messages":[{"role":"user","content":"Weather?"},` +
				`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"[1,2]"},` +
				`{"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2lnLTI="}}}]},` +
				`{"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"sunny"}]}]}`},
		{"embed_single", "text-embedding-004", "embed",
			`{"model":"text-embedding-004","input":"hello world"}`},
		{"embed_batch", "gemini-embedding-001", "embed",
			`{"model":"gemini-embedding-001","input":["a","b","c"],"dimensions":256,"encoding_format":"float"}`},
	}
	u := newGeminiUpstream(t)
	g := newTestGemini(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(u.Requests())
			req := codectest.ChatRequest(u.URL, tt.body)
			req.Model = tt.model
			ctx := context.Background()
			var err error
			switch tt.op {
			case "chat":
				_, err = g.Chat(ctx, req)
			case "stream":
				req.Stream = true
				var s providers.Stream
				if s, err = g.ChatStream(ctx, req); err == nil {
					_, err = codectest.ReadChunks(s)
					s.Close()
					if err == io.EOF {
						err = nil
					}
				}
			case "embed":
				req.Op = llm.OpEmbeddings
				_, err = g.Embed(ctx, req)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := u.Requests()[before]
			if k := got.Header.Get("X-Goog-Api-Key"); k != codectest.TestKey.Reveal() {
				t.Errorf("x-goog-api-key %q", k)
			}
			if a := got.Header.Get("Authorization"); a != "" || strings.Contains(u.uris[before], "key=") {
				t.Errorf("the key went elsewhere too: Authorization %q, URI %s", a, u.uris[before])
			}
			out := append([]byte("POST "+u.uris[before]+"\n\n"), indent(t, got.Body)...)
			codectest.Golden(t, filepath.Join("testdata", "requests", tt.name+".http"), out)
		})
	}
}

func TestGeminiBaseURL(t *testing.T) {
	u := newGeminiUpstream(t)
	g := newTestGemini(t)
	for _, base := range []string{u.URL, u.URL + "/", u.URL + "/v1beta", u.URL + "/v1beta/"} {
		if _, err := g.Chat(context.Background(), codectest.ChatRequest(base, `{"messages":[{"role":"user","content":"Hi"}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	for i, uri := range u.uris {
		if uri != "/v1beta/models/gpt-4o-mini:generateContent" {
			t.Errorf("request %d: %s", i, uri)
		}
	}
}

// TestGeminiResponseGolden translates recorded Gemini answers.
func TestGeminiResponseGolden(t *testing.T) {
	tests := []struct {
		name string
		want llm.Usage
	}{
		{"text", llm.Usage{PromptTokens: 8, CompletionTokens: 12, TotalTokens: 20, Present: true}},
		{"function_call", llm.Usage{PromptTokens: 61, CompletionTokens: 30, TotalTokens: 91, Present: true}},
		{"max_tokens", llm.Usage{PromptTokens: 5, CompletionTokens: 16, TotalTokens: 21, Present: true}},
		{"safety", llm.Usage{PromptTokens: 9, TotalTokens: 9, Present: true}},
		{"multiple_candidates", llm.Usage{PromptTokens: 4, CompletionTokens: 14, TotalTokens: 18, Present: true}},
		{"usage_thoughts_cached", llm.Usage{PromptTokens: 2100, CompletionTokens: 420, TotalTokens: 2520, CachedTokens: 2048, ReasoningTokens: 400, Present: true}},
		{"prompt_blocked", llm.Usage{PromptTokens: 7, TotalTokens: 7, Present: true}},
		{"no_usage", llm.Usage{}},
	}
	g := newTestGemini(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "responses", tt.name+".gemini.json"))
			if err != nil {
				t.Fatal(err)
			}
			u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				_, _ = w.Write(in)
			})
			resp, err := g.Chat(context.Background(), codectest.ChatRequest(u.URL, `{"messages":[{"role":"user","content":"Hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			codectest.Golden(t, filepath.Join("testdata", "responses", tt.name+".openai.json"), indent(t, resp.Body))
		})
	}
}

// TestGeminiStreamGolden translates recorded Gemini streams into chunk
// sequences, each followed by the usage and how the stream ended.
func TestGeminiStreamGolden(t *testing.T) {
	tests := []struct {
		in, out   string
		wantUsage bool
	}{
		{"text", "text_usage_off", false},
		{"text", "text_usage_on", true},
		{"function_call", "function_call", true},
		{"usage_only_events", "usage_only_events", true},
		{"prompt_blocked", "prompt_blocked", false},
		{"cut", "cut", true},
		{"cut_mid_event", "cut_mid_event", false},
		{"error_event", "error_event", false},
	}
	g := newTestGemini(t)
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			codectest.LeakCheck(t)
			in, err := os.ReadFile(filepath.Join("testdata", "streams", tt.in+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			u := codectest.NewUpstream(t, codectest.SSEHandler(string(in)))
			req := codectest.ChatRequest(u.URL, `{"messages":[{"role":"user","content":"Hi"}],"stream":true}`)
			req.Stream, req.ClientWantsUsage = true, tt.wantUsage
			s, err := g.ChatStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			chunks, err := codectest.ReadChunks(s)
			if again, _ := s.Next(); again != nil {
				t.Errorf("a chunk after the end: %s", again)
			}
			var out bytes.Buffer
			for _, c := range chunks {
				if !json.Valid([]byte(c)) {
					t.Errorf("invalid chunk %s", c)
				}
				out.WriteString(c + "\n")
			}
			fmt.Fprintf(&out, "usage: %+v\nend: %s", s.Usage(), end(err))
			codectest.Golden(t, filepath.Join("testdata", "streams", tt.out+".chunks"), out.Bytes())
		})
	}
}

// end describes how a stream ended.
func end(err error) string {
	if err == io.EOF {
		return "EOF"
	}
	e := providers.AsError(err)
	if e == nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("error status=%d message=%q retryable=%v", e.Status, e.Message, e.Retryable())
}

func TestGeminiValidate(t *testing.T) {
	tests := []struct {
		name   string
		op     llm.Operation
		stream bool
		body   string
		want   string // in the message; "" means valid
	}{
		{"plain", llm.OpChat, false, `{"messages":[{"role":"user","content":"Hi"}]}`, ""},
		{"n without stream", llm.OpChat, false, `{"n":2,"messages":[]}`, ""},
		{"logprobs", llm.OpChat, false, `{"logprobs":true,"messages":[]}`, "logprobs"},
		{"top_logprobs", llm.OpChat, false, `{"top_logprobs":3,"messages":[]}`, "logprobs"},
		{"n with stream", llm.OpChat, true, `{"n":2,"stream":true,"messages":[]}`, "n > 1 with stream"},
		{"logit_bias", llm.OpChat, false, `{"logit_bias":{"50256":-100},"messages":[]}`, "logit_bias"},
		{"audio out", llm.OpChat, false, `{"modalities":["text","audio"],"messages":[]}`, "audio output"},
		{"parallel false", llm.OpChat, false, `{"parallel_tool_calls":false,"messages":[]}`, "parallel_tool_calls"},
		{"functions", llm.OpChat, false, `{"functions":[{"name":"f"}],"messages":[]}`, "functions"},
		{"web search", llm.OpChat, false, `{"web_search_options":{},"messages":[]}`, "web_search_options"},
		{"tool type", llm.OpChat, false, `{"tools":[{"type":"custom","custom":{"name":"x"}}],"messages":[]}`, `tools of type "custom"`},
		{"tool_choice allowed_tools", llm.OpChat, false, `{"tool_choice":{"type":"allowed_tools"},"messages":[]}`, "tool_choice"},
		{"response_format", llm.OpChat, false, `{"response_format":{"type":"grammar"},"messages":[]}`, `response_format "grammar"`},
		{"reasoning_effort", llm.OpChat, false, `{"reasoning_effort":"extreme","messages":[]}`, `reasoning_effort "extreme"`},
		{"unknown tool id", llm.OpChat, false, `{"messages":[{"role":"tool","tool_call_id":"call_x","content":"1"}]}`, `tool_call_id "call_x" matches no earlier tool call`},
		{"bad arguments", llm.OpChat, false, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "not a JSON object"},
		{"unknown role", llm.OpChat, false, `{"messages":[{"role":"narrator","content":"x"}]}`, `unknown role "narrator"`},
		{"image scheme", llm.OpChat, false, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "image_url"},
		{"file id", llm.OpChat, false, `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "file ids"},
		{"video part", llm.OpChat, false, `{"messages":[{"role":"user","content":[{"type":"input_video"}]}]}`, `"input_video"`},
		{"image in system", llm.OpChat, false, `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x"}}]}]}`, "outside user messages"},
		{"wrong type", llm.OpChat, false, `{"temperature":"hot","messages":[]}`, "temperature has the wrong type"},
		{"null temperature", llm.OpChat, false, `{"temperature":null,"messages":[]}`, ""},
		{"embed string", llm.OpEmbeddings, false, `{"input":"a"}`, ""},
		{"embed base64", llm.OpEmbeddings, false, `{"input":["a"],"encoding_format":"base64"}`, ""},
		{"embed tokens", llm.OpEmbeddings, false, `{"input":[1,2,3]}`, "token arrays"},
		{"embed token arrays", llm.OpEmbeddings, false, `{"input":[ [1,2],[3]]}`, "token arrays"},
		{"embed mixed", llm.OpEmbeddings, false, `{"input":["a",1]}`, "non-empty array of strings"},
		{"embed missing", llm.OpEmbeddings, false, `{}`, "non-empty array of strings"},
		{"embed empty", llm.OpEmbeddings, false, `{"input":[]}`, "non-empty array of strings"},
		{"embed format", llm.OpEmbeddings, false, `{"input":"a","encoding_format":"int8"}`, `encoding_format "int8"`},
		{"completions", llm.OpCompletions, false, `{"prompt":"a"}`, "legacy completions"},
	}
	g := newTestGemini(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := codectest.ChatRequest("http://unused", tt.body)
			req.Op, req.Stream = tt.op, tt.stream
			err := g.Validate(req)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			e := providers.AsError(err)
			if e == nil || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "google") || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("got %v, want a 400 naming google and %q", err, tt.want)
			}
			if e.Retryable() {
				t.Error("a refused feature is retryable")
			}
		})
	}
}

func TestGeminiErrorMessages(t *testing.T) {
	tests := []struct {
		name, msg string
		want      string
		wait      time.Duration
	}{
		{"key param", "API key not valid: GET https://generativelanguage.googleapis.com/v1beta/models?key=abc123DEF456ghi&alt=json", "API key not valid: GET https://generativelanguage.googleapis.com/v1beta/models?key=[REDACTED]&alt=json", 0},
		{"two keys", "Key=x1234567 and KEY=y1234567.", "Key=[REDACTED] and KEY=[REDACTED].", 0},
		{"no key", "Quota exceeded. Please retry in 13.447s.", "Quota exceeded. Please retry in 13.447s.", 13447 * time.Millisecond},
		{"millis", "please retry in 250ms", "please retry in 250ms", 250 * time.Millisecond},
		{"no unit", "Please retry in 3 minutes", "Please retry in 3 minutes", 0},
		{"unicode", "İİİ KEY=abcdefgh İ", "İİİ KEY=[REDACTED] İ", 0},
		{"redacted already", "key=[REDACTED] key=", "key=[REDACTED] key=", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := (&Gemini{}).DecodeError(&providers.Error{Status: 429, Message: tt.msg}, nil).(*providers.Error)
			if e.Message != tt.want || e.RetryAfter != tt.wait {
				t.Errorf("got %q, %v; want %q, %v", e.Message, e.RetryAfter, tt.want, tt.wait)
			}
		})
	}
}

// startGeminiMock starts the mock provider for one test.
func startGeminiMock(t *testing.T) *providertest.Server {
	t.Helper()
	m, _, err := providertest.Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// TestGeminiAgainstMock makes round trips against the mock provider. No
// leak check: the mock's fasthttp server keeps its own goroutines.
func TestGeminiAgainstMock(t *testing.T) {
	m := startGeminiMock(t)
	g := newTestGemini(t)
	ctx := context.Background()
	req := func(model, body string) *providers.Request {
		r := codectest.ChatRequest(m.URL(), body)
		r.Model = model
		return r
	}

	t.Run("chat", func(t *testing.T) {
		m.Reset()
		resp, err := g.Chat(ctx, req("gemini-2.5-flash", `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hi"}],"n":2}`))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Object  string
			Model   string
			Choices []struct {
				Index   int
				Message struct{ Role, Content string }
				Finish  string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal(resp.Body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Object != "chat.completion" || got.Model != "gemini-2.5-flash" || len(got.Choices) != 2 ||
			got.Choices[1].Index != 1 || got.Choices[0].Message.Content != "Hello from mock: Say hi" || got.Choices[0].Finish != "stop" {
			t.Errorf("answer %s", resp.Body)
		}
		if want := (llm.Usage{PromptTokens: 4, CompletionTokens: 10, TotalTokens: 14, Present: true}); resp.Usage != want {
			t.Errorf("usage %+v, want %+v", resp.Usage, want)
		}
		r := m.Requests()[0]
		if r.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || r.Header.Get("X-Goog-Api-Key") != codectest.TestKey.Reveal() || r.Query != "" {
			t.Errorf("request %s?%s with key %q", r.Path, r.Query, r.Header.Get("X-Goog-Api-Key"))
		}
	})

	t.Run("stream", func(t *testing.T) {
		for _, wantUsage := range []bool{false, true} {
			r := req("gemini-2.5-flash@chunks=4", `{"messages":[{"role":"user","content":"one two three"}],"stream":true}`)
			r.Stream, r.ClientWantsUsage = true, wantUsage
			s, err := g.ChatStream(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := codectest.ReadChunks(s)
			s.Close()
			if err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
			var text strings.Builder
			var finish []string
			usageChunks := 0
			for _, c := range chunks {
				var ch struct {
					Choices []struct {
						Delta struct {
							Content string
						}
						Finish *string `json:"finish_reason"`
					}
					Usage *struct{ TotalTokens int64 } `json:"usage"`
				}
				if err := json.Unmarshal([]byte(c), &ch); err != nil {
					t.Fatal(err)
				}
				for _, c := range ch.Choices {
					text.WriteString(c.Delta.Content)
					if c.Finish != nil {
						finish = append(finish, *c.Finish)
					}
				}
				if ch.Usage != nil {
					usageChunks++
				}
			}
			if text.String() != "Hello from mock: one two three" || !cmp.Equal(finish, []string{"stop"}) {
				t.Errorf("text %q, finish %v", text.String(), finish)
			}
			if want := map[bool]int{false: 0, true: 1}[wantUsage]; usageChunks != want || !strings.Contains(chunks[len(chunks)-1], `"usage"`) == wantUsage {
				t.Errorf("include_usage %v: %d usage chunks", wantUsage, usageChunks)
			}
			if want := (llm.Usage{PromptTokens: 3, CompletionTokens: 6, TotalTokens: 9, Present: true}); s.Usage() != want {
				t.Errorf("usage %+v, want %+v", s.Usage(), want)
			}
		}
		if q := m.Requests()[len(m.Requests())-1].Query; q != "alt=sse" {
			t.Errorf("query %q", q)
		}
	})

	t.Run("stream reset", func(t *testing.T) {
		m.Script(providertest.Step{ResetAfter: 1})
		r := req("gemini-2.5-flash", `{"messages":[{"role":"user","content":"Hi"}]}`)
		r.Stream = true
		s, err := g.ChatStream(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		chunks, err := codectest.ReadChunks(s)
		if e := providers.AsError(err); len(chunks) != 1 || e == nil || e.Message != "the stream ended before a finish reason" {
			t.Errorf("got %d chunks and %v", len(chunks), err)
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		tests := []struct {
			body, method string
			n            int
			base64       bool
			tokens       int64
		}{
			{`{"input":"hello world"}`, "embedContent", 1, false, 3},
			{`{"input":["hello","world!"],"encoding_format":"float"}`, "batchEmbedContents", 2, false, 3},
			{`{"input":["héllo"],"encoding_format":"base64"}`, "batchEmbedContents", 1, true, 2},
		}
		for _, tt := range tests {
			m.Reset()
			r := req("text-embedding-004", tt.body)
			r.Op = llm.OpEmbeddings
			resp, err := g.Embed(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Object string
				Model  string
				Data   []struct {
					Object    string
					Index     int
					Embedding json.RawMessage
				}
				Usage struct {
					PromptTokens int64 `json:"prompt_tokens"`
					TotalTokens  int64 `json:"total_tokens"`
				}
			}
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Object != "list" || got.Model != "text-embedding-004" || len(got.Data) != tt.n || got.Usage.PromptTokens != tt.tokens {
				t.Errorf("%s: answer %s", tt.body, resp.Body)
			}
			for i, d := range got.Data {
				var vec []float64
				var b64 string
				switch {
				case tt.base64 && json.Unmarshal(d.Embedding, &b64) == nil:
					raw, _ := base64.StdEncoding.DecodeString(b64)
					vec = make([]float64, len(raw)/4)
				case !tt.base64:
					_ = json.Unmarshal(d.Embedding, &vec)
				}
				if d.Object != "embedding" || d.Index != i || len(vec) != 8 {
					t.Errorf("%s: item %d %s", tt.body, i, d.Embedding)
				}
			}
			if want := (llm.Usage{PromptTokens: tt.tokens, TotalTokens: tt.tokens, Estimated: true}); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
			if p := m.Requests()[0].Path; p != "/v1beta/models/text-embedding-004:"+tt.method {
				t.Errorf("path %s", p)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name      string
			step      providertest.Step
			model     string
			key       string
			status    int
			retryable bool
			wait      time.Duration
			msg       string
		}{
			{"429 with Retry-After", providertest.Step{Status: 429, RetryAfter: "7"}, "gemini-2.5-flash", "", 429, true, 7 * time.Second, "Resource has been exhausted"},
			{"429 with a hint", providertest.Step{Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota. Please retry in 1.5s.","status":"RESOURCE_EXHAUSTED"}}`}, "gemini-2.5-flash", "", 429, true, 1500 * time.Millisecond, "Please retry in 1.5s."},
			{"500 retryable", providertest.Step{Status: 500}, "gemini-2.5-flash", "", 500, true, 0, "An internal error has occurred"},
			{"503 directive", providertest.Step{}, "gemini-2.5-flash@status=503", "", 503, true, 0, "overloaded"},
			{"400 not retryable", providertest.Step{Status: 400}, "gemini-2.5-flash", "", 400, false, 0, "invalid argument"},
			{"no key", providertest.Step{}, "gemini-2.5-flash", "none", 403, false, 0, "unregistered callers"},
			{"key in message", providertest.Step{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. key=AIzaSyD-0123456789abcdefghijklmnopqrs sk-test-0123456789abcdefghij","status":"INVALID_ARGUMENT"}}`},
				"gemini-2.5-flash", "", 400, false, 0, "API key not valid. key=[REDACTED] [REDACTED]"},
			{"error with 200", providertest.Step{Body: `{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}`}, "x", "", 404, false, 0, "models/x is not found"},
			{"not JSON", providertest.Step{Body: `<html>oops</html>`}, "x", "", 502, true, 0, providers.ErrInvalidResponse},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m.Reset()
				m.Script(tt.step)
				r := req(tt.model, `{"messages":[{"role":"user","content":"Hi"}]}`)
				if tt.key == "none" {
					r.Cred.Key = ""
				}
				_, err := g.Chat(ctx, r)
				e := providers.AsError(err)
				if e == nil || e.Status != tt.status || e.Retryable() != tt.retryable || e.RetryAfter != tt.wait || !strings.Contains(e.Message, tt.msg) {
					t.Fatalf("got %#v, want status %d retryable %v wait %v message with %q", err, tt.status, tt.retryable, tt.wait, tt.msg)
				}
				if strings.Contains(e.Message, "0123456789") {
					t.Errorf("key in %q", e.Message)
				}
			})
		}
	})

	t.Run("stream error before the first byte", func(t *testing.T) {
		m.Script(providertest.Step{Status: 429, RetryAfter: "2"})
		r := req("gemini-2.5-flash", `{"messages":[{"role":"user","content":"Hi"}]}`)
		r.Stream = true
		_, err := g.ChatStream(ctx, r)
		if e := providers.AsError(err); e == nil || e.Status != 429 || e.RetryAfter != 2*time.Second {
			t.Errorf("got %v", err)
		}
	})
}

func TestGeminiCompletionID(t *testing.T) {
	a, b := completionID(""), completionID("")
	if a == b || !strings.HasPrefix(a, "chatcmpl-") || len(a) != len("chatcmpl-")+24 {
		t.Errorf("random ids %q, %q", a, b)
	}
	if got := completionID("r1"); got != "chatcmpl-r1" {
		t.Errorf("got %q", got)
	}
}

// FuzzGeminiStream feeds the stream translation and the answer
// translation arbitrary bytes: no panic, every chunk a JSON object, counts
// never negative, every failure an *Error with a short, key-free message.
func FuzzGeminiStream(f *testing.F) {
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}]}\r\n\r\n"))
	g := &Gemini{now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, wantUsage := range []bool{false, true} {
			req := &providers.Request{ClientWantsUsage: wantUsage, Cred: providers.Credential{Key: codectest.TestKey}}
			s := newGeminiStream(bytes.NewReader(body), req, now)
			for n := 0; ; n++ {
				c, err := s.Next()
				if err != nil {
					if err != io.EOF {
						checkGeminiFuzzed(t, err)
					}
					break
				}
				var obj map[string]json.RawMessage
				if json.Unmarshal(c, &obj) != nil || string(obj["object"]) != `"chat.completion.chunk"` {
					t.Fatalf("bad chunk %s", c)
				}
				if n > len(body) {
					t.Fatal("more chunks than bytes")
				}
			}
			codectest.CheckFuzzed(t, s.Usage(), nil)
			_ = s.Close()
		}
		resp, err := g.chatAnswer(body, &providers.Request{Model: "m", Cred: providers.Credential{Key: codectest.TestKey}})
		if err != nil {
			checkGeminiFuzzed(t, err)
			return
		}
		if !json.Valid(resp.Body) {
			t.Fatalf("invalid answer %s", resp.Body)
		}
		codectest.CheckFuzzed(t, resp.Usage, nil)
	})
}

func checkGeminiFuzzed(t *testing.T, err error) {
	t.Helper()
	e := providers.AsError(err)
	if e == nil || len(e.Message) > providers.MaxMessage || strings.Contains(e.Message, "0123456789") {
		t.Fatalf("bad error %#v", err)
	}
}

func TestFuzzGeminiStreamSeeds(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzGeminiStream"))
	if err != nil || len(entries) < 5 {
		t.Fatalf("seed corpus: %d entries, %v", len(entries), err)
	}
}
