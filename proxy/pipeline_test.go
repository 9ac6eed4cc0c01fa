package proxy

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/ratelimit"
)

// countingLimiter counts the calls that reach a limiter.
type countingLimiter struct {
	ratelimit.Limiter
	allows, adds atomic.Int64
}

func (l *countingLimiter) Allow(ctx context.Context, key string, limit, cost int, now time.Time) (ratelimit.Decision, error) {
	l.allows.Add(1)
	return l.Limiter.Allow(ctx, key, limit, cost, now)
}

func (l *countingLimiter) Add(ctx context.Context, key string, cost int, now time.Time) error {
	l.adds.Add(1)
	return l.Limiter.Add(ctx, key, cost, now)
}

// malformedHeaders are x-sluice-* request headers the prepare step
// refuses with 400 invalid_request naming the header.
var malformedHeaders = []struct{ name, value string }{
	{"x-sluice-max-attempts", "0"},
	{"x-sluice-max-attempts", "11"},
	{"x-sluice-max-attempts", "two"},
	{"x-sluice-request-timeout", "0"},
	{"x-sluice-request-timeout", "600001"},
	{"x-sluice-request-timeout", "1.5"},
	{"x-sluice-cache-ttl", "-1"},
	{"x-sluice-skip-cache", "maybe"},
	{"x-sluice-metadata", "[]"},
}

// TestMalformedHeadersCountNothing (issue 13): a malformed x-sluice-*
// request header is refused before anything is counted — no rate-limit
// count, no tokens-per-minute reservation, no in-flight slot. The
// gateway's one in-flight slot is held by a stream, so a request that
// took a slot would be answered 429 instead of 400; afterwards the
// gateway's two requests per minute are both still there.
func TestMalformedHeadersCountNothing(t *testing.T) {
	t.Parallel()
	lim := &countingLimiter{Limiter: ratelimit.NewLocal()}
	h := newHarness(t, harnessConfig{inference: func(c *InferenceConfig) { c.Limiter = lim }})
	up := h.heldUpstream(h.gw.ID)
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{RequestsPerMinute: ptr(3), TokensPerMinute: ptr(1_000_000),
		MaxInFlight: ptr(1)}})
	h.rebuild()

	held, b := h.streamAs(t, h.token, chatPath, heldModel)
	wantStatus(t, held, b, http.StatusOK)
	allows, adds := lim.allows.Load(), lim.adds.Load()
	for _, m := range malformedHeaders {
		t.Run(m.name+"="+m.value, func(t *testing.T) {
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""), m.name, m.value)
			wantAPIError(t, resp, b, http.StatusBadRequest, "invalid_request_error", apierr.CodeInvalidRequest, m.name)
			if n, a := lim.allows.Load()-allows, lim.adds.Load()-adds; n != 0 || a != 0 {
				t.Errorf("the limiter was called %d times (Allow) and %d times (Add), want 0", n, a)
			}
			if v := resp.Header.Get("x-ratelimit-remaining-requests"); v != "" {
				t.Errorf("x-ratelimit-remaining-requests %q on a request refused before the limits", v)
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != http.StatusBadRequest {
				t.Errorf("record status %d, want 400", rec.Status)
			}
		})
	}
	up.releaseAll()
	evs := newSSEReader(held.Body).all(t)
	held.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
		t.Errorf("the held stream ended with %v, want [DONE]", kinds(evs))
	}
	h.waitIdle(t)
	for i := range 2 {
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, b, http.StatusOK)
		wantLimitHeaders(t, resp, "requests", 3, 1-i, "")
	}
	if n := h.mock.Count(); n != 2 {
		t.Errorf("%d requests reached the provider, want 2", n)
	}
}

// TestBackoffEndsAtDeadline (issue 13): the wait between attempts ends
// at the request's deadline. The proxy's clock stands still, so the
// backoff (950–1900 ms, within the 2 s timeout by that clock) starts
// 1.5 s into the request, after a slow first attempt, and would end
// 2.45 s in at the earliest; the deadline ends it at 2 s, with the first
// attempt's failure.
func TestBackoffEndsAtDeadline(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := "unary"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newLimitClock()
			h := newHarness(t, harnessConfig{now: clk.now, gateway: admin.GatewaySettings{Retry: retry(2, 1900)}})
			h.mock.Script(providertest.Step{Status: http.StatusServiceUnavailable, Latency: 1500 * time.Millisecond})
			extra := ""
			if stream {
				extra = `,"stream":true`
			}
			clk.set(time.Now())
			start := time.Now()
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", extra), "x-sluice-request-timeout", "2000")
			elapsed := time.Since(start)
			wantAPIError(t, resp, b, http.StatusBadGateway, "api_error", apierr.CodeUpstreamError, "")
			if elapsed < 1900*time.Millisecond || elapsed > 2300*time.Millisecond {
				t.Errorf("answered after %s, want the 2 s deadline", elapsed)
			}
			if n := h.mock.Count(); n != 1 {
				t.Errorf("%d upstream requests, want 1", n)
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Attempts != 1 || rec.Status != http.StatusBadGateway {
				t.Errorf("record: %d attempts, status %d; want 1, 502", rec.Attempts, rec.Status)
			}
		})
	}
}

// TestBackoffEndsAtShutdown (issue 13): the hard stop of a shutdown
// (the grace period is over) ends the wait between attempts, which would
// otherwise last 5–10 s, and (issue 17: the pooled context of upstream
// calls) a non-streamed upstream call in flight, which would last 10 s.
func TestBackoffEndsAtShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		retry *store.RetrySettings
		step  providertest.Step
	}{
		{"backoff", retry(2, 10000), providertest.Step{Status: http.StatusServiceUnavailable}},
		{"upstream call", retry(1, 10), providertest.Step{Latency: 10 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessConfig{shutdownGrace: 300 * time.Millisecond, gateway: admin.GatewaySettings{Retry: tc.retry}})
			h.mock.Script(tc.step)
			type answer struct {
				resp *http.Response
				body []byte
			}
			answered := make(chan answer, 1) // one send, by the requesting goroutine
			start := time.Now()
			go func() {
				resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""), "x-sluice-request-timeout", "60000")
				answered <- answer{resp, b}
			}()
			if !waitFor(5*time.Second, func() bool { return h.mock.Count() == 1 }) {
				t.Fatal("the first attempt was not made")
			}
			time.Sleep(100 * time.Millisecond) // into the backoff, or the call
			shut := make(chan error, 1)        // one send, by the shutting-down goroutine
			go func() { shut <- h.shutdown(10 * time.Second) }()
			select {
			case a := <-answered:
				wantAPIError(t, a.resp, a.body, http.StatusBadGateway, "api_error", apierr.CodeUpstreamError, "")
			case <-time.After(4 * time.Second):
				t.Fatal("no answer 4 s after shutdown began: the wait was not interrupted")
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("answered after %s, want soon after the 300 ms grace period", elapsed)
			}
			if n := h.mock.Count(); n != 1 {
				t.Errorf("%d upstream requests, want 1", n)
			}
			<-shut
		})
	}
}
