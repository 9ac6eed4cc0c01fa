package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// attempts is the pipeline's attempts step (proxy/pipeline.go): it runs
// the routing plan's candidates one after the other — an attempt, then,
// when it failed and may be retried, a backoff that the deadline, the
// hard stop and a client going away cut short — until one answers the
// client or none is left. A request none answered gets the answer of its
// last failure (noAnswer).
func (h *Inference) attempts(c *call) *apierr.Error {
	h.startAttempts(c)
	defer h.stopAttempts(c)
	c.keys = keyring{h: h, c: c, bs: breaker.Settings{FailureThreshold: c.gw.CircuitBreaker.FailureThreshold,
		Cooldown: time.Duration(c.gw.CircuitBreaker.CooldownSeconds) * time.Second}}
	maxAttempts := c.gw.Retry.MaxAttempts
	if n := c.hdr.maxAttempts; n > 0 && n < maxAttempts {
		maxAttempts = n
	}
	pl := &c.routing
	pl.Init(c.plan.strategy, c.plan.targets, c.keys.routingKeys, maxAttempts, randUint64, c.keys.skip)
	var last error
	n := 0
	for {
		cand, ok := pl.Next()
		if !ok {
			break
		}
		sk := c.keys.find(cand.Key.ID)
		retried := sk.retry
		sk.retry = false
		if n > 0 && !h.waitToRetry(c, sk, cand, retried, last, n) {
			break
		}
		n++
		done, err := h.try(c, sk, cand, retried, n)
		if err == nil {
			if done {
				return c.err
			}
			continue
		}
		last = err
		if !h.mayRetry(c, sk, err) {
			break
		}
	}
	c.rec.Attempts = n
	return h.noAnswer(c, last, n)
}

// startAttempts sets the request's deadline and, for a request not
// streamed, the context of its upstream calls; it starts the trace.
func (h *Inference) startAttempts(c *call) {
	timeout := time.Duration(c.gw.RequestTimeoutMS) * time.Millisecond
	if d := time.Duration(c.hdr.timeoutMS) * time.Millisecond; d > 0 && d < timeout {
		timeout = d
	}
	c.deadline = c.start.Add(timeout)
	if !c.in.stream {
		// The upstream calls of a non-streamed request end at its
		// deadline, at the hard stop, or when its client goes away
		// (proxy/clientconn.go).
		c.upctx = h.upctxs.get(c.deadline)
		c.watch = watchClient(c.ctx, c.upctx)
	}
	tp := c.ctx.Request.Header.Peek("traceparent")
	c.trace, c.rec.TraceID, c.rootSpan = traceHeader(tp)
	c.traceIn = len(tp) > 0 && c.trace == string(tp)
	if c.in.wire == llm.WireAnthropicMessages {
		c.fwdHeader = http.Header{}
		forwardAnthropicHeaders(&c.ctx.Request.Header, c.fwdHeader)
	}
}

// stopAttempts ends the watch of the client and gives the upstream
// context back to its pool.
func (h *Inference) stopAttempts(c *call) {
	if c.watch != nil {
		c.watch.stopWatch()
	}
	if c.upctx != nil {
		h.upctxs.put(c.upctx)
		c.upctx = nil
	}
}

// waitToRetry waits the backoff before attempt n+1 on sk. When the
// backoff does not fit before the deadline, or is cut short, no attempt is
// made: it is not counted, and the probe slot, the upstream slot and the
// retry grant that skip took are handed back.
func (h *Inference) waitToRetry(c *call, sk *seenKey, cand routing.Candidate, retried bool, last error, n int) bool {
	var ra time.Duration
	if pe := providers.AsError(last); pe != nil {
		ra = pe.RetryAfter
	}
	wait, ok := routing.Backoff(n, time.Duration(c.gw.Retry.BackoffMS)*time.Millisecond, ra, h.cfg.Now(), c.deadline, randUint64)
	if ok && h.backoff(c, wait) {
		return true
	}
	h.cfg.Breakers.Get(c.gw.ID, sk.key.ID, c.keys.bs).Release(sk.probe)
	c.releaseUpstream()
	if retried {
		h.cfg.Breakers.RetryBudget(c.gw.ID, cand.Target.Provider).DoneRetry()
	}
	return false
}

