package proxy

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/ratelimit"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// Rate limits (CONTRACT §7, docs/governance.md "Rate limits"): requests
// and tokens per minute on the gateway, the token and the user, sliding
// windows, 429 rate_limit_exceeded with Retry-After and the x-ratelimit-*
// headers; shared by replicas through Redis.

// limitClock is a settable proxy clock that starts at the wall clock on
// a second boundary (request deadlines derive from it, so it must not lag
// far behind).
type limitClock struct{ ns atomic.Int64 }

func newLimitClock() *limitClock {
	c := &limitClock{}
	c.ns.Store(time.Now().Truncate(time.Second).UnixNano())
	return c
}

func (c *limitClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *limitClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *limitClock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }

// limitProc is another proxy process over the harness's configuration,
// mock provider and sink, with its own limiter and budgets: one of the
// replicas of a scaled-out deployment.
type limitProc struct {
	addr string
	inf  *Inference
}

func (h *harness) limitReplica(t *testing.T, lim ratelimit.Limiter, b *budget.Manager) *limitProc {
	t.Helper()
	discard := slog.New(slog.DiscardHandler)
	inf := NewInference(InferenceConfig{
		Snapshots: &h.snaps,
		Providers: registry.New(h.client),
		Breakers:  breaker.NewSet(time.Now),
		Sink:      h.sink,
		Logger:    discard,
		Limiter:   lim,
		Budgets:   b,
	})
	srv, err := New(Options{Config: Config{Listen: "127.0.0.1:0"}, Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: discard})
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1) // one send, by the serving goroutine
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		// A connection the client dialed but never used counts as busy
		// for fasthttp's shutdown until its read timeout: close them.
		h.hc.CloseIdleConnections()
		stop()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("replica Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("replica Serve did not return")
		}
	})
	return &limitProc{addr: ln.Addr().String(), inf: inf}
}

