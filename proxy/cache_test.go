package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/respcache"
)

func cacheOn(ttl int) admin.GatewaySettings {
	return admin.GatewaySettings{Cache: &store.CacheSettings{Enabled: true, TTLSeconds: ttl}}
}

func wantCache(t *testing.T, resp *http.Response, want string) {
	t.Helper()
	if got := resp.Header.Get("x-sluice-cache"); got != want {
		t.Errorf("x-sluice-cache %q, want %q", got, want)
	}
}

func TestCacheHitMissBypass(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	body := chatBody("openai/gpt-4o-mini", `,"temperature":0.2`)
	resp, first := h.chat(body)
	wantStatus(t, resp, first, 200)
	wantCache(t, resp, "MISS")
	missRec := h.record(resp.Header.Get(RequestIDHeader))
	calls := h.mock.Count()

	// The same body, and a semantically equal one (key order, white
	// space, escapes, the end-user id), are hits: no upstream call.
	same := `{ "temperature":0.2, "messages":[{"content":"say hello to the test","role":"user"}], "model":"openai/gpt-4o-mini", "user":"u1"}`
	for _, b := range []string{body, same} {
		resp, got := h.chat(b)
		wantStatus(t, resp, got, 200)
		wantCache(t, resp, "HIT")
		if string(got) != string(first) {
			t.Errorf("hit answered %s, want the stored %s", got, first)
		}
		if resp.Header.Get("x-sluice-provider") != "openai" || resp.Header.Get("x-sluice-model") != "gpt-4o-mini" {
			t.Errorf("hit headers %v", resp.Header)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Cache != "HIT" || rec.CostUSD != 0 || rec.CacheSavedUSD != missRec.CostUSD || missRec.CostUSD <= 0 ||
			rec.Provider != "openai" || rec.Model != "gpt-4o-mini" || rec.Status != 200 || rec.Attempts != 0 {
			t.Errorf("hit record cache %q cost %v saved %v (miss cost %v) provider %q model %q status %d attempts %d",
				rec.Cache, rec.CostUSD, rec.CacheSavedUSD, missRec.CostUSD, rec.Provider, rec.Model, rec.Status, rec.Attempts)
		}
	}
	if h.mock.Count() != calls {
		t.Errorf("hits called the provider %d times", h.mock.Count()-calls)
	}
	if missRec.Cache != "MISS" || missRec.CacheSavedUSD != 0 {
		t.Errorf("miss record cache %q saved %v", missRec.Cache, missRec.CacheSavedUSD)
	}

	// x-sluice-skip-cache: BYPASS, the provider is called, and the
	// answer is not stored.
	other := chatBody("openai/gpt-4o-mini", `,"temperature":0.3`)
	resp, b := h.chat(other, "x-sluice-skip-cache", "true")
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "BYPASS")
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Cache != "BYPASS" {
		t.Errorf("record cache %q, want BYPASS", rec.Cache)
	}
	resp, b = h.chat(body, "x-sluice-skip-cache", "true")
	wantCache(t, resp, "BYPASS")
	resp, b = h.chat(other)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "MISS")
	if h.mock.Count() != calls+3 {
		t.Errorf("provider called %d times, want 3", h.mock.Count()-calls)
	}

	// Invalid cache headers are a 400 naming the header.
	for _, hd := range [][2]string{{"x-sluice-cache-ttl", "0"}, {"x-sluice-cache-ttl", "604801"}, {"x-sluice-cache-ttl", "soon"}, {"x-sluice-skip-cache", "maybe"}} {
		resp, b := h.chat(body, hd[0], hd[1])
		wantAPIError(t, resp, b, 400, "invalid_request_error", "invalid_request", hd[0])
	}

	// Cache off: BYPASS.
	h.update(admin.GatewaySettings{Cache: &store.CacheSettings{Enabled: false, TTLSeconds: 300}})
	resp, b = h.chat(body)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "BYPASS")
	if h.mock.Count() != calls+4 {
		t.Errorf("a disabled cache answered")
	}
}

