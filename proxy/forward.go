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
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// plan is what forward resolved before the first attempt.
type plan struct {
	strategy string
	targets  []routing.Target
	route    string // the gateway route's name, "" for a direct provider/model
}

// resolve turns the path and the body's model into targets: on /compat a
// "provider/model" or the name of a gateway route, on a provider path the
// provider's own model id.
func (h *Inference) resolve(c *call) (plan, *apierr.Error) {
	model := c.in.model
	var p plan
	if c.route.provider != nil {
		p.strategy = store.StrategyFallback
		p.targets = []routing.Target{{Provider: string(c.route.provider), Model: model, Weight: 1}}
	} else if prov, m, ok := strings.Cut(model, "/"); ok && m != "" {
		p.strategy = store.StrategyFallback
		p.targets = []routing.Target{{Provider: prov, Model: m, Weight: 1}}
	} else {
		for _, r := range c.gw.Routes {
			if r.Name == model {
				p.route, p.strategy = r.Name, r.Strategy
				for _, t := range r.Targets {
					rt := routing.Target{Provider: t.Provider, Model: t.Model, Weight: t.Weight}
					if t.KeyAlias != nil {
						rt.KeyAlias = *t.KeyAlias
					}
					p.targets = append(p.targets, rt)
				}
				break
			}
		}
		if p.targets == nil {
			return p, apierr.New(400, apierr.CodeUnknownModel, "model %q is neither provider/model nor a route of this gateway", model).WithParam("model")
		}
	}
	if e := h.checkTargets(c, &p); e != nil {
		return p, e
	}
	return p, nil
}

// checkTargets applies the tenant's provider allow-list, the token's model
// allow-list, provider capabilities, keys and sunset dates.
func (h *Inference) checkTargets(c *call, p *plan) *apierr.Error {
	if e := allowedTargets(c.tok.AllowedModels, c.in.model, p); e != nil {
		return e
	}
	kept := p.targets[:0]
	var first *apierr.Error
	keep := func(e *apierr.Error) {
		if first == nil {
			first = e
		}
	}
	for _, t := range p.targets {
		if _, known := catalog.LookupProvider(t.Provider); !known {
			if c.route.provider != nil {
				return apierr.NotFound("provider")
			}
			keep(apierr.New(400, apierr.CodeUnknownModel, "unknown provider %q in model %q", t.Provider, c.in.model).WithParam("model"))
			continue
		}
		if allowed := c.gw.Tenant.Settings.AllowedProviders; len(allowed) > 0 && !contains(allowed, t.Provider) {
			keep(apierr.New(403, apierr.CodeProviderNotAllowed, "provider %s is not allowed for this tenant", t.Provider))
			continue
		}
		prov, ok := h.cfg.Providers.Get(t.Provider)
		if !ok {
			keep(apierr.New(400, apierr.CodeProviderNotSupported, "provider %s is not supported by this gateway version", t.Provider))
			continue
		}
		if e := capable(prov, c.route.op, c.in.stream); e != nil {
			keep(e)
			continue
		}
		if len(keysFor(c.gw, t)) == 0 {
			keep(apierr.New(400, apierr.CodeProviderNotConfigured, "no %s key on this gateway serves model %s", t.Provider, t.Model))
			continue
		}
		if pr, ok := c.snap.Price(t.Provider, t.Model); ok && pr.SunsetAt != nil && !c.start.Before(*pr.SunsetAt) {
			keep(apierr.New(410, apierr.CodeModelSunset, "model %s/%s reached its sunset date %s", t.Provider, t.Model, pr.SunsetAt.Format(time.DateOnly)))
			continue
		}
		kept = append(kept, t)
	}
	p.targets = kept
	if len(kept) == 0 {
		return first
	}
	return nil
}