// try makes attempt n with candidate cand and key sk, counted in its
// provider's retry budget, and tells the key's breaker a success. done
// is true once the client was answered.
func (h *Inference) try(c *call, sk *seenKey, cand routing.Candidate, retried bool, n int) (bool, error) {
	sk.tried = true
	key := sk.key
	prov, _ := h.cfg.Providers.Get(cand.Target.Provider)
	req := &c.req
	*req = providers.Request{Op: c.route.op, Wire: c.in.wire, Neutral: c.in.neutral, ThinkingBlocks: c.in.thinkingBlocks, Model: cand.Target.Model, Body: c.body, Stream: c.in.stream,
		ClientWantsUsage: c.in.includeUsage, Traceparent: c.trace, Header: c.fwdHeader, Deadline: c.deadline, MaxOutputTokens: c.lim.capOut,
		AnthropicBeta: c.anthropicBeta(),
		Cred:          providers.Credential{KeyID: key.ID, Alias: key.Alias, Key: key.Secret, BaseURL: baseURL(key), Options: key.Options}}
	c.rec.Provider, c.rec.Model, c.rec.Attempts = cand.Target.Provider, cand.Target.Model, n
	c.try = attemptInfo{start: h.cfg.Now(), key: key}
	rb := h.cfg.Breakers.RetryBudget(c.gw.ID, cand.Target.Provider)
	done, err := h.countedAttempt(rb, retried, c, prov, req)
	c.releaseUpstream() // a stream that opened took its slot along
	if err == nil {
		h.cfg.Breakers.Get(c.gw.ID, key.ID, c.keys.bs).Success(sk.probe)
	}
	return done, err
}

// mayRetry tells the key's breaker about the failed attempt and reports
// whether another attempt may follow: not when the client went away, the
// failure is not retryable or the deadline has passed.
func (h *Inference) mayRetry(c *call, sk *seenKey, err error) bool {
	br := h.cfg.Breakers.Get(c.gw.ID, sk.key.ID, c.keys.bs)
	if c.watch.clientGone() {
		br.Release(sk.probe)
		return false
	}
	pe := providers.AsError(err)
	if pe == nil || !pe.Retryable() {
		if pe != nil && pe.KeyRejected {
			br.Note(breakerReason(pe))
		}
		br.Release(sk.probe)
		return false
	}
	br.FailureWith(sk.probe, breakerReason(pe))
	return h.cfg.Now().Before(c.deadline)
}

// noAnswer is the answer of a request no attempt answered: 499 when its
// client went away (recorded with the usage it may have cost), 429 when
// every candidate was passed over for the tenant's upstream share, or the
// last failure (exhausted).
func (h *Inference) noAnswer(c *call, last error, attempts int) *apierr.Error {
	switch {
	case c.watch.clientGone():
		return h.clientClosed(c)
	case attempts == 0 && c.shareFull != "":
		return h.shareRefusal(c)
	}
	if attempts == 0 {
		c.retryAfter = h.circuitRetryAfter(c)
	}
	return h.exhausted(c, last, attempts)
}

// attemptInfo is the attempt in progress, for its span; its provider,
// model and number are the record's (try sets them).
type attemptInfo struct {
	start time.Time
	key   *snapshot.Key
}

// keyring holds the keys a request's routing plan was given, with the
// probe flag the breaker granted each; a request touches a handful of
// keys, so a slice searched in order costs less than maps. Its methods
// routingKeys and skip are the plan's callbacks.
type keyring struct {
	h    *Inference
	c    *call
	bs   breaker.Settings
	seen []seenKey
	// keys holds the routing keys last handed to the plan, which copies
	// them before it asks again (routing.NewPlan); seenBuf and keysBuf
	// back the two slices, so a request with a few keys allocates neither.
	keys    []routing.Key
	seenBuf [4]seenKey
	keysBuf [4]routing.Key
}