// post sends a chat request with token to the proxy at addr.
func (h *harness) post(addr, path, token, body string) (*http.Response, []byte) {
	h.tb.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
	must(h.tb, err)
	req.Header = bearer(token)
	resp, err := h.hc.Do(req)
	if err != nil {
		h.tb.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(h.tb, err)
	return resp, b
}

// sharedRedis returns a Redis limiter and budget manager on client c
// under prefix: replicas built from the same c (or its address) and
// prefix share their counters. The timeout is generous: these tests check
// the shared counters, not the fallback (which must not kick in).
func sharedRedis(t *testing.T, c redis.Scripter, prefix string, timeout time.Duration) (*ratelimit.Redis, *budget.Manager) {
	t.Helper()
	discard := slog.New(slog.DiscardHandler)
	lim, err := ratelimit.NewRedis(ratelimit.RedisConfig{Client: c, Prefix: prefix + "rl:", Timeout: timeout,
		RetryInterval: 50 * time.Millisecond, Logger: discard})
	must(t, err)
	b, err := budget.NewManager(budget.Config{Redis: c, Prefix: prefix + "budget:", Timeout: timeout,
		RetryInterval: 50 * time.Millisecond, Logger: discard})
	must(t, err)
	return lim, b
}

// redisClient is a client of the test Redis with the options `sluice
// serve` uses: no retries, context deadlines honoured.
func redisClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	must(t, err)
	if addr != "" {
		opts.Addr = addr
	}
	opts.MaxRetries, opts.ContextTimeoutEnabled, opts.DialerRetries = -1, true, 1
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// wantLimitHeaders checks the x-ratelimit-* trio of unit ("requests" or
// "tokens"); reset "" means any duration.
func wantLimitHeaders(t *testing.T, resp *http.Response, unit string, limit, remaining int, reset string) {
	t.Helper()
	got := []string{resp.Header.Get("x-ratelimit-limit-" + unit), resp.Header.Get("x-ratelimit-remaining-" + unit)}
	want := []string{strconv.Itoa(limit), strconv.Itoa(remaining)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("x-ratelimit-limit/remaining-%s (-want +got):\n%s", unit, diff)
	}
	r := resp.Header.Get("x-ratelimit-reset-" + unit)
	if _, err := time.ParseDuration(r); err != nil || (reset != "" && r != reset) {
		t.Errorf("x-ratelimit-reset-%s = %q, want %q", unit, r, reset)
	}
}

func rpm(n int) *store.RateLimit { return &store.RateLimit{RequestsPerMinute: ptr(n)} }

// TestRateLimitScopes: 3 requests per minute on the gateway, the token or
// the user: exactly 3 of 5 sequential requests pass; every answer carries
// the x-ratelimit-*-requests headers; the refusals are 429
// rate_limit_exceeded with Retry-After; the window slides.
func TestRateLimitScopes(t *testing.T) {
	t.Parallel()
	for _, scope := range []string{"gateway", "token", "user"} {
		t.Run(scope, func(t *testing.T) {
			t.Parallel()
			clk := newLimitClock()
			h := newHarness(t, harnessConfig{now: clk.now})
			token := h.token
			switch scope {
			case "gateway":
				h.update(admin.GatewaySettings{RateLimit: rpm(3)})
			case "token":
				tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "limited", RateLimit: rpm(3)})
				must(t, err)
				token = tok.Secret
			case "user":
				u, secret := h.userToken(testTenant, auth.Member, "member@acme.test", h.gw.ID)
				_, err := h.svc.UpdateUser(h.ctx, h.root, u.ID, admin.UserPatch{RateLimit: rpm(3)})
				must(t, err)
				token = secret
			}
			h.rebuild()
			start := clk.now()
			for i := range 3 {
				resp, b := h.post(h.addr, chatPath, token, chatBody("openai/gpt-4o-mini", ""))
				wantStatus(t, resp, b, 200)
				wantLimitHeaders(t, resp, "requests", 3, 2-i, "1m0s")
				clk.advance(10 * time.Second)
			}
			// At +30 s the three counts of seconds 0, 10, 20 fill the window.
			for range 2 {
				resp, b := h.post(h.addr, chatPath, token, chatBody("openai/gpt-4o-mini", ""))
				wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
				if ra := resp.Header.Get("Retry-After"); ra != "30" {
					t.Errorf("Retry-After %q, want 30 (the count of second 0 leaves at +60 s)", ra)
				}
				wantLimitHeaders(t, resp, "requests", 3, 0, "50s")
				if !strings.Contains(string(b), "this "+scope+" allows 3 requests per minute") {
					t.Errorf("message %s does not name the %s limit", b, scope)
				}
			}
			if n := h.mock.Count(); n != 3 {
				t.Errorf("the provider saw %d requests, want 3", n)
			}
			// Second 0 leaves the window at +60 s: one more passes.
			clk.set(start.Add(60 * time.Second))
			resp, b := h.post(h.addr, chatPath, token, chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 200)
			wantLimitHeaders(t, resp, "requests", 3, 0, "1m0s")
			resp, b = h.post(h.addr, chatPath, token, chatBody("openai/gpt-4o-mini", ""))
			wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if rec.Status != 429 || rec.ErrorCode != "rate_limit_exceeded" {
				t.Errorf("record status %d code %q, want 429 rate_limit_exceeded", rec.Status, rec.ErrorCode)
			}
		})
	}
}

