package proxy

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// The reservation is a real bound (CONTRACT §14): under a hard budget a
// request without max_tokens reserves defaultMaxTokens and the upstream
// is told to stop there, in each wire format's field; the prompt is
// bounded by counting its tokens; what still costs more is settled at its
// real cost. Tokens per minute reserve the same worst case at admission.

// capFamily is an adapter family behind the mock, with a priced model.
type capFamily struct {
	provider, model string
	baseURL         func(mock string) string
	key             string
	options         *store.KeyOptions
	// capField is how the cap appears in the upstream body.
	capField string
}

var capFamilies = []capFamily{
	{"openai", "cap-model", func(m string) string { return m + "/v1" }, mainKey, nil, `"max_tokens":4096`},
	{"openai", "o3-cap", func(m string) string { return m + "/v1" }, mainKey, nil, `"max_completion_tokens":4096`},
	{"azure-openai", "cap-model", func(m string) string { return m }, "azure-key-00000001",
		&store.KeyOptions{APIVersion: "2024-10-21"}, `"max_tokens":4096`},
	{"anthropic", "claude-cap", func(m string) string { return m }, "sk-ant-key-00000001", nil, `"max_tokens":4096`},
	{"google", "gemini-cap", func(m string) string { return m }, "google-key-00000001", nil, `"maxOutputTokens":4096`},
	{"bedrock", "amazon.cap-v1:0", func(m string) string { return m }, providertest.MockSecretAccessKey,
		&store.KeyOptions{Region: "us-east-1", AccessKeyID: providertest.MockAccessKeyID}, `"maxTokens":4096`},
	{"cohere", "command-cap", func(m string) string { return m }, "cohere-key-00000001", nil, `"max_tokens":4096`},
}

// familyHarness is a harness whose gateway has a key of f on the mock and
// a price for f's model (inPrice, outPrice).
func familyHarness(t *testing.T, f capFamily) *harness {
	t.Helper()
	h := newHarness(t, harnessConfig{})
	if f.provider != "openai" {
		_, err := h.svc.CreateKey(h.ctx, h.root, h.gw.ID, admin.KeyInput{Provider: f.provider, Alias: "fam", Key: f.key,
			BaseURL: f.baseURL(h.mockURL), Options: f.options})
		must(t, err)
	}
	_, err := h.svc.PutModelPrices(h.ctx, h.root, []admin.PriceInput{
		{Provider: f.provider, Model: f.model, InputPerMTok: inPrice, OutputPerMTok: outPrice}})
	must(t, err)
	h.rebuild()
	return h
}

// TestHardBudgetCapsTheUpstream: on every adapter family, 30 concurrent
// requests without max_tokens against a hard budget of about ten worst
// cases, and an upstream that would answer 20,000 tokens (five times the
// reservation) and counts more prompt tokens than the request holds. The
// upstream is told the cap in its own field, so no answer costs more
// than it reserved: the spend stays within the amount (the contract
// allows one request more), every admitted request's cost is recorded,
// and nothing stays reserved.
func TestHardBudgetCapsTheUpstream(t *testing.T) {
	t.Parallel()
	for _, f := range capFamilies {
		t.Run(f.provider+"/"+f.model, func(t *testing.T) {
			t.Parallel()
			h := familyHarness(t, f)
			body := chatBody(f.provider+"/"+f.model, "")
			prompt := int64(reservedTokens("say hello to the test", 0) - defaultMaxTokens)
			worst := money.Cost(prompt, inPrice) + money.Cost(defaultMaxTokens, outPrice)
			amount := worst*10 + worst/2
			h.update(hardBudget(amount, "monthly"))
			h.mock.Script(providertest.Step{AnswerTokens: 20_000, PromptTokens: int(prompt), Latency: 200 * time.Millisecond, Times: 30})
			var mu sync.Mutex
			var ok []string
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 30 {
				wg.Go(func() {
					<-start
					resp, b := h.post(h.addr, chatPath, h.token, body)
					mu.Lock()
					defer mu.Unlock()
					switch resp.StatusCode {
					case 200:
						ok = append(ok, resp.Header.Get(RequestIDHeader))
					case 429:
						wantBudgetExceeded(t, resp, b)
					default:
						t.Errorf("status %d: %s", resp.StatusCode, b)
					}
				})
			}
			close(start)
			wg.Wait()
			spent, reserved, err := h.inf.cfg.Budgets.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
			must(t, err)
			one := money.Cost(prompt, inPrice) + money.Cost(20_000, outPrice) // an uncapped answer
			t.Logf("admitted %d; worst %s, amount %s, spent %s", len(ok), worst, amount, spent)
			if spent > amount+one {
				t.Errorf("spent %s passes the amount %s by more than one request (%s)", spent, amount, one)
			}
			if spent > amount {
				t.Errorf("spent %s passes the amount %s although the upstream was capped", spent, amount)
			}
			if len(ok) < 10 {
				t.Errorf("%d admitted, want at least 10 (amount / worst case)", len(ok))
			}
			if reserved != 0 {
				t.Errorf("%s still reserved, want 0", reserved)
			}
			var recorded money.USD
			for _, id := range ok {
				recorded += h.record(id).CostUSD
			}
			if recorded != spent {
				t.Errorf("records cost %s, counters %s", recorded, spent)
			}
			for _, r := range h.mock.Requests() {
				if !strings.Contains(string(r.Body), f.capField) {
					t.Errorf("upstream body %s lacks the cap %s", r.Body, f.capField)
					break
				}
			}
		})
	}
}