// find returns the key with id, nil when the plan was not given it.
func (r *keyring) find(id string) *seenKey {
	for i := range r.seen {
		if r.seen[i].key.ID == id {
			return &r.seen[i]
		}
	}
	return nil
}

// routingKeys gives the plan the gateway's keys of provider.
func (r *keyring) routingKeys(provider string) []routing.Key {
	if r.keys == nil {
		r.seen, r.keys = r.seenBuf[:0], r.keysBuf[:0]
	}
	r.keys = r.keys[:0]
	for _, k := range r.c.gw.Keys[provider] {
		if r.find(k.ID) == nil {
			r.seen = append(r.seen, seenKey{key: k})
		}
		r.keys = append(r.keys, routing.Key{ID: k.ID, Alias: k.Alias, Weight: k.Weight})
	}
	return r.keys
}

// skip reports whether the plan passes cand over, counting no attempt:
// a key limited to other models, a retry without room in the provider's
// retry budget, a key whose upstream has no room left in the tenant's
// share, or whose breaker refuses. A candidate not skipped holds what
// these granted until its attempt ends.
func (r *keyring) skip(cand routing.Candidate) bool {
	h, c := r.h, r.c
	sk := r.find(cand.Key.ID)
	// A key limited to some models is passed over for the others.
	if k := sk.key; len(k.Models) > 0 && !contains(k.Models, cand.Target.Model) {
		return true
	}
	// A retry on a provider needs room in the provider's retry budget;
	// without it the candidate is passed over, and a route may still
	// fall back to a provider it has not tried.
	var rb *breaker.RetryBudget
	if r.tried(cand.Target.Provider) {
		if rb = h.cfg.Breakers.RetryBudget(c.gw.ID, cand.Target.Provider); !rb.TryRetry() {
			if !c.retryRefused {
				c.retryRefused = true
				c.rec.Flags = append(c.rec.Flags, "retry_budget_exhausted")
			}
			return true
		}
	}
	// So is a key whose upstream has no room left in the tenant's
	// share (proxy/inflight.go).
	if !h.acquireUpstream(c, sk.key) {
		if rb != nil {
			rb.DoneRetry()
		}
		return true
	}
	ok, probe := h.cfg.Breakers.Get(c.gw.ID, cand.Key.ID, r.bs).Allow()
	sk.probe, sk.retry, sk.open = probe, ok && rb != nil, sk.open || !ok
	if !ok {
		c.releaseUpstream()
		if rb != nil {
			rb.DoneRetry()
		}
	}
	return !ok
}