// TestRateLimitRefund: a request refused by its token's limit does not
// use up the gateway's.
func TestRateLimitRefund(t *testing.T) {
	t.Parallel()
	clk := newLimitClock()
	h := newHarness(t, harnessConfig{now: clk.now})
	h.update(admin.GatewaySettings{RateLimit: rpm(10)})
	tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "two", RateLimit: rpm(2)})
	must(t, err)
	h.rebuild()
	codes := ""
	for range 4 {
		resp, _ := h.post(h.addr, chatPath, tok.Secret, chatBody("openai/gpt-4o-mini", ""))
		codes += strconv.Itoa(resp.StatusCode) + " "
	}
	if codes != "200 200 429 429 " {
		t.Errorf("statuses %s, want 200 200 429 429", codes)
	}
	d, err := h.inf.cfg.Limiter.Allow(context.Background(), "gw:"+h.gw.ID+":rpm", 10, 0, clk.now())
	must(t, err)
	if d.Remaining != 8 {
		t.Errorf("gateway window has %d remaining, want 8 (the refused requests were taken back)", d.Remaining)
	}
	// The gateway token without a limit of its own shows the gateway's.
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	wantLimitHeaders(t, resp, "requests", 10, 7, "")
}

// reservedTokens is what a chat request of one user message of text and
// max_tokens (0: none) reserves against a tokens-per-minute limit, as
// docs/governance.md states it: the message's tokens plus a quarter, the
// chat overhead, and the output.
func reservedTokens(text string, maxTokens int) int {
	n := tokenize.New().Count("gpt-4o-mini", text)
	if maxTokens == 0 {
		maxTokens = defaultMaxTokens
	}
	return n + n/promptMargin + tokensPerMessage + tokensPerReply + maxTokens
}

// TestRateLimitTokens: a tokens-per-minute window reserves the request's
// worst case in tokens at admission — the x-ratelimit-remaining-tokens
// header counts it — and holds its real tokens once it ends; a request
// whose worst case is more than the limit reserves the whole limit, so
// it needs an empty window; streamed tokens count too.
func TestRateLimitTokens(t *testing.T) {
	t.Parallel()
	clk := newLimitClock()
	h := newHarness(t, harnessConfig{now: clk.now})
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{TokensPerMinute: ptr(100)}})
	key := "gw:" + h.gw.ID + ":tpm"
	window := func() int {
		d, err := h.inf.cfg.Limiter.Allow(context.Background(), key, 100, 0, clk.now())
		must(t, err)
		return 100 - d.Remaining
	}
	capped := chatBody("openai/gpt-4o-mini", `,"max_tokens":8`)
	reserve := reservedTokens("say hello to the test", 8)
	used := 0
	for i := 0; used+reserve <= 100; i++ {
		resp, b := h.chat(capped)
		wantStatus(t, resp, b, 200)
		wantLimitHeaders(t, resp, "tokens", 100, 100-used-reserve, "")
		if resp.Header.Get("x-ratelimit-limit-requests") != "" {
			t.Error("requests headers without a requests limit")
		}
		u := answerUsage(t, b)
		used += int(u.PromptTokens + u.CompletionTokens)
		if got := window(); got != used {
			t.Errorf("after request %d the window holds %d tokens, want the real %d", i, got, used)
		}
		if i > 10 {
			t.Fatal("never refused")
		}
	}
	resp, b := h.chat(capped)
	wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
	wantLimitHeaders(t, resp, "tokens", 100, 100-used, "")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if !strings.Contains(string(b), "100 tokens per minute") {
		t.Errorf("message %s does not name the tokens limit", b)
	}
	if got := window(); got != used {
		t.Errorf("the refusal left %d tokens in the window, want %d", got, used)
	}
	// A refusal by the tokens limit still shows the requests limit, not
	// counting the refused request.
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{TokensPerMinute: ptr(100), RequestsPerMinute: ptr(100)}})
	resp, b = h.chat(capped)
	wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
	wantLimitHeaders(t, resp, "requests", 100, 100, "0s")

	// Without max_tokens the worst case (4096 answer tokens) is more than
	// the limit: the request reserves all 100, so only an empty window
	// admits it.
	clk.advance(2 * time.Minute)
	uncapped := chatBody("openai/gpt-4o-mini", "")
	resp, b = h.chat(uncapped)
	wantStatus(t, resp, b, 200)
	wantLimitHeaders(t, resp, "tokens", 100, 0, "")
	resp, b = h.chat(uncapped)
	wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")

	// A streamed request's tokens count too.
	clk.advance(2 * time.Minute)
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"max_tokens":8,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	if !waitFor(5*time.Second, func() bool { return window() == 13 }) {
		t.Errorf("the stream left %d tokens in the window, want its 13", window())
	}
}

