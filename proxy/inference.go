package proxy

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/ratelimit"
	"github.com/sluicehq/sluice/proxy/respcache"
	"github.com/sluicehq/sluice/proxy/snapshot"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// SnapshotSource gives the current configuration snapshot.
type SnapshotSource interface {
	Load() *snapshot.Snapshot
}

// ProviderSource gives the adapter of a provider id.
type ProviderSource interface {
	Get(id string) (providers.Provider, bool)
}

// InferenceConfig wires the inference handler.
type InferenceConfig struct {
	Snapshots SnapshotSource
	Providers ProviderSource
	Breakers  *breaker.Set
	Sink      Sink
	Logger    *slog.Logger
	Now       func() time.Time
	// Cache stores the answers of gateways with the response cache on;
	// nil means an in-process store of respcache.DefaultLocalMaxBytes.
	Cache respcache.Store
	// Limiter counts the rate limits (proxy/limits.go); nil means a
	// per-process limiter.
	Limiter ratelimit.Limiter
	// Budgets enforces the budgets; nil means per-process counters that
	// start from zero.
	Budgets *budget.Manager
	// Tokenizer counts tokens when a provider reports no usage
	// (proxy/estimate.go); nil means tokenize.New().
	Tokenizer Tokenizer
	// RuleBudget is the matching time the content rules may spend on one
	// request (proxy/rules.go); 0 means rules.DefaultBudget, a negative
	// value no limit.
	RuleBudget time.Duration
	// TenantMaxInFlight is the in-flight limit of a tenant whose settings
	// set none; 0 means DefaultTenantMaxInFlight (proxy/inflight.go).
	TenantMaxInFlight int
	// UpstreamShare is how many calls one tenant may have in flight to
	// one upstream host; 0 means DefaultUpstreamShare.
	UpstreamShare int
	// StreamWriteTimeout is how long a stream waits for its client to
	// take a write; 0 means DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
}

// Inference serves the five inference paths. It reads configuration only
// from the snapshot: no database call on the hot path.
type Inference struct {
	cfg     InferenceConfig
	log     *slog.Logger
	parsers fastjson.ParserPool
	// hardStop is cancelled when the shutdown grace period is over: open
	// streams then end with an error event.
	hardStop context.Context
	stopNow  context.CancelFunc
	streams  sync.WaitGroup
	// ruleSets holds the compiled content rules of the current snapshot.
	ruleSets ruleSets
}

// NewInference returns the handler.
func NewInference(cfg InferenceConfig) *Inference {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sink == nil {
		cfg.Sink = &MemorySink{}
	}
	if cfg.Breakers == nil {
		cfg.Breakers = breaker.NewSet(cfg.Now)
	}
	if cfg.Cache == nil {
		cfg.Cache = newLocalCache(cfg.Now)
	}
	if cfg.Limiter == nil {
		cfg.Limiter = ratelimit.NewLocal()
	}
	if cfg.Budgets == nil {
		cfg.Budgets = budget.NewLocal(nil)
	}
	if cfg.Tokenizer == nil {
		cfg.Tokenizer = tokenize.New()
	}
	cfg.fillInFlightDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Inference{cfg: cfg, log: cfg.Logger, hardStop: ctx, stopNow: cancel}
}

// EndStreams ends every open stream with an error event and waits for them
// to finish writing it. The server calls it when the grace period is over.
func (h *Inference) EndStreams() {
	h.stopNow()
	h.streams.Wait()
}

