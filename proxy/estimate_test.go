package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// words is a Tokenizer that counts words, so that expected counts can be
// read off the test bodies.
type words struct{}

func (words) CountBytes(_ string, text []byte) int { return len(strings.Fields(string(text))) }

// estimateCall is the state estimate reads: the request body, the
// operation and the model of the record.
func estimateCall(op llm.Operation, body string) *call {
	return &call{body: []byte(body), route: route{op: op}, rec: &analytics.Record{Model: "m"}}
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	h := &Inference{cfg: InferenceConfig{Tokenizer: words{}}}
	const overhead = tokensPerReply // plus tokensPerMessage per message
	for _, tc := range []struct {
		name    string
		op      llm.Operation
		body    string
		resp    string
		in, out int64
	}{
		{"chat", llm.OpChat,
			`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"say hello to the test"}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"hello test"}}]}`,
			2 + 5 + 2*tokensPerMessage + overhead, 2},
		{"chat parts, names, tool calls and tools", llm.OpChat,
			`{"model":"m","messages":[{"role":"user","name":"ann lee","content":[{"type":"text","text":"look at"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"this"}]},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\": \"a b\"}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"found it"}],` +
				`"tools":[{"type":"function","function":{"name":"lookup"}}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"no way","tool_calls":[{"function":{"name":"f","arguments":"{\"x\": 1}"}}]}},` +
				`{"index":1,"message":{"content":[{"type":"text","text":"one two three"}],"reasoning_content":"think hard"}}]}`,
			2 + 3 + 1 + 3 + 2 + 1 + 3*tokensPerMessage + overhead, 2 + 1 + 2 + 3 + 2},
		{"completion prompt string", llm.OpCompletions, `{"model":"m","prompt":"once upon a time"}`,
			`{"choices":[{"index":0,"text":"there was"},{"index":1,"text":"a gateway"}]}`, 4, 4},
		{"completion prompt strings and tokens", llm.OpCompletions, `{"model":"m","prompt":["a b",[1,2,3],7]}`,
			`{"choices":[]}`, 2 + 3 + 1, 0},
		{"embeddings string", llm.OpEmbeddings, `{"model":"m","input":"hello world"}`,
			`{"data":[{"embedding":[0.1,0.2]}]}`, 2, 0},
		{"embeddings token arrays", llm.OpEmbeddings, `{"model":"m","input":[[1,2],[3,4,5]]}`, ``, 5, 0},
		{"invalid answer", llm.OpChat, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `<html>`,
			1 + tokensPerMessage + overhead, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := h.estimate(estimateCall(tc.op, tc.body), llm.Usage{}, []byte(tc.resp), nil)
			want := llm.Usage{PromptTokens: tc.in, CompletionTokens: tc.out, TotalTokens: tc.in + tc.out, Estimated: true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("estimate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEstimateKeepsReportedUsage: an explicit zero from the provider
// stays zero, and a provider's own estimate (Gemini embeddings) stands.
func TestEstimateKeepsReportedUsage(t *testing.T) {
	t.Parallel()
	h := &Inference{cfg: InferenceConfig{Tokenizer: words{}}}
	c := estimateCall(llm.OpChat, `{"model":"m","messages":[{"role":"user","content":"say hello"}]}`)
	resp := []byte(`{"choices":[{"message":{"content":"hello there"}}]}`)
	for _, u := range []llm.Usage{
		{Present: true},
		{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9, Present: true},
		{PromptTokens: 4, TotalTokens: 4, Estimated: true},
	} {
		if got := h.estimate(c, u, resp, nil); got != u {
			t.Errorf("estimate(%+v) = %+v, want it unchanged", u, got)
		}
	}
}

func chunkOf(content string) string {
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + quote(content) + `}}]}`
}

func TestEstimateStream(t *testing.T) {
	t.Parallel()
	h := &Inference{cfg: InferenceConfig{Tokenizer: words{}}}
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"count to three"}]}`)
	c := estimateCall(llm.OpChat, "")
	sc := newStreamCopy(body)
	defer sc.release()
	// The copy is the stream's own: the request's buffer may be recycled.
	copy(body, "XXXXXXXXXX")
	for _, ch := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`,
		chunkOf("one"), chunkOf(" two"),
		// A chunk whose data came in several lines keeps its line break.
		"{\"choices\":[{\"index\":0,\n\"delta\":{\"content\":\" three\"}}]}",
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\": 1}"}}]}}]}`,
		`not json`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	} {
		sc.add([]byte(ch))
	}
	got := h.estimate(c, llm.Usage{}, nil, sc)
	in := int64(3 + tokensPerMessage + tokensPerReply)
	// The deltas are concatenated: "one two threef{\"a\": 1}" is 4 words.
	out := int64(4)
	want := llm.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Estimated: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimate (-want +got):\n%s", diff)
	}
}

// TestStreamCopyBounded: past maxStreamChunks bytes of chunks, chunks are
// only measured, and the answer's tokens are extrapolated by bytes.
func TestStreamCopyBounded(t *testing.T) {
	t.Parallel()
	h := &Inference{cfg: InferenceConfig{Tokenizer: words{}}}
	c := estimateCall(llm.OpCompletions, "")
	sc := newStreamCopy([]byte(`{"model":"m","prompt":"go"}`))
	defer sc.release()
	chunk := []byte(`{"choices":[{"index":0,"text":"w "}]}`)
	n := 3 * maxStreamChunks / len(chunk)
	for range n {
		sc.add(chunk)
	}
	if !sc.full || len(sc.buf) > sc.bodyLen+maxStreamChunks+maxStreamChunks/len(chunk)*2 {
		t.Fatalf("copy of %d bytes (full %v), want it bounded to about %d", len(sc.buf), sc.full, maxStreamChunks)
	}
	got := h.estimate(c, llm.Usage{}, nil, sc).CompletionTokens
	if want := int64(n); got < want-want/100 || got > want+want/100 {
		t.Errorf("completion tokens %d, want about %d", got, want)
	}
}

// TestTallyBounded: past tokenize.MaxBytes of text, texts are measured
// and extrapolated, not counted.
func TestTallyBounded(t *testing.T) {
	t.Parallel()
	var calls int
	tok := countFunc(func(text string) int { calls++; return len(strings.Fields(text)) })
	tl := tally{tok: tok, model: "m"}
	text := []byte(strings.Repeat("word ", 1<<10)) // 5 KiB, 1024 words
	n := 3 * tokenize.MaxBytes / len(text)
	for range n {
		tl.text(text)
	}
	if want := tokenize.MaxBytes/len(text) + 1; calls > want {
		t.Errorf("%d texts encoded, want at most %d", calls, want)
	}
	if got, want := tl.total(), int64(n*1024); got != want {
		t.Errorf("total %d, want %d", got, want)
	}
}

type countFunc func(string) int

func (f countFunc) CountBytes(_ string, text []byte) int { return f(string(text)) }

// noUsageContent returns the message content of a chat answer and checks
// that it carries no usage.
func noUsageContent(tb testing.TB, body []byte) string {
	tb.Helper()
	var a struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(body, &a); err != nil || len(a.Choices) != 1 {
		tb.Fatalf("answer %s: %v", body, err)
	}
	if len(a.Usage) > 0 && string(a.Usage) != "null" {
		tb.Fatalf("answer %s has usage: the mock should send none", body)
	}
	return a.Choices[0].Message.Content
}

// streamContent returns the concatenated content deltas of a stream.
func streamContent(tb testing.TB, evs []event) string {
	tb.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if k := chunkKind(ev.data); k == "usage" {
			tb.Errorf("usage chunk %s: the mock should send none", ev.data)
		} else if k == "done" || k == "error" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		must(tb, json.Unmarshal([]byte(ev.data), &c))
		for _, ch := range c.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
	return b.String()
}

// TestUsageEstimatedWhenMissing runs the proxy in front of a provider that
// reports no usage: the record counts the tokens with the real tokenizer
// and says usage_estimated, for answers, streams and cut-off streams.
func TestUsageEstimatedWhenMissing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	tok := tokenize.New()
	const model = "gpt-4o-mini"
	prompt := int64(tok.Count(model, "say hello to the test") + tokensPerMessage + tokensPerReply)
	check := func(t *testing.T, id, content string, status int, flags ...string) {
		t.Helper()
		rec := h.record(id)
		out := int64(tok.Count(model, content))
		if rec.Status != status || rec.TokensIn != prompt || rec.TokensOut != out || out == 0 {
			t.Errorf("record status %d tokens %d/%d, want %d and %d/%d", rec.Status, rec.TokensIn, rec.TokensOut, status, prompt, out)
		}
		for _, f := range append(flags, "usage_estimated") {
			if !hasFlag(rec.Flags, f) {
				t.Errorf("record flags %v, want %s", rec.Flags, f)
			}
		}
		if rec.CostUSD <= 0 {
			t.Errorf("record cost %v: the estimate is priced", rec.CostUSD)
		}
	}
	t.Run("answer", func(t *testing.T) {
		h.mock.Script(providertest.Step{NoUsage: true})
		resp, body := h.chat(chatBody("openai/"+model, ""))
		wantStatus(t, resp, body, 200)
		check(t, resp.Header.Get(RequestIDHeader), noUsageContent(t, body), 200)
	})
	t.Run("stream", func(t *testing.T) {
		h.mock.Script(providertest.Step{NoUsage: true, Chunks: 4})
		resp, sr := h.openStream(t, chatBody("openai/"+model, `,"stream":true,"stream_options":{"include_usage":true}`))
		defer resp.Body.Close()
		evs := sr.all(t)
		check(t, resp.Header.Get(RequestIDHeader), streamContent(t, evs), 200)
	})
	t.Run("cut off", func(t *testing.T) {
		h.mock.Script(providertest.Step{NoUsage: true, Chunks: 5, ResetAfter: 2})
		resp, sr := h.openStream(t, chatBody("openai/"+model, `,"stream":true`))
		defer resp.Body.Close()
		evs := sr.all(t)
		check(t, resp.Header.Get(RequestIDHeader), streamContent(t, evs), 502, "partial")
	})
	t.Run("embeddings", func(t *testing.T) {
		h.mock.Script(providertest.Step{NoUsage: true})
		resp, body := h.do("POST", gwPath("compat/embeddings"), bearer(h.token),
			`{"model":"openai/text-embedding-3-small","input":["hello world","tiktoken is great!"]}`)
		wantStatus(t, resp, body, 200)
		rec := h.record(resp.Header.Get(RequestIDHeader))
		// cl100k_base: 2 and 6 tokens.
		if rec.TokensIn != 8 || rec.TokensOut != 0 || !hasFlag(rec.Flags, "usage_estimated") {
			t.Errorf("record tokens %d/%d flags %v, want 8/0 usage_estimated", rec.TokensIn, rec.TokensOut, rec.Flags)
		}
	})
}

// TestUsageReportedIsKept: with usage from the provider, the record has
// the provider's numbers and no usage_estimated, an explicit zero too.
func TestUsageReportedIsKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	t.Run("answer", func(t *testing.T) {
		resp, body := h.chat(chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, body, 200)
		var a struct{ Usage usage }
		must(t, json.Unmarshal(body, &a))
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.TokensIn != a.Usage.PromptTokens || rec.TokensOut != a.Usage.CompletionTokens || a.Usage.PromptTokens == 0 {
			t.Errorf("record tokens %d/%d, want the provider's %+v", rec.TokensIn, rec.TokensOut, a.Usage)
		}
		if hasFlag(rec.Flags, "usage_estimated") {
			t.Errorf("record flags %v: usage was reported", rec.Flags)
		}
	})
	t.Run("explicit zero", func(t *testing.T) {
		up := newSSEUpstream(t, 0, roleFrame, contentFrame("free words"),
			`data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`+"\n\n",
			"data: [DONE]\n\n")
		h.addKeyAt(h.gw.ID, "openai-compatible", "zero", "sk-upstream-zero-0001", up.srv.URL+"/v1")
		h.rebuild()
		resp, sr := h.openStream(t, chatBody("openai-compatible/m", `,"stream":true`))
		defer resp.Body.Close()
		sr.all(t)
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.TokensIn != 0 || rec.TokensOut != 0 || hasFlag(rec.Flags, "usage_estimated") {
			t.Errorf("record tokens %d/%d flags %v, want 0/0 without usage_estimated", rec.TokensIn, rec.TokensOut, rec.Flags)
		}
	})
}

// FuzzEstimate: the estimator parses bytes from clients and providers.
func FuzzEstimate(f *testing.F) {
	f.Add(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"choices":[{"message":{"content":"yo"}}]}`, chunkOf("a"))
	f.Add(`{"prompt":[[1,2],"x",3]}`, `{"choices":[{"text":null}]}`, `{"choices":[{"delta":{"tool_calls":[{"function":{}}]}}]}`)
	f.Add(`{"messages":{"content":1}}`, `[`, "\xff")
	h := &Inference{cfg: InferenceConfig{Tokenizer: words{}}}
	f.Fuzz(func(t *testing.T, body, resp, chunk string) {
		for _, op := range []llm.Operation{llm.OpChat, llm.OpCompletions, llm.OpEmbeddings} {
			u := h.estimate(estimateCall(op, body), llm.Usage{}, []byte(resp), nil)
			sc := newStreamCopy([]byte(body))
			sc.add([]byte(chunk))
			sc.add([]byte(resp))
			v := h.estimate(estimateCall(op, ""), llm.Usage{}, nil, sc)
			sc.release()
			for _, x := range []llm.Usage{u, v} {
				if !x.Estimated || x.PromptTokens < 0 || x.CompletionTokens < 0 || x.TotalTokens != x.PromptTokens+x.CompletionTokens {
					t.Fatalf("estimate %+v", x)
				}
			}
		}
	})
}