// TestNoCapWithoutHardBudget: without a hard budget nothing is added to
// the request: a soft budget or none leaves the upstream's own default.
func TestNoCapWithoutHardBudget(t *testing.T) {
	t.Parallel()
	h := familyHarness(t, capFamilies[0])
	body := chatBody("openai/cap-model", "")
	resp, b := h.chat(body) // no budget
	wantStatus(t, resp, b, 200)
	h.update(admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(100), Period: "monthly"})})
	resp, b = h.chat(body) // a soft budget
	wantStatus(t, resp, b, 200)
	for _, r := range h.mock.Requests() {
		if strings.Contains(string(r.Body), "max_tokens") {
			t.Errorf("upstream body %s has a max_tokens nobody set", r.Body)
		}
	}
}

// TestBudgetRealCostBeyondReservation: a reply that costs more than its
// reservation (the upstream counts 200,000 prompt tokens) is settled at
// its real cost, and the next request sees the true spend.
func TestBudgetRealCostBeyondReservation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	amount := pricedWorst() * 5
	h.update(hardBudget(amount, "monthly"))
	h.mock.Script(providertest.Step{PromptTokens: 200_000})
	resp, b := h.chat(pricedBody)
	wantStatus(t, resp, b, 200)
	real := money.Cost(200_000, inPrice) + money.Cost(8, outPrice)
	spent, reserved, err := h.inf.cfg.Budgets.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
	must(t, err)
	if spent != real || reserved != 0 || spent <= amount {
		t.Errorf("spent %s reserved %s, want the real %s (above the amount %s) and 0", spent, reserved, real, amount)
	}
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.CostUSD != real {
		t.Errorf("record cost %s, want %s", rec.CostUSD, real)
	}
	resp, b = h.chat(pricedBody)
	wantBudgetExceeded(t, resp, b)
}

// TestStreamBudgetReconciles (checklist 39): a streamed request without
// max_tokens reserves the default cap and the upstream is told it; a
// stream the upstream ends is settled at its usage, and a stream whose
// client goes away mid-way is settled at the tokens generated so far
// (estimated: the usage chunk never came), recorded 499.
func TestStreamBudgetReconciles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	h.update(hardBudget(money.FromFloat(1000), "monthly"))
	state := func() (money.USD, money.USD) {
		s, r, err := h.inf.cfg.Budgets.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
		must(t, err)
		return s, r
	}
	stream := chatBody("openai/"+pricedModel, `,"stream":true,"stream_options":{"include_usage":true}`)

	h.mock.Script(providertest.Step{AnswerTokens: 10_000, Chunks: 8})
	resp, sr := h.openStream(t, stream)
	sr.all(t)
	resp.Body.Close()
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 200 || rec.TokensOut != defaultMaxTokens {
		t.Errorf("complete stream: status %d tokens_out %d, want 200 and the cap %d", rec.Status, rec.TokensOut, defaultMaxTokens)
	}
	if sent := string(h.mock.Requests()[0].Body); !strings.Contains(sent, `"max_tokens":4096`) {
		t.Errorf("upstream body %s lacks the cap", sent)
	}
	if s, r := state(); s != rec.CostUSD || r != 0 {
		t.Errorf("after a complete stream: spent %s reserved %s, want the record's %s and 0", s, r, rec.CostUSD)
	}
	before, _ := state()

	h.mock.Script(providertest.Step{AnswerTokens: 10_000, Chunks: 200, ChunkDelay: 20 * time.Millisecond})
	resp, sr = h.openStream(t, stream)
	for range 5 {
		if _, err := sr.next(); err != nil {
			t.Fatal(err)
		}
	}
	resp.Body.Close() // the client goes away
	id := resp.Header.Get(RequestIDHeader)
	rec = h.record(id)
	if rec.Status != 499 || rec.TokensOut == 0 || rec.TokensOut >= defaultMaxTokens || rec.CostUSD == 0 {
		t.Errorf("cut stream: status %d tokens_out %d cost %s, want 499 with the tokens generated so far", rec.Status, rec.TokensOut, rec.CostUSD)
	}
	if !waitFor(5*time.Second, func() bool { _, r := state(); return r == 0 }) {
		t.Error("the cut stream's reservation was not released")
	}
	if s, _ := state(); s-before != rec.CostUSD {
		t.Errorf("the cut stream added %s to the spend, want the record's %s", s-before, rec.CostUSD)
	}
}