// call is the state of one inference request.
type call struct {
	ctx   *fasthttp.RequestCtx
	start time.Time
	rec   *analytics.Record
	snap  *snapshot.Snapshot
	gw    *snapshot.Gateway
	tok   *snapshot.Token
	route route
	// hdr are the x-sluice-* request headers (readHeaders).
	hdr  requestHeaders
	in   inbound
	body []byte
	// rootSpan is the id of the request's root span.
	rootSpan string
	// retryAfter is the Retry-After of an error answer (429, 503): set
	// where the error is made, written by reply, which resets the response.
	retryAfter string
	// noRetry sends x-should-retry: false with an error answer that no
	// retry by the client can change.
	noRetry bool
	// relayGo is made by attemptStream and closed by forward once it has
	// recorded the attempt; the stream's writer goroutine waits for it.
	relayGo chan struct{}
	// cacheState is HIT, MISS or BYPASS (set by cacheLookup).
	cacheState string
	// cache is what cacheLookup decided for cacheStore (proxy/cache.go).
	cache cacheCall
	// admitted is true once admit reserved limits and budget; settle
	// releases them exactly once.
	admitted, settled bool
	// retryRefused is true once the retry budget refused a retry (the
	// record is flagged once).
	retryRefused bool
	// lim is what admit took, for settle and for the x-ratelimit-*
	// headers (proxy/limits.go).
	lim admission
	// ruleBudget is the content rules' matching budget, made at its
	// first use (proxy/rules.go).
	ruleBudget *rules.Budget
	// slots are the in-flight counters the call holds, and upstream the
	// current attempt's slot of the tenant's share of its upstream;
	// shareFull names the provider of a candidate passed over because that
	// share was used up (proxy/inflight.go).
	slots     slots
	upstream  *snapshot.InFlight
	shareFull string
	// upctx is the context of a non-streamed request's upstream calls,
	// cancelled when its client goes away (watch) or at its deadline.
	upctx context.Context
	watch *clientConn
	// deadline ends the request, a stream included (request_timeout_ms or
	// a lower x-sluice-request-timeout).
	deadline time.Time
	// recorded is true once the record was handed to the sink.
	recorded bool
}

// Handle serves one inference request, in the contract's order of checks:
// credential (401) → role (403) → resource (404) → body (400/413/415) →
// limits (429) → upstream.
func (h *Inference) Handle(ctx *fasthttp.RequestCtx) {
	c := &call{ctx: ctx, start: h.cfg.Now()}
	defer h.recoverCall(c)
	c.rec = &analytics.Record{ID: string(RequestID(ctx)), TS: c.start.UTC(),
		ClientIP: ctx.RemoteIP().String(), UserAgent: string(ctx.UserAgent())}
	c.snap = h.cfg.Snapshots.Load()
	if c.snap == nil {
		h.fail(c, apierr.Unavailable("the gateway has not loaded its configuration yet"))
		return
	}
	secret, e := credential(&ctx.Request.Header)
	if e != nil {
		h.reply(c, e)
		return
	}
	tok, ok := c.snap.Token(sha256.Sum256(secret))
	if !ok {
		h.reply(c, apierr.Unauthenticated(apierr.CodeInvalidToken, "the token is not valid"))
		return
	}
	if tok.Expired(c.start) {
		h.reply(c, apierr.Unauthenticated(apierr.CodeTokenExpired, "the token has expired"))
		return
	}
	c.tok = tok
	c.rec.TokenID, c.rec.TenantID = tok.ID, tok.TenantID
	if tok.User != nil {
		c.rec.UserID = tok.User.ID
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set(fasthttp.HeaderAllow, "POST")
		h.fail(c, apierr.MethodNotAllowed("POST"))
		return
	}
	// The path as sent, not ctx.Path(): fasthttp decodes and normalises
	// that one ("%63", "//", "/../"), so a non-canonical path would be
	// routed instead of refused.
	raw := ctx.Request.URI().PathOriginal()
	r, ok := parsePath(raw)
	if !ok {
		h.fail(c, pathError(raw))
		return
	}
	c.route = r
	if e := h.authorize(c); e != nil {
		h.fail(c, e)
		return
	}
	if e := h.readBody(c); e != nil {
		h.fail(c, e)
		return
	}
	h.forward(c)
}