func TestCacheEmbeddingsAndCompletions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	for _, tc := range []struct{ path, body string }{
		{gwPath("compat/embeddings"), `{"model":"openai/text-embedding-3-small","input":"hello"}`},
		{gwPath("compat/completions"), `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"hello"}`},
	} {
		resp, first := h.do("POST", tc.path, bearer(h.token), tc.body)
		wantStatus(t, resp, first, 200)
		wantCache(t, resp, "MISS")
		resp, again := h.do("POST", tc.path, bearer(h.token), tc.body)
		wantStatus(t, resp, again, 200)
		wantCache(t, resp, "HIT")
		if string(again) != string(first) {
			t.Errorf("%s: hit %s, want %s", tc.path, again, first)
		}
	}
	// A legacy completion stored plain replays as a text_completion stream.
	hd := bearer(h.token)
	resp, b := h.do("POST", gwPath("compat/completions"), hd, `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"hello","stream":true}`)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "HIT")
	evs := newSSEReader(strings.NewReader(string(b))).all(t)
	var text strings.Builder
	for _, ev := range evs[:len(evs)-1] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		must(t, json.Unmarshal([]byte(ev.data), &c))
		if c.Object != "text_completion" {
			t.Errorf("replayed chunk %s", ev.data)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Text)
		}
	}
	if evs[len(evs)-1].data != "[DONE]" || text.String() != "Hello from mock: hello" {
		t.Errorf("replay text %q, events %v", text.String(), evs)
	}
}

// A plain answer replays as SSE for a stream request, and a streamed
// answer is stored whole and answers a plain request.
func TestCacheStreamReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	model := "openai/gpt-4o-mini"
	resp, plain := h.chat(chatBody(model, ""))
	wantStatus(t, resp, plain, 200)
	calls := h.mock.Count()
	want := answerText(t, plain)

	for _, includeUsage := range []bool{false, true} {
		extra := `,"stream":true`
		if includeUsage {
			extra += `,"stream_options":{"include_usage":true}`
		}
		resp, sr := h.openStream(t, chatBody(model, extra))
		wantCache(t, resp, "HIT")
		evs := sr.all(t)
		resp.Body.Close()
		got := kinds(evs)
		wantKinds := "other content other done"
		if includeUsage {
			wantKinds = "other content other usage done"
		}
		if strings.Join(got, " ") != wantKinds {
			t.Errorf("include_usage %v: replay events %v, want %s", includeUsage, got, wantKinds)
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		must(t, json.Unmarshal([]byte(evs[1].data), &c))
		if c.Object != "chat.completion.chunk" || c.Choices[0].Delta.Content != want {
			t.Errorf("replayed content chunk %s, want %q", evs[1].data, want)
		}
	}
	if h.mock.Count() != calls {
		t.Errorf("replays called the provider")
	}

	// A stream MISS: the client asked for no usage and gets none, but the
	// stored answer has it.
	body := chatSaying(model+"@chunks=4", "stream me", "")
	text, evKinds, _, id := h.streamText(t, chatSaying(model+"@chunks=4", "stream me", `,"stream":true`))
	if strings.Contains(strings.Join(evKinds, " "), "usage") || text != "Hello from mock: stream me" {
		t.Errorf("miss stream %v text %q", evKinds, text)
	}
	if rec := h.record(id); rec.Cache != "MISS" || rec.TokensIn == 0 {
		t.Errorf("miss record cache %q tokens in %d", rec.Cache, rec.TokensIn)
	}
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "HIT")
	var a struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Role, Content string } `json:"message"`
			FinishReason string                         `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	must(t, json.Unmarshal(b, &a))
	if a.Object != "chat.completion" || len(a.Choices) != 1 || a.Choices[0].Message.Content != text ||
		a.Choices[0].Message.Role != "assistant" || a.Choices[0].FinishReason != "stop" || a.Usage.PromptTokens == 0 {
		t.Errorf("stored stream answered %s", b)
	}
}

// Tool calls streamed in fragments are merged in the stored answer.
func TestCacheStreamToolCallsMerged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	env := `{"id":"chatcmpl-t","object":"chat.completion.chunk","created":7,"model":"m","choices":[`
	frames := []string{
		"data: " + env + `{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":""}}]},"finish_reason":null}]}` + "\n\n",
		"data: " + env + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]},"finish_reason":null}]}` + "\n\n",
		"data: " + env + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]},"finish_reason":null}]}` + "\n\n",
		"data: " + env + `{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
		"data: " + `{"id":"chatcmpl-t","object":"chat.completion.chunk","created":7,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\n",
		"data: [DONE]\n\n",
	}
	up := newSSEUpstream(t, 0, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "tools", "sk-upstream-tools-01", up.srv.URL+"/v1")
	h.rebuild()
	body := chatSaying("openai-compatible/m", "call a tool", "")
	_, evKinds, _, _ := h.streamText(t, chatSaying("openai-compatible/m", "call a tool", `,"stream":true`))
	if evKinds[len(evKinds)-1] != "done" {
		t.Fatalf("events %v", evKinds)
	}
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "HIT")
	var a struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	must(t, json.Unmarshal(b, &a))
	m := a.Choices[0].Message
	if m.Content != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_1" || m.ToolCalls[0].Function.Name != "lookup" ||
		m.ToolCalls[0].Function.Arguments != `{"q":"x"}` || a.Choices[0].FinishReason != "tool_calls" || a.Usage.PromptTokens != 5 {
		t.Errorf("assembled answer %s", b)
	}
	// And replayed as a stream, the tool call comes whole.
	resp, sr := h.openStream(t, chatSaying("openai-compatible/m", "call a tool", `,"stream":true`))
	defer resp.Body.Close()
	evs := sr.all(t)
	if !strings.Contains(evs[1].data, `"arguments":"{\"q\":\"x\"}"`) || !strings.Contains(evs[2].data, `"finish_reason":"tool_calls"`) {
		t.Errorf("replay %v", evs)
	}
}