// tpmRace sends n concurrent requests of body (max_tokens 8) over addrs
// against a tokens-per-minute limit of 100 on the gateway, with an
// upstream slow enough that they are all in flight together, and checks
// that the real tokens of the admitted requests stay within the limit.
func tpmRace(t *testing.T, h *harness, addrs []string, n int) {
	t.Helper()
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{TokensPerMinute: ptr(100)}})
	h.mock.Script(providertest.Step{Latency: 300 * time.Millisecond, Times: n})
	body := chatBody("openai/gpt-4o-mini", `,"max_tokens":8`)
	var mu sync.Mutex
	admitted, tokens, refused := 0, 0, 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			resp, b := h.post(addrs[i%len(addrs)], chatPath, h.token, body)
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case 200:
				admitted++
				u := answerUsage(t, b)
				tokens += int(u.PromptTokens + u.CompletionTokens)
			case 429:
				refused++
				if errCode(b) != "rate_limit_exceeded" || resp.Header.Get("Retry-After") == "" ||
					resp.Header.Get("x-ratelimit-remaining-tokens") == "" {
					t.Errorf("refusal %s without Retry-After or x-ratelimit-remaining-tokens: %v", b, resp.Header)
				}
			default:
				t.Errorf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d admitted (%d tokens), %d refused", admitted, tokens, refused)
	if tokens > 100 {
		t.Errorf("the admitted requests used %d tokens in one minute, the limit is 100", tokens)
	}
	if admitted == 0 || admitted+refused != n {
		t.Errorf("%d admitted and %d refused of %d", admitted, refused, n)
	}
}

// TestTokensPerMinuteUnderConcurrency: 20 concurrent requests against 100
// tokens per minute, per-process counters: each reserves its worst case
// at admission, so the admitted ones fit in the limit.
func TestTokensPerMinuteUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	tpmRace(t, h, []string{h.addr}, 20)
}

// TestPromptBoundCountsTokens: the prompt bound counts tokens: it is at
// least what the tokenizer counts for the text (where a token per 3 bytes
// of the body was not: digits and punctuation run near a token per 2
// bytes), counts an image at imagePartTokens rather than its base64
// bytes, counts tool schemas, and past countedPromptBytes of text counts
// one token per byte (a bound) without encoding it.
func TestPromptBoundCountsTokens(t *testing.T) {
	t.Parallel()
	tok := tokenize.New()
	inf := NewInference(InferenceConfig{Snapshots: &snapSource{}, Tokenizer: tok})
	p := &plan{targets: []routing.Target{{Provider: "openai", Model: "gpt-4o-mini"}}}
	boundOf := func(op llm.Operation, body string) int64 {
		c := &call{body: []byte(body), route: route{op: op}, in: inbound{model: "openai/gpt-4o-mini"}}
		return inf.promptBound(c, p)
	}
	var digits strings.Builder
	for i := range 2000 {
		digits.WriteString(strconv.Itoa(i % 10))
		digits.WriteString(", ")
	}
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8000) // 360 KB
	image := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("iVBORw0KGgo", 20000) + `"}}`
	tools := `,"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"query":{"type":"string","description":"` +
		strings.Repeat("what to look up ", 50) + `"}}}}}]`
	msg := func(content string) string {
		return `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":` + content + `}]`
	}
	for _, tc := range []struct {
		name        string
		op          llm.Operation
		body        string
		atLeast     int64
		atMost      int64
		bytesFailed bool // a token per 3 bytes of the body was below the tokens
	}{
		{"digits", llm.OpChat, msg(quote(digits.String())) + `}`, int64(tok.Count("gpt-4o-mini", digits.String())), 1 << 30, true},
		{"english", llm.OpChat, msg(quote("say hello to the test")) + `}`, 5, 30, false},
		{"image", llm.OpChat, msg(`[{"type":"text","text":"what is this?"},`+image+`]`) + `}`, imagePartTokens, imagePartTokens + 30, false},
		{"tools", llm.OpChat, msg(quote("hi")) + tools + `}`, int64(tok.Count("gpt-4o-mini", strings.Repeat("what to look up ", 50))), 1 << 30, false},
		{"past the counted bytes", llm.OpChat, msg(quote(long)) + `}`, int64(tok.Count("gpt-4o-mini", long)), 1 << 30, false},
		{"completions", llm.OpCompletions, `{"model":"m","prompt":` + quote(digits.String()) + `}`, int64(tok.Count("gpt-4o-mini", digits.String())), 1 << 30, true},
		{"embeddings", llm.OpEmbeddings, `{"model":"m","input":["a b c",[1,2,3]]}`, 6, 6, false},
	} {
		got := boundOf(tc.op, tc.body)
		if got < tc.atLeast || got > tc.atMost {
			t.Errorf("%s: bound %d, want between %d and %d", tc.name, got, tc.atLeast, tc.atMost)
		}
		if bytes := int64(len(tc.body) / promptBytesPerToken); tc.bytesFailed != (bytes < tc.atLeast) {
			t.Errorf("%s: the body's bytes/3 is %d against %d tokens: the case does not show what it should", tc.name, bytes, tc.atLeast)
		}
	}
}