// allowedTargets applies a token's allowed_models to the plan: with a
// list, only the targets it names stay — by provider/model or by the bare
// model id (any provider's) — unless it names the requested model itself
// (a route's name, or the model as the request wrote it), which allows
// every target of it. No target left is a 403.
func allowedTargets(list []string, requested string, p *plan) *apierr.Error {
	if len(list) == 0 || contains(list, requested) {
		return nil
	}
	kept := p.targets[:0]
	for _, t := range p.targets {
		if contains(list, t.Model) || contains(list, t.Provider+"/"+t.Model) {
			kept = append(kept, t)
		}
	}
	p.targets = kept
	if len(kept) == 0 {
		return apierr.New(403, apierr.CodeModelNotAllowed, "this token may not use model %q", requested)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// capable answers 400 for an operation the provider does not serve.
func capable(p providers.Provider, op llm.Operation, stream bool) *apierr.Error {
	switch op {
	case llm.OpCompletions:
		if _, ok := p.(providers.Completer); !ok {
			return apierr.New(400, apierr.CodeUnsupportedFeature, "provider %s does not support legacy completions", p.Name())
		}
	case llm.OpEmbeddings:
		if _, ok := p.(providers.Embedder); !ok {
			return apierr.New(400, apierr.CodeUnsupportedFeature, "provider %s does not support embeddings", p.Name())
		}
	}
	return nil
}

// keysFor returns the keys of the gateway that may serve target t.
func keysFor(gw *snapshot.Gateway, t routing.Target) []*snapshot.Key {
	all := gw.Keys[t.Provider]
	out := make([]*snapshot.Key, 0, len(all))
	for _, k := range all {
		if t.KeyAlias != "" && k.Alias != t.KeyAlias {
			continue
		}
		if len(k.Models) > 0 && !contains(k.Models, t.Model) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// forward resolves the targets and runs the attempts.
func (h *Inference) forward(c *call) {
	p, e := h.resolve(c)
	if e != nil {
		h.fail(c, e)
		return
	}
	c.rec.Route = p.route
	if e := h.requestRules(c); e != nil {
		h.fail(c, e)
		return
	}
	if h.cacheLookup(c, &p) {
		return
	}
	if e := h.acquireSlots(c); e != nil {
		h.fail(c, e)
		return
	}
	if e := h.admit(c, &p); e != nil {
		h.fail(c, e)
		return
	}
	c.admitted = true
	maxAttempts := c.gw.Retry.MaxAttempts
	if n := c.hdr.maxAttempts; n > 0 && n < maxAttempts {
		maxAttempts = n
	}
	timeout := time.Duration(c.gw.RequestTimeoutMS) * time.Millisecond
	if d := time.Duration(c.hdr.timeoutMS) * time.Millisecond; d > 0 && d < timeout {
		timeout = d
	}
	deadline := c.start.Add(timeout)
	c.deadline = deadline
	if !c.in.stream {
		// The upstream calls of a non-streamed request end at its
		// deadline, at the hard stop, or when its client goes away
		// (proxy/clientconn.go).
		ctx, cancel := context.WithDeadline(h.hardStop, deadline)
		defer cancel()
		c.upctx = ctx
		if c.watch = watchClient(c.ctx, cancel); c.watch != nil {
			defer c.watch.stopWatch()
		}
	}
	hdr, traceID := traceHeader(c.ctx.Request.Header.Peek("traceparent"))
	c.rec.TraceID, c.rootSpan = traceID, newSpanID()

	bs := breaker.Settings{FailureThreshold: c.gw.CircuitBreaker.FailureThreshold,
		Cooldown: time.Duration(c.gw.CircuitBreaker.CooldownSeconds) * time.Second}
	// seen holds the keys the plan was given, with the probe flag the
	// breaker granted each; a request touches a handful of keys, so a slice
	// searched in order costs less than maps.
	var seen []seenKey
	find := func(id string) *seenKey {
		for i := range seen {
			if seen[i].key.ID == id {
				return &seen[i]
			}
		}
		return nil
	}
	keys := func(provider string) []routing.Key {
		ks := c.gw.Keys[provider]
		out := make([]routing.Key, len(ks))
		for i, k := range ks {
			if find(k.ID) == nil {
				seen = append(seen, seenKey{key: k})
			}
			out[i] = routing.Key{ID: k.ID, Alias: k.Alias, Weight: k.Weight}
		}
		return out
	}
	skip := func(cand routing.Candidate) bool {
		sk := find(cand.Key.ID)
		// A key limited to some models is passed over for the others; that
		// counts no attempt.
		if k := sk.key; len(k.Models) > 0 && !contains(k.Models, cand.Target.Model) {
			return true
		}
		// A retry on a provider needs room in the provider's retry budget;
		// without it the candidate is passed over, and a route may still
		// fall back to a provider it has not tried.
		var rb *breaker.RetryBudget
		if tried(seen, cand.Target.Provider) {
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
		ok, probe := h.cfg.Breakers.Get(c.gw.ID, cand.Key.ID, bs).Allow()
		sk.probe, sk.retry, sk.open = probe, ok && rb != nil, sk.open || !ok
		if !ok {
			c.releaseUpstream()
			if rb != nil {
				rb.DoneRetry()
			}
		}
		return !ok
	}
	pl := routing.NewPlan(p.strategy, p.targets, keys, maxAttempts, randUint64, skip)

	var last error
	attempts := 0
	for {
		cand, ok := pl.Next()
		if !ok {
			break
		}
		sk := find(cand.Key.ID)
		key, probe, retried := sk.key, sk.probe, sk.retry
		sk.retry = false
		br := h.cfg.Breakers.Get(c.gw.ID, key.ID, bs)
		rb := h.cfg.Breakers.RetryBudget(c.gw.ID, cand.Target.Provider)
		if attempts > 0 {
			var ra time.Duration
			if pe := providers.AsError(last); pe != nil {
				ra = pe.RetryAfter
			}
			wait, ok := routing.Backoff(attempts, time.Duration(c.gw.Retry.BackoffMS)*time.Millisecond, ra, h.cfg.Now(), deadline, randUint64)
			if !ok || !h.backoff(c, wait) {
				// No attempt is made: it is not counted, and the probe
				// slot, the upstream slot and the retry skip took are
				// handed back.
				br.Release(probe)
				c.releaseUpstream()
				if retried {
					rb.DoneRetry()
				}
				break
			}
		}
		attempts++
		sk.tried = true
		prov, _ := h.cfg.Providers.Get(cand.Target.Provider)
		req := &providers.Request{Op: c.route.op, Model: cand.Target.Model, Body: c.body, Stream: c.in.stream,
			ClientWantsUsage: c.in.includeUsage, Header: hdr, Deadline: deadline, MaxOutputTokens: c.lim.capOut,
			Cred: providers.Credential{KeyID: key.ID, Alias: key.Alias, Key: key.Secret, BaseURL: baseURL(key), Options: key.Options}}
		c.rec.Provider, c.rec.Model, c.rec.Attempts = cand.Target.Provider, cand.Target.Model, attempts
		spanStart, n := h.cfg.Now(), attempts
		// The span is recorded as soon as the upstream answered, before the
		// record may be handed to the sink.
		span := func(err error) { c.attemptSpan(spanStart, h.cfg.Now(), cand, key.Alias, n, err) }
		done, err := h.countedAttempt(rb, retried, c, prov, req, span)
		c.releaseUpstream() // a stream that started took its slot along
		if c.relayGo != nil {
			close(c.relayGo) // the stream's relay may use c from now on
		}
		if err == nil {
			br.Success(probe)
			if done {
				return
			}
			continue
		}
		last = err
		if c.watch.clientGone() {
			br.Release(probe)
			break
		}
		pe := providers.AsError(err)
		if pe == nil || !pe.Retryable() {
			br.Release(probe)
			break
		}
		br.Failure(probe)
		if !h.cfg.Now().Before(deadline) {
			break
		}
	}
	c.rec.Attempts = attempts
	switch {
	case c.watch.clientGone():
		h.clientClosed(c)
	case attempts == 0 && c.shareFull != "":
		h.fail(c, h.shareRefusal(c))
	default:
		if attempts == 0 {
			c.retryAfter = h.circuitRetryAfter(c.gw.ID, seen, bs)
		}
		h.fail(c, h.exhausted(c, pl, last, attempts))
	}
}

// backoff waits d before the next attempt. It returns false when the
// wait was cut short: by the request's deadline, by the hard stop of a
// shutdown or, for a request not streamed, by its client going away. The
// request then ends as if the backoff had not fit before the deadline.
func (h *Inference) backoff(c *call, d time.Duration) bool {
	ctx := c.upctx
	if ctx == nil {
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
	req *providers.Request, span func(error)) (bool, error) {
	rb.Begin()
	defer func() {
		rb.End()
		if retried {
			rb.DoneRetry()
		}
	}()
	return h.attempt(c, prov, req, span)
}

// tried reports whether the request already made an attempt on the
// provider: another attempt on it is a retry (breaker.RetryBudget).
func tried(seen []seenKey, provider string) bool {
	for i := range seen {
		if seen[i].tried && seen[i].key.Provider == provider {
			return true
		}
	}
	return false
}

// circuitRetryAfter is the Retry-After of a 503 circuit_open: the seconds
// until the first of the breakers that turned the request away admits its
// next probe, at least 1.
func (h *Inference) circuitRetryAfter(gatewayID string, seen []seenKey, bs breaker.Settings) string {
	now, wait := h.cfg.Now(), time.Duration(-1)
	for i := range seen {
		if !seen[i].open {
			continue
		}
		st := h.cfg.Breakers.Get(gatewayID, seen[i].key.ID, bs).Snapshot()
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
func (h *Inference) exhausted(c *call, pl *routing.Plan, last error, attempts int) *apierr.Error {
	if attempts == 0 || last == nil {
		if c.retryAfter == "" {
			c.retryAfter = "30"
		}
		return apierr.New(503, apierr.CodeCircuitOpen, "every target of this request is failing (circuit breaker open); retry later")
	}
	pe := providers.AsError(last)
	if pe == nil {
		if errors.Is(last, context.DeadlineExceeded) {
			return apierr.New(504, apierr.CodeUpstreamTimeout, "the request timed out before the provider answered")
		}
		h.log.Error("upstream call failed", "request_id", c.rec.ID, "err", last)
		return apierr.New(502, apierr.CodeUpstreamError, "provider %s failed", c.rec.Provider)
	}
	switch {
	case pe.Timeout:
		return apierr.New(504, apierr.CodeUpstreamTimeout, "provider %s did not answer within the request timeout", c.rec.Provider)
	case pe.Status == 429:
		c.retryAfter = retryAfterSeconds(pe.RetryAfter)
		return apierr.New(429, apierr.CodeRateLimitExceeded, "provider %s is rate limiting this gateway's key: %s", c.rec.Provider, pe.Message)
	case pe.KeyRejected:
		// Not the client's credential: a 401 would make SDKs report the
		// Sluice token as invalid. Retrying cannot help until an
		// administrator fixes the provider key.
		c.noRetry = true
		return apierr.New(502, apierr.CodeUpstreamError, "provider %s refused this gateway's provider key (it answered %d: %s); "+
			"your token was accepted, the gateway's key for %s must be fixed", c.rec.Provider, pe.Status, pe.Message, c.rec.Provider)
	case pe.Status == 400 || pe.Status == 404 || pe.Status == 422:
		return apierr.New(pe.Status, apierr.CodeUpstreamError, "provider %s answered %d: %s", c.rec.Provider, pe.Status, pe.Message)
	case pe.Status == 0:
		return apierr.New(502, apierr.CodeUpstreamError, "provider %s could not be reached after %d attempts", c.rec.Provider, attempts)
	}
	return apierr.New(502, apierr.CodeUpstreamError, "provider %s answered %d after %d attempts: %s", c.rec.Provider, pe.Status, attempts, pe.Message)
}

// attemptSpan records one upstream attempt as a span under the request's
// root span.
func (c *call) attemptSpan(start, end time.Time, cand routing.Candidate, alias string, n int, err error) {
	status, code := "ok", "200"
	if err != nil {
		status, code = "error", "0"
		if pe := providers.AsError(err); pe != nil {
			code = strconv.Itoa(pe.Status)
		}
	}
	c.rec.Spans = append(c.rec.Spans, analytics.Span{
		TraceID: c.rec.TraceID, SpanID: newSpanID(), ParentID: c.rootSpan,
		Name: "upstream " + cand.Target.Provider, Start: start.UTC(), DurationMS: float64(end.Sub(start).Microseconds()) / 1000,
		Status: status,
		Attributes: map[string]string{"provider": cand.Target.Provider, "model": cand.Target.Model,
			"key_alias": alias, "attempt": strconv.Itoa(n), "upstream_status": code},
	})
}

// rootSpan closes the request's root span once its outcome is known.
func (c *call) closeRootSpan(end time.Time) {
	if c.rec.TraceID == "" {
		return
	}
	status := "ok"
	if c.rec.Status >= 400 {
		status = "error"
	}
	c.rec.Spans = append(c.rec.Spans, analytics.Span{
		TraceID: c.rec.TraceID, SpanID: c.rootSpan, Name: "POST " + c.route.op.String(),
		Start: c.start.UTC(), DurationMS: float64(end.Sub(c.start).Microseconds()) / 1000, Status: status,
		Attributes: map[string]string{"request_id": c.rec.ID, "status": strconv.Itoa(c.rec.Status), "route": c.rec.Route},
	})
}

func newSpanID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// baseURL is the key's base URL or its provider's default.
func baseURL(k *snapshot.Key) string {
	if k.BaseURL != "" {
		return strings.TrimSuffix(k.BaseURL, "/")
	}
	p, _ := catalog.LookupProvider(k.Provider)
	return strings.TrimSuffix(p.DefaultBaseURL, "/")
}

// traceHeader propagates a valid W3C traceparent and returns the trace id,
// or starts a new trace.
func traceHeader(tp []byte) (http.Header, string) {
	s := string(tp)
	if len(s) == 55 && s[2] == '-' && s[35] == '-' && s[52] == '-' && isHex(s[:2]) && isHex(s[3:35]) && isHex(s[36:52]) && isHex(s[53:]) &&
		s[3:35] != "00000000000000000000000000000000" {
		return http.Header{"Traceparent": {s}}, s[3:35]
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:16])
	return http.Header{"Traceparent": {"00-" + id + "-" + hex.EncodeToString(b[16:]) + "-01"}}, id
}

func isHex(s string) bool {
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