// backoff waits d before the next attempt. It returns false when the
// wait was cut short: by the request's deadline, by the hard stop of a
// shutdown or, for a request not streamed, by its client going away. The
// request then ends as if the backoff had not fit before the deadline.
func (h *Inference) backoff(c *call, d time.Duration) bool {
	var ctx context.Context = c.upctx
	if c.upctx == nil {
		// A stream's attempts have no context of their own before one
		// starts: the wait gets one, made only when a retry waits.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(h.hardStop, c.deadline)
		defer cancel()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// countedAttempt makes one attempt counted in rb, the retry budget of its
// provider; the counts are given back even if the attempt panics (the
// server recovers), so that no retry slot leaks.
func (h *Inference) countedAttempt(rb *breaker.RetryBudget, retried bool, c *call, prov providers.Provider,
	req *providers.Request) (bool, error) {
	rb.Begin()
	defer func() {
		rb.End()
		if retried {
			rb.DoneRetry()
		}
	}()
	return h.attempt(c, prov, req)
}

// tried reports whether the request already made an attempt on the
// provider: another attempt on it is a retry (breaker.RetryBudget).
func (r *keyring) tried(provider string) bool {
	for i := range r.seen {
		if r.seen[i].tried && r.seen[i].key.Provider == provider {
			return true
		}
	}
	return false
}

// circuitRetryAfter is the Retry-After of a 503 circuit_open: the seconds
// until the first of the breakers that turned the request away admits its
// next probe, at least 1.
func (h *Inference) circuitRetryAfter(c *call) string {
	now, wait := h.cfg.Now(), time.Duration(-1)
	seen := c.keys.seen
	for i := range seen {
		if !seen[i].open {
			continue
		}
		st := h.cfg.Breakers.Get(c.gw.ID, seen[i].key.ID, c.keys.bs).Snapshot()
		if st.NextProbeAt != nil && (wait < 0 || st.NextProbeAt.Sub(now) < wait) {
			wait = st.NextProbeAt.Sub(now)
		}
	}
	if wait < 0 {
		return "30"
	}
	return retryAfterSeconds(wait)
}

// seenKey is a key a request's plan may use, with the breaker's probe
// grant and the retry budget's grant for its next attempt, whether an
// attempt was made with it and whether its breaker refused one.
type seenKey struct {
	key          *snapshot.Key
	probe, retry bool
	tried        bool
	open         bool // its breaker turned the request away
}

// exhausted maps the last failure to the answer once no attempt is left.
func (h *Inference) exhausted(c *call, last error, attempts int) *apierr.Error {
	if attempts == 0 || last == nil {
		if c.retryAfter == "" {
			c.retryAfter = "30"
		}
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeCircuitOpen, "every target of this request is failing (circuit breaker open); retry later")
	}
	pe := providers.AsError(last)
	if pe == nil {
		if errors.Is(last, context.DeadlineExceeded) {
			return apierr.New(http.StatusGatewayTimeout, apierr.CodeUpstreamTimeout, "the request timed out before the provider answered")
		}
		h.log.Error("upstream call failed", "request_id", c.rec.ID, "err", last)
		return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s failed", c.rec.Provider)
	}
	switch {
	case pe.Timeout:
		return apierr.New(http.StatusGatewayTimeout, apierr.CodeUpstreamTimeout, "provider %s did not answer within the request timeout", c.rec.Provider)
	case pe.Status == http.StatusTooManyRequests:
		c.retryAfter = retryAfterSeconds(pe.RetryAfter)
		return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "provider %s is rate limiting this gateway's key: %s", c.rec.Provider, pe.Message)
	case pe.KeyRejected:
		// Not the client's credential: a 401 would make SDKs report the
		// Sluice token as invalid. Retrying cannot help until an
		// administrator fixes the provider key.
		c.noRetry = true
		return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s refused this gateway's provider key (it answered %d: %s); "+
			"your token was accepted, the gateway's key for %s must be fixed", c.rec.Provider, pe.Status, pe.Message, c.rec.Provider)
	case pe.Unsupported:
		return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature, "provider %s cannot serve this request: %s", c.rec.Provider, pe.Message)
	case pe.Status == http.StatusBadRequest || pe.Status == http.StatusNotFound || pe.Status == http.StatusUnprocessableEntity:
		return apierr.New(pe.Status, apierr.CodeUpstreamError, "provider %s answered %d: %s", c.rec.Provider, pe.Status, pe.Message)
	case pe.Status == 0:
		return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s could not be reached after %d attempts", c.rec.Provider, attempts)
	}
	return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s answered %d after %d attempts: %s", c.rec.Provider, pe.Status, attempts, pe.Message)
}

// attemptSpan records the attempt in progress (c.try), which ended at
// end, as a span under the request's root span. It is recorded as soon as
// the upstream answered, before the record may be handed to the sink.
func (c *call) attemptSpan(end time.Time, err error) {
	start, provider, model, alias, n := c.try.start, c.rec.Provider, c.rec.Model, c.try.key.Alias, c.rec.Attempts
	status, code := "ok", "200"
	if err != nil {
		status, code = "error", "0"
		if pe := providers.AsError(err); pe != nil {
			code = strconv.Itoa(pe.Status)
		}
	}
	c.rec.Spans = append(c.rec.Spans, analytics.Span{
		TraceID: c.rec.TraceID, SpanID: newSpanID(), ParentID: c.rootSpan,
		Name: upstreamSpanName(provider), Start: start.UTC(), DurationMS: float64(end.Sub(start).Microseconds()) / 1000,
		Status: status,
	})
	// In the span's fixed attributes: no map per span (issue 17).
	sp := &c.rec.Spans[len(c.rec.Spans)-1]
	sp.SetAttr("provider", provider)
	sp.SetAttr("model", model)
	sp.SetAttr("key_alias", alias)
	sp.SetAttr("attempt", strconv.Itoa(n))
	sp.SetAttr("upstream_status", code)
	sp.SetAttr("outcome", attemptOutcome(err))
}