// BenchmarkInferenceChatLimited is BenchmarkInferenceChat under a hard
// budget and a tokens-per-minute limit, with a request without max_tokens:
// the prompt is counted (from the tokenizer's cache after the first
// request) and the upstream capped.
func BenchmarkInferenceChatLimited(b *testing.B) {
	h := newHarness(b, harnessConfig{})
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{TokensPerMinute: ptr(1_000_000_000)},
		Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(1e6), Period: "monthly", Hard: true})})
	inf := NewInference(InferenceConfig{
		Snapshots: &h.snaps, Providers: registry.New(h.client), Breakers: breaker.NewSet(time.Now),
		Sink: discardSink{}, Logger: slog.New(slog.DiscardHandler),
	})
	srv, err := New(Options{Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: slog.New(slog.DiscardHandler)})
	must(b, err)
	ln := fasthttputil.NewInmemoryListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	inf.cfg.Tokenizer.CountBytes("gpt-4o-mini", []byte("load the encoding before the timer"))
	benchRequests(b, c, "http://sluice"+chatPath, "Bearer "+h.token, strings.Replace(benchBody, `,"max_tokens":128`, "", 1))
}

// BenchmarkPromptBound is the cost of counting benchBody's prompt for a
// reservation: cached (the same prompt again, as a system prompt and the
// turns of a conversation are) and uncached (every user message new: the
// worst case, the tokenizer's speed).
func BenchmarkPromptBound(b *testing.B) {
	inf := NewInference(InferenceConfig{Snapshots: &snapSource{}})
	p := &plan{targets: []routing.Target{{Provider: "openai", Model: "gpt-4o-mini"}}}
	c := &call{body: []byte(benchBody), route: route{op: llm.OpChat}, in: inbound{model: "openai/gpt-4o-mini"}}
	inf.promptBound(c, p)
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			inf.promptBound(c, p)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		bodies := make([][]byte, 0, 1<<14)
		for i := range cap(bodies) {
			bodies = append(bodies, []byte(strings.Replace(benchBody, "Hamlet", "Hamlet "+strconv.Itoa(i), 1)))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.body = bodies[i%len(bodies)]
			i++
			inf.promptBound(c, p)
		}
	})
}

// TestCapOnCompletionsAndEmbeddings: under a hard budget a legacy
// completion without max_tokens reserves and is capped at 16 tokens
// (OpenAI's default), whatever the upstream would answer; embeddings
// have no output: nothing is added to their body.
func TestCapOnCompletionsAndEmbeddings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.update(hardBudget(money.FromFloat(100), "monthly"))
	h.mock.Script(providertest.Step{AnswerTokens: 5000})
	resp, b := h.post(h.addr, gwPath("compat/completions"), h.token, `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"say hello"}`)
	wantStatus(t, resp, b, 200)
	if u := answerUsage(t, b); u.CompletionTokens != defaultCompletionTokens {
		t.Errorf("completion tokens %d, want the cap %d", u.CompletionTokens, defaultCompletionTokens)
	}
	resp, b = h.post(h.addr, gwPath("openai/embeddings"), h.token, `{"model":"text-embedding-3-small","input":"hi"}`)
	wantStatus(t, resp, b, 200)
	reqs := h.mock.Requests()
	if sent := string(reqs[0].Body); !strings.Contains(sent, `"max_tokens":16`) {
		t.Errorf("completion body %s lacks the cap", sent)
	}
	if sent := string(reqs[1].Body); strings.Contains(sent, "max_tokens") {
		t.Errorf("embeddings body %s has a cap", sent)
	}
}
