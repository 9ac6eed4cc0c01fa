package providertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

// geminiPost sends body to a Gemini path with key in x-goog-api-key (none
// when key is "").
func geminiPost(t *testing.T, s *Server, path, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type geminiTestResponse struct {
	Candidates []struct {
		Content struct {
			Role  string
			Parts []struct{ Text string }
		}
		FinishReason string
		Index        int
	}
	UsageMetadata *struct {
		PromptTokenCount, CandidatesTokenCount, TotalTokenCount int
	}
	ModelVersion string
	ResponseID   string
}

type geminiTestError struct {
	Error struct {
		Code    int
		Message string
		Status  string
	}
}

const geminiChat = `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"first"}]},{"role":"model","parts":[{"text":"ok"}]},{"role":"user","parts":[{"text":"Say"},{"inlineData":{"mimeType":"image/png","data":"AA=="}},{"text":"hi to me"}]}]}`

func TestGeminiGenerate(t *testing.T) {
	s := start(t)
	resp := geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", testKey, geminiChat)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	got := decode[geminiTestResponse](t, body)
	if len(got.Candidates) != 1 || got.ModelVersion != "gemini-2.5-flash" || !strings.HasPrefix(got.ResponseID, "mock-") {
		t.Fatalf("answer %s", body)
	}
	c := got.Candidates[0]
	if c.Content.Role != "model" || len(c.Content.Parts) != 1 || c.Content.Parts[0].Text != "Hello from mock: Say hi to me" || c.FinishReason != "STOP" {
		t.Errorf("candidate %+v", c)
	}
	// Prompt: 2 system words, 1 + 1 + 4 in the contents; answer 3 + 4.
	if u := got.UsageMetadata; u == nil || u.PromptTokenCount != 8 || u.CandidatesTokenCount != 7 || u.TotalTokenCount != 15 {
		t.Errorf("usage %+v", u)
	}
	r := s.Requests()[0]
	if r.Header.Get("X-Goog-Api-Key") != testKey || r.Path != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("recorded %s with key %q", r.Path, r.Header.Get("X-Goog-Api-Key"))
	}

	resp = geminiPost(t, s, "/v1beta/models/m:generateContent", testKey,
		`{"contents":[{"parts":[{"text":"a b"}]}],"generationConfig":{"candidateCount":3}}`)
	got = decode[geminiTestResponse](t, readAll(t, resp))
	if len(got.Candidates) != 3 || got.Candidates[2].Index != 2 || got.UsageMetadata.CandidatesTokenCount != 15 {
		t.Errorf("3 candidates: %+v", got)
	}
}