// authorize resolves the gateway and checks that the token may use it.
// Another tenant's gateway, an unknown one and one the token is not for
// all answer the same 404, so nothing can be enumerated.
func (h *Inference) authorize(c *call) *apierr.Error {
	tok := c.tok
	if u := tok.User; u != nil && !u.Role.CanCallInference() {
		return apierr.New(403, apierr.CodeRoleCannotCallInference, "the %s role cannot call the inference API", u.Role)
	}
	gw, ok := c.snap.Gateway(string(c.route.tenant), string(c.route.gateway))
	if !ok {
		return apierr.NotFound("gateway")
	}
	if !tok.ValidOn(gw) {
		// A user of the gateway's own tenant is told why; anyone else gets
		// the 404 of a gateway that does not exist.
		if u := tok.User; u != nil && tok.Kind == store.TokenUser && u.TenantID == gw.TenantID {
			return apierr.New(403, apierr.CodeGatewayNotAssigned, "this gateway is not assigned to the token's user")
		}
		return apierr.NotFound("gateway")
	}
	if gw.Tenant != nil && gw.Tenant.Status == store.TenantSuspended {
		return apierr.New(403, apierr.CodeTenantSuspended, "the tenant of this gateway is suspended")
	}
	c.gw = gw
	c.rec.TenantID, c.rec.GatewayID = gw.TenantID, gw.ID
	return nil
}

// readBody checks the content type, validates the x-sluice-* headers and
// then the body: a malformed header is refused before anything is counted.
func (h *Inference) readBody(c *call) *apierr.Error {
	ct := c.ctx.Request.Header.ContentType()
	if !isJSON(ct) {
		return apierr.New(415, apierr.CodeUnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
	}
	md, e := readHeaders(&c.ctx.Request.Header, &c.hdr)
	if e != nil {
		return e
	}
	c.rec.Metadata = md
	p := h.parsers.Get()
	defer h.parsers.Put(p)
	c.body = c.ctx.Request.Body()
	in, e := parseBody(p, c.body, c.route.op)
	if e != nil {
		return e
	}
	c.in = in
	return nil
}

func isJSON(ct []byte) bool {
	if i := indexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = trimSpace(ct)
	return len(ct) == len("application/json") && equalFoldASCII(ct, "application/json")
}

// fail answers with e and records the rejected request.
func (h *Inference) fail(c *call, e *apierr.Error) {
	h.reply(c, e)
	c.rec.Status, c.rec.ErrorCode = e.Status, e.Code
	end := h.cfg.Now()
	c.rec.LatencyMS = end.Sub(c.start).Milliseconds()
	if c.gw != nil && c.gw.LogBodies && len(c.body) > 0 {
		c.rec.RequestBody = truncate(c.body, c.gw.BodyLogLimitBytes)
	}
	c.closeRootSpan(end)
	h.release(c, llmUsageZero)
	c.recorded = true
	h.cfg.Sink.Enqueue(c.rec)
}

// reply writes e without recording (401s are not recorded: an
// unauthenticated caller must not be able to fill the log).
func (h *Inference) reply(c *call, e *apierr.Error) {
	ctx := c.ctx
	ctx.Response.Reset()
	ctx.Response.Header.Set("x-sluice-request-id", c.rec.ID)
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	switch e.Status {
	case 401:
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
	case 405:
		ctx.Response.Header.Set(fasthttp.HeaderAllow, "POST")
	}
	if c.retryAfter != "" {
		ctx.Response.Header.Set("Retry-After", c.retryAfter)
	}
	if e.Code == apierr.CodeBudgetExceeded || c.noRetry {
		ctx.Response.Header.Set("x-should-retry", "false")
	}
	c.lim.headers.write(&ctx.Response.Header)
	ctx.SetBody(e.Body())
}

// pathError tells a non-canonical path (400) from an unknown one (404).
func pathError(p []byte) *apierr.Error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%', '\\':
			return apierr.New(400, apierr.CodeInvalidPath, "the path must be canonical: no percent-escapes or backslashes")
		case '/':
			if i+1 == len(p) || p[i+1] == '/' {
				return apierr.New(400, apierr.CodeInvalidPath, "the path must be canonical: no empty segments")
			}
			if i+1 < len(p) && p[i+1] == '.' {
				return apierr.New(400, apierr.CodeInvalidPath, "the path must be canonical: no dot segments")
			}
		}
	}
	return apierr.New(404, apierr.CodeNotFound, "no inference endpoint at this path; see the documentation for the five inference paths")
}

func truncate(b []byte, limit int) string {
	if limit <= 0 {
		return ""
	}
	if len(b) > limit {
		b = b[:limit]
	}
	return string(b)
}

func since(t time.Time) int64 { return time.Since(t).Milliseconds() }