// closeRootSpan closes the request's root span once its outcome is known.
func (c *call) closeRootSpan(end time.Time) {
	if c.rec.TraceID == "" {
		return
	}
	status := "ok"
	if c.rec.Status >= http.StatusBadRequest {
		status = "error"
	}
	c.rec.Spans = append(c.rec.Spans, analytics.Span{
		TraceID: c.rec.TraceID, SpanID: c.rootSpan, Name: rootSpanNames[c.route.op],
		Start: c.start.UTC(), DurationMS: float64(end.Sub(c.start).Microseconds()) / 1000, Status: status,
	})
	sp := &c.rec.Spans[len(c.rec.Spans)-1]
	sp.SetAttr("request_id", c.rec.ID)
	sp.SetAttr("status", statusText(c.rec.Status))
	sp.SetAttr("route", c.rec.Route)
}

// statusTexts are the HTTP statuses as text, made once: the root span's
// status attribute costs no allocation.
var statusTexts = func() (t [600]string) {
	for i := 100; i < len(t); i++ {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// statusText is strconv.Itoa(status), without allocating for an HTTP
// status.
func statusText(status int) string {
	if status >= 100 && status < len(statusTexts) {
		return statusTexts[status]
	}
	return strconv.Itoa(status)
}

func newSpanID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var h [16]byte
	hex.Encode(h[:], b[:])
	return string(h[:])
}

// upstreamSpanNames are the attempt spans' names by catalog provider,
// made once.
var upstreamSpanNames = func() map[string]string {
	n := make(map[string]string)
	for _, p := range catalog.Providers() {
		n[p.ID] = "upstream " + p.ID
	}
	return n
}()

// upstreamSpanName is the name of an attempt span at provider.
func upstreamSpanName(provider string) string {
	if n, ok := upstreamSpanNames[provider]; ok {
		return n
	}
	return "upstream " + provider
}

// rootSpanNames are the root spans' names by operation, made once.
var rootSpanNames = func() (n [llm.OpCountTokens + 1]string) {
	for o := range n {
		n[o] = "POST " + llm.Operation(o).String()
	}
	return n
}()

// traceHeader propagates a valid W3C traceparent, or starts a new trace,
// and returns the traceparent, the trace id and a new id for the
// request's root span. One string holds the three.
func traceHeader(tp []byte) (traceparent, traceID, rootSpan string) {
	var h [55 + 16]byte
	var b [32]byte
	_, _ = rand.Read(b[:])
	s := h[:55]
	if len(tp) == 55 && tp[2] == '-' && tp[35] == '-' && tp[52] == '-' && isHex(tp[:2]) && isHex(tp[3:35]) && isHex(tp[36:52]) && isHex(tp[53:]) &&
		string(tp[3:35]) != "00000000000000000000000000000000" {
		copy(s, tp)
	} else {
		copy(s, "00-")
		hex.Encode(s[3:35], b[:16])
		s[35] = '-'
		hex.Encode(s[36:52], b[16:24])
		copy(s[52:], "-01")
	}
	hex.Encode(h[55:], b[24:])
	v := string(h[:])
	return v[:55], v[3:35], v[55:]
}

func isHex[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// randUint64 is the randomness of routing and jitter.
func randUint64() uint64 { return mrand.Uint64() }

// maxBreakerReason bounds the last error a breaker keeps for the admin API.
const maxBreakerReason = 200

// breakerReason is what a key's breaker shows as its last error: the
// upstream failure, whose message the transport scrubbed of the key. It
// runs only on a failed attempt.
func breakerReason(pe *providers.Error) string {
	msg := pe.Error()
	if len(msg) > maxBreakerReason {
		msg = strings.ToValidUTF8(msg[:maxBreakerReason], "") + "…"
	}
	return msg
}