// TestLimitHeadersSurviveErrors: an admitted request that fails upstream
// still answers the x-ratelimit-* headers.
func TestLimitHeadersSurviveErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{RequestsPerMinute: ptr(100), TokensPerMinute: ptr(1000)},
		Retry: &store.RetrySettings{MaxAttempts: 1}})
	h.mock.Script(providertest.Step{Status: 500})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", `,"max_tokens":8`))
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	wantLimitHeaders(t, resp, "requests", 100, 99, "")
	wantLimitHeaders(t, resp, "tokens", 1000, 1000-reservedTokens("say hello to the test", 8), "")
}

// TestEveryRouteIsLimited: chat, completions and embeddings on the compat
// and provider paths, and playground and Administrator tokens, all count
// against the gateway's requests per minute.
func TestEveryRouteIsLimited(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.update(admin.GatewaySettings{RateLimit: rpm(6)})
	pg, err := h.svc.CreatePlaygroundToken(h.ctx, h.root, h.gw.ID)
	must(t, err)
	adminTok, err := h.svc.CreateUserToken(h.ctx, h.root, h.root.UserID, admin.TokenInput{Name: "admin"})
	must(t, err)
	h.rebuild()
	reqs := []struct{ path, token, body string }{
		{gwPath("compat/chat/completions"), h.token, chatBody("openai/gpt-4o-mini", "")},
		{gwPath("openai/chat/completions"), h.token, chatBody("gpt-4o-mini", "")},
		{gwPath("compat/completions"), h.token, `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"hi"}`},
		{gwPath("openai/embeddings"), h.token, `{"model":"text-embedding-3-small","input":"hi"}`},
		{gwPath("compat/chat/completions"), pg.Token, chatBody("openai/gpt-4o-mini", "")},
		{gwPath("compat/chat/completions"), adminTok.Secret, chatBody("openai/gpt-4o-mini", "")},
	}
	for i, r := range reqs {
		resp, b := h.post(h.addr, r.path, r.token, r.body)
		wantStatus(t, resp, b, 200)
		wantLimitHeaders(t, resp, "requests", 6, 5-i, "")
	}
	for _, r := range reqs {
		resp, b := h.post(h.addr, r.path, r.token, r.body)
		wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
	}
}