func TestGeminiStream(t *testing.T) {
	s := start(t)
	const delay = 50 * time.Millisecond
	s.Script(Step{ChunkDelay: delay, Chunks: 2})
	t0 := time.Now()
	resp := geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", testKey,
		`{"contents":[{"role":"user","parts":[{"text":"one two"}]}]}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	events, err := readSSE(t, resp, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3: %v", len(events), events)
	}
	if gap := events[1].at - events[0].at; gap < delay*3/4 {
		t.Errorf("second chunk %v after the first, want about %v", gap, delay)
	}
	var text strings.Builder
	for i, e := range events {
		got := decode[geminiTestResponse](t, []byte(strings.TrimSuffix(e.data, "\r")))
		text.WriteString(got.Candidates[0].Content.Parts[0].Text)
		final := i == len(events)-1
		if (got.Candidates[0].FinishReason == "STOP") != final || (got.UsageMetadata.CandidatesTokenCount > 0) != final {
			t.Errorf("event %d: %s", i, e.data)
		}
	}
	if text.String() != "Hello from mock: one two" {
		t.Errorf("text %q", text.String())
	}

	// Without alt=sse: one JSON array.
	resp = geminiPost(t, s, "/v1beta/models/m:streamGenerateContent", testKey, `{"contents":[{"parts":[{"text":"x"}]}]}`)
	body := readAll(t, resp)
	var arr []geminiTestResponse
	if err := json.Unmarshal(body, &arr); err != nil || len(arr) != 4 || arr[3].Candidates[0].FinishReason != "STOP" {
		t.Errorf("array answer (%v): %s", err, body)
	}
}

func TestGeminiStreamReset(t *testing.T) {
	s := start(t)
	resp := geminiPost(t, s, "/v1beta/models/m@chunks=4@reset=2:streamGenerateContent?alt=sse", testKey,
		`{"contents":[{"parts":[{"text":"x"}]}]}`)
	events, err := readSSE(t, resp, time.Now())
	if err == nil || len(events) != 2 {
		t.Errorf("got %d events and %v, want 2 and a cut", len(events), err)
	}
	for _, e := range events {
		if strings.Contains(e.data, "finishReason") {
			t.Errorf("finishReason before the reset: %s", e.data)
		}
	}
}

func TestGeminiEmbed(t *testing.T) {
	s := start(t)
	resp := geminiPost(t, s, "/v1beta/models/text-embedding-004:embedContent", testKey,
		`{"model":"models/text-embedding-004","content":{"parts":[{"text":"hello"}]}}`)
	var one struct{ Embedding struct{ Values []float64 } }
	if err := json.Unmarshal(readAll(t, resp), &one); err != nil || len(one.Embedding.Values) != embeddingDims {
		t.Fatalf("embedContent: %v %+v", err, one)
	}
	resp = geminiPost(t, s, "/v1beta/models/text-embedding-004:batchEmbedContents", testKey,
		`{"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"hello"}]}},{"model":"models/text-embedding-004","content":{"parts":[{"text":"other"}]}}]}`)
	var batch struct{ Embeddings []struct{ Values []float64 } }
	if err := json.Unmarshal(readAll(t, resp), &batch); err != nil || len(batch.Embeddings) != 2 {
		t.Fatalf("batchEmbedContents: %v %+v", err, batch)
	}
	if !cmp.Equal(batch.Embeddings[0].Values, one.Embedding.Values) || cmp.Equal(batch.Embeddings[1].Values, one.Embedding.Values) {
		t.Error("equal texts must get equal vectors, different texts different ones")
	}
}

func TestGeminiErrors(t *testing.T) {
	s := start(t)
	const chat = `{"contents":[{"parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name, path, key, body string
		step                  *Step
		want                  int
		wantStatus            string
	}{
		{"no key", "/v1beta/models/m:generateContent", "", chat, nil, 403, "PERMISSION_DENIED"},
		{"key in query", "/v1beta/models/m:generateContent?key=k", "", chat, nil, 200, ""},
		{"unknown method", "/v1beta/models/m:countTokens", testKey, chat, nil, 404, "NOT_FOUND"},
		{"no method", "/v1beta/models/m", testKey, chat, nil, 404, "NOT_FOUND"},
		{"bad JSON", "/v1beta/models/m:generateContent", testKey, `{"contents":`, nil, 400, "INVALID_ARGUMENT"},
		{"no contents", "/v1beta/models/m:generateContent", testKey, `{}`, nil, 400, "INVALID_ARGUMENT"},
		{"too many candidates", "/v1beta/models/m:generateContent", testKey, `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":9}}`, nil, 400, "INVALID_ARGUMENT"},
		{"batch model mismatch", "/v1beta/models/a:batchEmbedContents", testKey, `{"requests":[{"model":"models/b","content":{"parts":[{"text":"x"}]}}]}`, nil, 400, "INVALID_ARGUMENT"},
		{"no content", "/v1beta/models/a:embedContent", testKey, `{}`, nil, 400, "INVALID_ARGUMENT"},
		{"bad directive", "/v1beta/models/m@chunks=0:generateContent", testKey, chat, nil, 400, "INVALID_ARGUMENT"},
		{"status directive", "/v1beta/models/m@status=503:generateContent", testKey, chat, nil, 503, "UNAVAILABLE"},
		{"scripted 429", "/v1beta/models/m:generateContent", "", chat, &Step{Status: 429, RetryAfter: "3"}, 429, "RESOURCE_EXHAUSTED"},
		{"scripted 500", "/v1beta/models/m:streamGenerateContent?alt=sse", testKey, chat, &Step{Status: 500}, 500, "INTERNAL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.step != nil {
				s.Script(*tt.step)
			}
			resp := geminiPost(t, s, tt.path, tt.key, tt.body)
			body := readAll(t, resp)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
			if tt.want == 200 {
				return
			}
			e := decode[geminiTestError](t, body)
			if e.Error.Code != tt.want || e.Error.Status != tt.wantStatus || e.Error.Message == "" {
				t.Errorf("error %s, want code %d status %s", body, tt.want, tt.wantStatus)
			}
			if tt.step != nil && tt.step.RetryAfter != resp.Header.Get("Retry-After") {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		})
	}
}

func FuzzGeminiRequest(f *testing.F) {
	f.Add([]byte(geminiChat))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":8}}`))
	f.Add([]byte(`{"requests":[{"model":"models/m","content":{"parts":[{"text":"a"}]}}],"content":{"parts":[]}}`))
	s := New(Options{MaxRecorded: -1})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1beta/models/m:generateContent", "/v1beta/models/m:streamGenerateContent",
			"/v1beta/models/m:streamGenerateContent?alt=sse", "/v1beta/models/m:embedContent", "/v1beta/models/m:batchEmbedContents"} {
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, nil, nil)
			ctx.Request.Header.SetMethod("POST")
			ctx.Request.SetRequestURI(path)
			ctx.Request.Header.Set("x-goog-api-key", "k")
			ctx.Request.SetBody(body)
			h(&ctx)
			if ctx.Response.IsBodyStream() {
				ctx.Response.Reset()
				continue
			}
			if b := ctx.Response.Body(); !json.Valid(b) || !bytes.HasPrefix(b, []byte("{")) && !bytes.HasPrefix(b, []byte("[")) {
				t.Errorf("%s: invalid JSON answer %q", path, b)
			}
		}
	})
}