// BenchmarkStreamCopy is what every stream pays for a possible estimate:
// the copy of the request body and of its chunks (50 here).
func BenchmarkStreamCopy(b *testing.B) {
	body := []byte(benchBody)
	chunk := []byte(chunkOf(" token"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body) + 50*len(chunk)))
	for b.Loop() {
		sc := newStreamCopy(body)
		for range 50 {
			sc.add(chunk)
		}
		sc.release()
	}
}

// BenchmarkEstimate is the estimate of an answer without usage, with the
// real tokenizer; it runs only when usage is missing.
func BenchmarkEstimate(b *testing.B) {
	h := &Inference{cfg: InferenceConfig{Tokenizer: tokenize.New()}}
	c := estimateCall(llm.OpChat, benchBody)
	c.rec.Model = "gpt-4o-mini"
	resp := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Prince Hamlet avenges his father's murder by his uncle Claudius, feigning madness. Nearly everyone dies in the end, Hamlet included."}}]}`)
	h.estimate(c, llm.Usage{}, resp, nil) // loads the encoding
	b.ReportAllocs()
	for b.Loop() {
		h.estimate(c, llm.Usage{}, resp, nil)
	}
}

// BenchmarkEstimateStream is the estimate of a 50-chunk stream without
// usage.
func BenchmarkEstimateStream(b *testing.B) {
	h := &Inference{cfg: InferenceConfig{Tokenizer: tokenize.New()}}
	c := estimateCall(llm.OpChat, "")
	c.rec.Model = "gpt-4o-mini"
	sc := newStreamCopy([]byte(benchBody))
	for range 50 {
		sc.add([]byte(chunkOf(" token")))
	}
	h.estimate(c, llm.Usage{}, nil, sc)
	b.ReportAllocs()
	for b.Loop() {
		h.estimate(c, llm.Usage{}, nil, sc)
	}
}