// TestRateLimitAcrossReplicas (checklist 42): three proxies sharing one
// Redis, a 100-rpm gateway limit and 1000 requests: exactly 100 are
// admitted (the count is one atomic script: no tolerance); every 429
// carries Retry-After and the x-ratelimit-*-requests headers; the window
// key carries a TTL of the window and a second.
func TestRateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	client, prefix := testenv.Redis(t)
	h := newHarness(t, harnessConfig{})
	h.update(admin.GatewaySettings{RateLimit: rpm(100)})
	var reps []*limitProc
	var lims []*ratelimit.Redis
	for range 3 {
		lim, b := sharedRedis(t, redisClient(t, ""), prefix, 10*time.Second)
		lims = append(lims, lim)
		reps = append(reps, h.limitReplica(t, lim, b))
	}
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50) // 50 clients at a time
	for i := range 1000 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			resp, b := h.post(reps[i%3].addr, chatPath, h.token, chatBody("openai/gpt-4o-mini", ""))
			switch {
			case resp.StatusCode == 200:
				ok.Add(1)
			case resp.StatusCode == 429 && errCode(b) == "rate_limit_exceeded":
				limited.Add(1)
				ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
				if err != nil || ra < 1 || ra > 60 || resp.Header.Get("x-ratelimit-remaining-requests") != "0" ||
					resp.Header.Get("x-ratelimit-limit-requests") != "100" || resp.Header.Get("x-ratelimit-reset-requests") == "" {
					t.Errorf("429 headers Retry-After %q, x-ratelimit-limit/remaining/reset-requests %q %q %q",
						resp.Header.Get("Retry-After"), resp.Header.Get("x-ratelimit-limit-requests"),
						resp.Header.Get("x-ratelimit-remaining-requests"), resp.Header.Get("x-ratelimit-reset-requests"))
				}
			default:
				t.Errorf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 100 || limited.Load() != 900 {
		t.Errorf("%d admitted and %d limited, want exactly 100 and 900", ok.Load(), limited.Load())
	}
	if n := h.mock.Count(); n != 100 {
		t.Errorf("the provider saw %d requests, want 100", n)
	}
	for i, l := range lims {
		if n := l.Fallbacks(); n != 0 {
			t.Errorf("replica %d fell back %d times", i, n)
		}
	}
	key := prefix + "rl:gw:" + h.gw.ID + ":rpm"
	if ttl := client.PTTL(context.Background(), key).Val(); ttl <= 0 || ttl > ratelimit.Window+time.Second {
		t.Errorf("PTTL of %s is %s, want (0, %s]", key, ttl, ratelimit.Window+time.Second)
	}
}

// BenchmarkAdmitSettle is the per-request cost of the limits with every
// limit of a gateway token set (requests and tokens per minute, a hard
// budget), per-process counters.
func BenchmarkAdmitSettle(b *testing.B) {
	benchAdmitSettle(b, false)
}

// BenchmarkAdmitSettleThreeBudgets is BenchmarkAdmitSettle with hard
// budgets on the tenant and the token too: three budgets reserve and
// settle per request.
func BenchmarkAdmitSettleThreeBudgets(b *testing.B) {
	benchAdmitSettle(b, true)
}

func benchAdmitSettle(b *testing.B, threeBudgets bool) {
	h := newHarness(b, harnessConfig{})
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{RequestsPerMinute: ptr(10_000_000), TokensPerMinute: ptr(1_000_000_000)},
		Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(1e6), Period: "monthly", Hard: true})})
	if threeBudgets {
		big := graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(1e6), Period: "monthly", Hard: true})
		_, err := h.svc.UpdateTenant(h.ctx, h.root, testTenant, admin.TenantPatch{Budget: big})
		must(b, err)
		_, err = h.svc.UpdateGatewayToken(h.ctx, h.root, h.gw.ID, h.tokenID, admin.TokenPatch{Budget: big})
		must(b, err)
		h.rebuild()
	}
	snap := h.snaps.Load()
	gw, _ := snap.GatewayByID(h.gw.ID)
	tok, ok := snap.Token(sha256.Sum256([]byte(h.token)))
	if !ok {
		b.Fatal("no token")
	}
	p := &plan{targets: []routing.Target{{Provider: "openai", Model: "gpt-4o-mini", Weight: 1}}}
	body := []byte(benchBody)
	u := llm.Usage{PromptTokens: 30, CompletionTokens: 100}
	ctx := &fasthttp.RequestCtx{} // reused, as the server reuses it
	h.inf.cfg.Tokenizer.CountBytes("gpt-4o-mini", []byte("load the encoding before the timer"))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx.Response.Reset()
		c := &call{ctx: ctx, start: time.Now(), rec: &analytics.Record{}, snap: snap, gw: gw, tok: tok,
			body: body, in: inbound{maxTokens: 128, n: 1}, plan: *p}
		c.rec.Provider, c.rec.Model = "openai", "gpt-4o-mini"
		if e := h.inf.admit(c); e != nil {
			b.Fatal(e)
		}
		c.admitted = true
		h.inf.release(c, u)
	}
}
