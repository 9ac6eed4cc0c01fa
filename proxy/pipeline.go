package proxy

import (
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// The request pipeline (docs/architecture.md, "The request pipeline").
// Handle runs one request through five steps, in the contract's order of
// checks:
//
//	prepare   configuration loaded (503) → credential (401) → method
//	          (405; GET on the models paths, POST elsewhere) → path
//	          (400/404; picks the door and the record's operation) → role (403) →
//	          gateway (404/403) → content type (415) → x-sluice-*
//	          headers (400) → body, decoded by the door (400)
//	                                                       proxy/prepare.go
//	          A models path is answered right after prepare (listModels,
//	          proxy/models.go): no plan, policies or attempts.
//	plan      the targets: model or route, allow-lists, capabilities,
//	          keys, sunset (400/403/404/410)                 proxy/plan.go
//	policies  request rules (400) → response cache (a hit answers) →
//	          in-flight limits (429) → rate limits and budgets (429/503)
//	          this file; rules.go, cache.go, inflight.go, limits.go
//	attempts  the routing plan's candidates, with a cancellable backoff
//	          between them (502/503/504/429)  proxy/attempts.go, relay.go
//	finish    answer an error, settle the reservations, price, record,
//	          close the root span                              this file
//
// Every step is a method func (h *Inference) step(c *call) *apierr.Error:
// nil lets the request go on, an error is its answer. Nothing is counted
// before policies. finish is the one place that records a request: the
// handler's deferred finishHandler calls it, or hands a stream that
// opened to the stream's writer, which calls it when the stream ends.
// What the client reads and writes is the door's (proxy/door.go).

// call is the state of one inference request, owned by one goroutine at a
// time: the handler, then (for a stream that started) the stream's
// writer. Its fields are grouped by the step that sets them.
type call struct {
	// Set by Handle, read by every step.
	ctx   *fasthttp.RequestCtx
	start time.Time
	rec   *analytics.Record
	snap  *snapshot.Snapshot
	// door is the front door the client speaks (proxy/door.go): the
	// OpenAI shape until prepare has read the path.
	door door

	// prepare: who asks, on which gateway, for what.
	tok   *snapshot.Token
	gw    *snapshot.Gateway
	route route
	// hdr are the x-sluice-* request headers (readHeaders).
	hdr requestHeaders
	in  inbound
	// body is the request body as it is forwarded: the client's bytes,
	// or the request rules' redaction of them.
	body []byte

	// plan: where the request may go.
	plan plan

	// policies.
	// ruleBudget is the content rules' matching budget, made at its
	// first use (proxy/rules.go).
	ruleBudget *rules.Budget
	// cacheState is HIT, MISS or BYPASS (set by cacheLookup).
	cacheState string
	// cache is what cacheLookup decided for cacheStore (proxy/cache.go).
	cache cacheCall
	// slots are the in-flight counters the call holds (proxy/inflight.go).
	slots slots
	// lim is what admit took, for settle and for the x-ratelimit-*
	// headers (proxy/limits.go).
	lim admission

	// attempts.
	// deadline ends the request, a stream included (request_timeout_ms or
	// a lower x-sluice-request-timeout).
	deadline time.Time
	// upctx is the context of a non-streamed request's upstream calls,
	// ended when its client goes away (watch), at its deadline or at the
	// hard stop; from Inference.upctxs, given back by stopAttempts.
	upctx *upCancel
	watch *clientConn
	// keys are the keys the routing plan was given (proxy/attempts.go).
	keys keyring
	// routing is the routing plan of the attempts, and req the upstream
	// request of the attempt in progress: kept here, not allocated
	// (issue 17).
	routing routing.Plan
	req     providers.Request
	// try is the attempt in progress, for its span.
	try attemptInfo
	// trace is the traceparent sent upstream; rootSpan is the id of the
	// request's root span; fwdHeader holds the client's headers that the
	// Anthropic Messages door forwards upstream (nil for other doors).
	trace     string
	rootSpan  string
	fwdHeader http.Header
	// upstream is the current attempt's slot of the tenant's share of its
	// upstream; shareFull names the provider of a candidate passed over
	// because that share was used up (proxy/inflight.go).
	upstream  *snapshot.InFlight
	shareFull string
	// stream is the upstream stream an attempt opened: the handler hands
	// it to the stream's writer as its last act (startStream).
	stream openStream

	// finish.
	// err is the answer of a request refused or failed; nil for one
	// answered.
	err *apierr.Error
	// out is how an answered request ended, for its record.
	out outcome
	// retryAfter is the Retry-After of an error answer (429, 503): set
	// where the error is made, written by reply, which resets the response.
	retryAfter string
	// noRetry sends x-should-retry: false with an error answer that no
	// retry by the client can change.
	noRetry bool
	// settled is true once the admission was settled.
	settled bool
	// recorded is true once the record was handed to the sink.
	recorded bool

	// Flags of the policies and attempts steps, kept next to finish's so
	// that the call stays in a smaller size class.
	// admitted is true once admit reserved limits and budget; finish
	// settles them exactly once.
	admitted bool
	// retryRefused is true once the retry budget refused a retry (the
	// record is flagged once).
	retryRefused bool
	// traceIn is true when the trace continues the client's valid
	// traceparent (startAttempts), for the observers.
	traceIn bool
	// streamSpan is true while the span of the attempt whose stream
	// opened waits for the stream's end (endStreamSpan).
	streamSpan bool
}

// outcome is what the record of a request says beyond its status and
// error code (set in c.rec, or from c.err by finish): the usage it is
// billed and settled with, and the answer it logs.
type outcome struct {
	// usage is what the provider reported (or the gateway estimated); the
	// reservations are settled with it.
	usage llm.Usage
	// billed: the record carries the usage's tokens and cost (an answer,
	// a part of one, or one the response rules blocked).
	billed bool
	// answered: a provider's answer, or a part of it, reached the client
	// (or was cut off on its way): the record is flagged unpriced,
	// usage_estimated or partial as it applies, and logs respBody.
	answered bool
	respBody []byte
}

// Handle serves one inference request through the pipeline.
func (h *Inference) Handle(ctx *fasthttp.RequestCtx) {
	c := &call{ctx: ctx, start: h.cfg.Now(), door: defaultDoor}
	b := &recordBox{}
	b.rec = analytics.Record{ID: string(RequestID(ctx)), TS: c.start.UTC(),
		ClientIP: ctx.RemoteIP().String(), UserAgent: string(ctx.UserAgent()), Spans: b.spans[:0]}
	c.rec = &b.rec
	defer h.finishHandler(c)
	c.err = h.run(c)
}

// recordBox holds a request's record and its first spans in one
// allocation (issue 17). Not in the call: the sink keeps the record
// until it is written, and a queued record must not keep the whole call
// (about 2 KiB and what it points to: the upstream's answer, the
// parsed request) alive — at thousands of records queued, that was
// most of the gateway's peak RSS.
type recordBox struct {
	rec   analytics.Record
	spans [2]analytics.Span
}

// run is the pipeline: each step refuses the request or lets it go on.
func (h *Inference) run(c *call) *apierr.Error {
	if e := h.prepare(c); e != nil {
		return e
	}
	if c.route.models {
		// Model discovery calls no provider and counts against no limit.
		return h.listModels(c)
	}
	if e := h.planTargets(c); e != nil {
		return e
	}
	if c.route.kind == kindCountTokens && !h.countUpstream(c) {
		return h.countTokens(c)
	}
	if e := h.policies(c); e != nil || c.out.answered {
		return e
	}
	return h.attempts(c)
}

// policies applies what the gateway's configuration asks of a request
// before it reaches a provider: the request rules, the response cache (a
// hit answers the request: c.out.answered), then admission — in-flight
// limits, rate limits and budgets, which count the request. A refusal
// after a count gives the count back (finish settles).
func (h *Inference) policies(c *call) *apierr.Error {
	if e := h.requestRules(c); e != nil {
		return e
	}
	if h.cacheLookup(c) {
		return c.err
	}
	if e := h.acquireSlots(c); e != nil {
		return e
	}
	if c.route.op == llm.OpCountTokens {
		// A token count uses no model: it counts against no rate limit
		// or budget (CONTRACT §12).
		return nil
	}
	if e := h.admit(c); e != nil {
		return e
	}
	c.admitted = true
	return nil
}

// finishHandler is deferred by Handle. A request whose stream opened is
// handed to the stream's writer, which finishes it; any other is finished
// here. When the handler panics, it closes a stream it opened, records
// the request (500), gives back what the call holds and lets the panic go
// on to the server, which answers 500.
func (h *Inference) finishHandler(c *call) {
	if v := recover(); v != nil {
		if c.stream.st != nil {
			c.stream.close()
			c.endStreamSpan(h.cfg.Now(), nil)
		}
		c.releaseUpstream()
		if !c.recorded {
			c.err, c.out = apierr.Internal(), outcome{}
			h.finish(c)
		}
		h.release(c, llmUsageZero)
		panic(v)
	}
	if c.stream.st != nil {
		h.startStream(c)
		return
	}
	h.finish(c)
}

// finish ends a request: it answers c.err when there is one, settles the
// admission with the usage, prices the request, closes its root span,
// counts it in the metrics (proxy/metrics.go), tells the observers (OTLP,
// access log: proxy/observe.go) and hands its record to the sink — once. A 401 is answered and not
// recorded: an unauthenticated caller must not be able to fill the log.
func (h *Inference) finish(c *call) {
	if c.recorded {
		return
	}
	if e := c.err; e != nil {
		h.reply(c, e)
		if e.Status == http.StatusUnauthorized {
			h.metrics.unauthorized()
			return
		}
		c.rec.Status, c.rec.ErrorCode, c.rec.ErrorMessage = e.Status, e.Code, e.Message
	}
	rec, o := c.rec, &c.out
	end := h.cfg.Now()
	rec.LatencyMS = end.Sub(c.start).Milliseconds()
	u := o.usage
	if o.billed {
		rec.TokensIn, rec.TokensOut, rec.CachedTokens = u.PromptTokens, u.CompletionTokens, u.CachedTokens
		rec.CacheWriteTokens, rec.CacheWrite1hTokens, rec.ReasoningTokens = u.CacheCreationTokens, u.CacheWrite1hTokens, u.ReasoningTokens
		if pr, ok := c.snap.Price(rec.Provider, rec.Model); ok {
			rec.CostUSD = cost(pr, u)
		} else if o.answered {
			rec.Flags = append(rec.Flags, "unpriced")
		}
	}
	if o.answered {
		if u.Estimated {
			rec.Flags = append(rec.Flags, "usage_estimated")
		}
		if rec.Status != http.StatusOK {
			rec.Flags = append(rec.Flags, "partial")
		}
	}
	c.closeRootSpan(end)
	h.release(c, u)
	c.recorded = true
	if rec.Model == "" {
		// Refused before an attempt: the record names what was asked for.
		rec.Provider, rec.Model = c.requested()
	}
	if c.gw != nil && c.gw.LogBodies {
		if rec.RequestBody == "" {
			rec.RequestBody, rec.ResponseBody = truncateBoth(c.body, o.respBody, c.gw.BodyLogLimitBytes)
		} else {
			rec.ResponseBody = truncate(o.respBody, c.gw.BodyLogLimitBytes)
		}
	}
	h.metrics.observe(c)
	if len(h.cfg.Observers) > 0 {
		h.observe(c)
	}
	h.cfg.Sink.Enqueue(rec)
}

// requested is the provider (when known) and model of a request that
// reached no attempt: the plan's first target once there is a plan, else
// the body's model as the client wrote it, "provider/model" split and a
// provider path's provider taken.
func (c *call) requested() (provider, model string) {
	if t := c.plan.targets; len(t) > 0 {
		return t[0].Provider, t[0].Model
	}
	model = c.in.model
	if c.route.provider != nil {
		return string(c.route.provider), model
	}
	if p, m, ok := strings.Cut(model, "/"); ok && p != "" && m != "" {
		return p, m
	}
	return "", model
}

// reply writes e as the answer.
func (h *Inference) reply(c *call, e *apierr.Error) {
	ctx := c.ctx
	ctx.Response.Reset()
	ctx.Response.Header.Set("x-sluice-request-id", c.rec.ID)
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	switch e.Status {
	case http.StatusUnauthorized:
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
	case http.StatusMethodNotAllowed:
		allow := e.Allow
		if allow == "" {
			allow = "POST"
		}
		ctx.Response.Header.Set(fasthttp.HeaderAllow, allow)
	}
	if c.retryAfter != "" {
		ctx.Response.Header.Set("Retry-After", c.retryAfter)
	}
	if e.Code == apierr.CodeBudgetExceeded || c.noRetry {
		ctx.Response.Header.Set("x-should-retry", "false")
	}
	c.lim.headers.write(&ctx.Response.Header)
	ctx.SetBody(c.door.errorBody(e))
}