// Tenants and gateways never share entries: the same body on two
// gateways of one tenant and on a gateway of another tenant reaches the
// provider each time.
func TestCacheIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	paths := map[string]string{chatPath: h.token}
	for _, g := range []struct{ tenant, slug string }{{testTenant, "staging"}, {"globex", "prod"}} {
		gw := h.gateway(g.tenant, g.slug)
		_, err := h.svc.UpdateGateway(h.ctx, h.root, gw.ID, cacheOn(300))
		must(t, err)
		tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, gw.ID, admin.TokenInput{Name: "t"})
		must(t, err)
		paths[chatPathOf(g.tenant, g.slug)] = tok.Secret
	}
	h.rebuild()
	body := chatBody("openai/gpt-4o-mini", `,"seed":7`)
	for path, tok := range paths {
		calls := h.mock.Count()
		resp, b := h.do("POST", path, bearer(tok), body)
		wantStatus(t, resp, b, 200)
		wantCache(t, resp, "MISS")
		if h.mock.Count() != calls+1 {
			t.Errorf("%s: answered from another gateway's cache", path)
		}
		resp, b = h.do("POST", path, bearer(tok), body)
		wantCache(t, resp, "HIT")
	}
}

// clock is a fake time source tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestCacheTTLExpiry(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Now()}
	h := newHarness(t, harnessConfig{gateway: cacheOn(60), now: clk.Now})
	body := chatBody("openai/gpt-4o-mini", `,"seed":1`)
	short := chatBody("openai/gpt-4o-mini", `,"seed":2`)
	resp, _ := h.chat(body) // the gateway's 60 s
	wantCache(t, resp, "MISS")
	resp, _ = h.chat(short, "x-sluice-cache-ttl", "5")
	wantCache(t, resp, "MISS")
	clk.Add(4 * time.Second)
	resp, _ = h.chat(short)
	wantCache(t, resp, "HIT")
	clk.Add(2 * time.Second) // 6 s: past the header's 5 s, within the gateway's 60 s
	resp, _ = h.chat(short)
	wantCache(t, resp, "MISS")
	resp, _ = h.chat(body)
	wantCache(t, resp, "HIT")
	clk.Add(61 * time.Second)
	resp, _ = h.chat(body)
	wantCache(t, resp, "MISS")
}

// Only 200 answers are stored: a request that failed upstream is asked
// again; one that succeeded on a retry is stored.
func TestCacheOnly200Stored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{
		Cache: &store.CacheSettings{Enabled: true, TTLSeconds: 300}, Retry: &store.RetrySettings{MaxAttempts: 2, BackoffMS: 1}}})
	body := chatBody("openai/gpt-4o-mini", `,"seed":3`)
	h.mock.Script(providertest.Step{Status: 500, Times: 2})
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 502)
	h.mock.Script(providertest.Step{Status: 500})
	resp, b = h.chat(body)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "MISS")
	calls := h.mock.Count()
	resp, b = h.chat(body)
	wantStatus(t, resp, b, 200)
	wantCache(t, resp, "HIT")
	if h.mock.Count() != calls {
		t.Errorf("the stored retry answer was not served")
	}
	// An upstream client error is not stored either.
	bad := chatBody("openai/gpt-4o-mini@status=400", "")
	for range 2 {
		resp, b = h.chat(bad)
		wantStatus(t, resp, b, 400)
	}
	if h.mock.Count() != calls+2 {
		t.Errorf("a 400 was served from the cache")
	}
}

// A rule added after an answer was stored applies to the stored answer.
func TestCacheHitPassesResponseRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	body := chatSaying("openai/gpt-4o-mini", "mail bob@example.com", "")
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 200)
	h.addRule(admin.RuleInput{Name: "emails", Direction: "response", Kind: "pii", PII: []string{"email"}, Action: "redact"})
	resp, b = h.chat(body)
	wantCache(t, resp, "HIT")
	if got := answerText(t, b); got != "Hello from mock: mail [REDACTED:email]" {
		t.Errorf("hit answered %q", got)
	}
}

// replica starts a second proxy (another Inference and Server) on the
// harness's configuration and mock, with the given cache store, as a
// second replica would run; it returns its address.
func (h *harness) replica(tb testing.TB, store respcache.Store) string {
	tb.Helper()
	discard := canary.Logger(tb) // checked for canary secrets, then discarded
	inf := NewInference(InferenceConfig{Snapshots: &h.snaps, Providers: registry.New(h.client),
		Breakers: breaker.NewSet(time.Now), Sink: h.sink, Logger: discard, Cache: store})
	srv, err := New(Options{Config: Config{Listen: "127.0.0.1:0"}, Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: discard})
	must(tb, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(tb, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1) // one send, by the serving goroutine
	go func() { done <- srv.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			tb.Errorf("replica Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// Two replicas on one Redis share the cache: what one stored, the other
// serves; entries carry the TTL as a PX expiry.
func TestCacheRedisShared(t *testing.T) {
	t.Parallel()
	client, prefix := testenv.Redis(t)
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	var addrs []string
	for range 2 {
		st, err := respcache.NewRedis(respcache.RedisConfig{Client: client, Prefix: prefix})
		must(t, err)
		addrs = append(addrs, h.replica(t, st))
	}
	post := func(addr, body string, hdr ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("POST", "http://"+addr+chatPath, strings.NewReader(body))
		must(t, err)
		req.Header = bearer(h.token)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := h.hc.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp
	}
	body := chatBody("openai/gpt-4o-mini", `,"seed":11`)
	wantCache(t, post(addrs[0], body, "x-sluice-cache-ttl", "120"), "MISS")
	calls := h.mock.Count()
	wantCache(t, post(addrs[1], body), "HIT")
	wantCache(t, post(addrs[0], body), "HIT")
	if h.mock.Count() != calls {
		t.Errorf("a replica called the provider for a stored answer")
	}
	keys, err := client.Keys(context.Background(), prefix+"*").Result()
	must(t, err)
	if len(keys) != 1 {
		t.Fatalf("keys %v, want one entry", keys)
	}
	if ttl := client.PTTL(context.Background(), keys[0]).Val(); ttl <= 0 || ttl > 120*time.Second {
		t.Errorf("PTTL %s, want (0, 120s]", ttl)
	}
}

// A Redis that does not answer makes every request a MISS answered by the
// provider, never an error.
func TestCacheRedisDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	down, err := respcache.NewRedis(respcache.RedisConfig{Client: client, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	addr := h.replica(t, down)
	body := chatBody("openai/gpt-4o-mini", "")
	for range 2 {
		req, err := http.NewRequest("POST", "http://"+addr+chatPath, strings.NewReader(body))
		must(t, err)
		req.Header = bearer(h.token)
		resp, err := h.hc.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("with Redis down: status %d", resp.StatusCode)
		}
		wantCache(t, resp, "MISS")
	}
}

// benchClient serves h's configuration through a fresh Inference with a
// discarding sink on an in-memory listener, as BenchmarkInferenceChat does.
func benchClient(b *testing.B, h *harness) *fasthttp.Client {
	inf := NewInference(InferenceConfig{
		Snapshots: &h.snaps, Providers: registry.New(h.client), Breakers: breaker.NewSet(time.Now),
		Sink: discardSink{}, Logger: slog.New(slog.DiscardHandler),
	})
	srv, err := New(Options{Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: slog.New(slog.DiscardHandler)})
	must(b, err)
	ln := fasthttputil.NewInmemoryListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1) // one send, by the serving goroutine
	go func() { done <- srv.Serve(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })
	return &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
}

// BenchmarkInferenceCacheHit is BenchmarkInferenceChat answered from the
// in-process cache.
func BenchmarkInferenceCacheHit(b *testing.B) {
	h := newHarness(b, harnessConfig{gateway: cacheOn(3600)})
	benchRequests(b, benchClient(b, h), "http://sluice"+chatPath, "Bearer "+h.token, benchBody)
}

// TestCacheTTLHeaderOnlyShortens: x-sluice-cache-ttl may shorten the
// gateway's TTL but never stretch it: an answer stored with a header
// longer than the gateway's 60 s is gone after 60 s.
func TestCacheTTLHeaderOnlyShortens(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Now()}
	h := newHarness(t, harnessConfig{gateway: cacheOn(60), now: clk.Now})
	body := chatBody("openai/gpt-4o-mini", `,"seed":21`)
	resp, _ := h.chat(body, "x-sluice-cache-ttl", "3600")
	wantCache(t, resp, "MISS")
	clk.Add(59 * time.Second)
	resp, _ = h.chat(body)
	wantCache(t, resp, "HIT")
	clk.Add(2 * time.Second) // 61 s: past the gateway's TTL, within the header's
	resp, _ = h.chat(body)
	wantCache(t, resp, "MISS")
}
