package proxy

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Upstream faults: retries, fallbacks, timeouts and circuit breakers,
// counted on the mock provider's side.

// keysUsed returns the Authorization of each upstream request after the
// first skip ones.
func (h *harness) keysUsed(skip int) []string {
	var out []string
	for _, r := range h.mock.Requests()[skip:] {
		out = append(out, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}
	return out
}

func retry(attempts, backoffMS int) *store.RetrySettings {
	return &store.RetrySettings{MaxAttempts: attempts, BackoffMS: backoffMS}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 10)}})
	for _, status := range []int{408, 429, 500, 502, 503, 504} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			before := h.mock.Count()
			h.mock.Script(providertest.Step{Status: status})
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 200)
			if got := resp.Header.Get("x-sluice-attempts"); got != "2" {
				t.Errorf("x-sluice-attempts %q, want 2", got)
			}
			if got := h.mock.Count() - before; got != 2 {
				t.Errorf("upstream requests %d, want 2", got)
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Attempts != 2 || rec.Status != 200 {
				t.Errorf("record attempts %d status %d, want 2 200", rec.Attempts, rec.Status)
			}
		})
	}
}

func TestAttemptsCappedAcrossTargetsAndKeys(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(3, 0)}})
	for _, k := range []struct{ provider, alias, key string }{
		{"groq", "g1", "gsk-upstream-key-g1"}, {"groq", "g2", "gsk-upstream-key-g2"},
		{"mistral", "m1", "mst-upstream-key-m1"}, {"mistral", "m2", "mst-upstream-key-m2"},
	} {
		h.addKey(h.gw.ID, k.provider, k.alias, k.key)
	}
	h.update(admin.GatewaySettings{Routes: &[]store.Route{{Name: "both", Strategy: "fallback", Targets: []store.RouteTarget{
		{Provider: "groq", Model: "llama-3.1-8b-instant"}, {Provider: "mistral", Model: "mistral-small-latest"}}}}})
	h.mock.Script(providertest.Step{Status: 500, Times: 100})

	resp, b := h.chat(chatBody("both", ""))
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	if n := h.mock.Count(); n != 3 {
		t.Errorf("upstream requests %d, want exactly 3 (max_attempts is for the whole request)", n)
	}
	if !strings.Contains(string(b), "mistral") || !strings.Contains(string(b), "500") {
		t.Errorf("message %s does not name the provider and its status", b)
	}
	// Both groq keys first (fallback over keys), then the next target.
	used := h.keysUsed(0)
	if len(used) == 3 && (!strings.HasPrefix(used[0], "gsk-") || !strings.HasPrefix(used[1], "gsk-") || used[0] == used[1] ||
		!strings.HasPrefix(used[2], "mst-")) {
		t.Errorf("keys used %v, want both groq keys then a mistral key", used)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 502 || rec.ErrorCode != "upstream_error" || rec.Attempts != 3 || rec.Route != "both" || len(rec.Spans) != 4 {
		t.Errorf("record status %d code %q attempts %d route %q spans %d", rec.Status, rec.ErrorCode, rec.Attempts, rec.Route, len(rec.Spans))
	}

	// A header can lower the attempts, never raise them.
	before := h.mock.Count()
	resp, b = h.chat(chatBody("both", ""), "x-sluice-max-attempts", "1")
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	if n := h.mock.Count() - before; n != 1 {
		t.Errorf("x-sluice-max-attempts 1: %d upstream requests", n)
	}
	before = h.mock.Count()
	resp, b = h.chat(chatBody("both", ""), "x-sluice-max-attempts", "10")
	wantStatus(t, resp, b, 502)
	if n := h.mock.Count() - before; n != 3 {
		t.Errorf("x-sluice-max-attempts 10: %d upstream requests, want the gateway's 3", n)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 10)}})
	h.mock.Script(providertest.Step{Status: 429, RetryAfter: "1"})
	start := time.Now()
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	elapsed := time.Since(start)
	wantStatus(t, resp, b, 200)
	if elapsed < 950*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("answered after %s, want about 1 s (Retry-After: 1)", elapsed)
	}
	reqs := h.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests %d, want 2", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 950*time.Millisecond {
		t.Errorf("retried after %s, before the upstream's Retry-After", gap)
	}
	if got := resp.Header.Get("x-sluice-attempts"); got != "2" {
		t.Errorf("x-sluice-attempts %q", got)
	}
}

func TestRetryAfterBeyondTimeout(t *testing.T) {
	t.Parallel()
	// The upstream asks for 5 s, the request has 1.5 s: the gateway gives
	// up at once, with one attempt, and passes the 429 on with its
	// Retry-After.
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(3, 10)}})
	h.mock.Script(providertest.Step{Status: 429, RetryAfter: "5", Times: 10})
	start := time.Now()
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""), "x-sluice-request-timeout", "1500")
	elapsed := time.Since(start)
	wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
	if got := resp.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After %q, want 5", got)
	}
	if elapsed >= 1400*time.Millisecond {
		t.Errorf("answered after %s; a wait past the 1.5 s deadline should not be started", elapsed)
	}
	if n := h.mock.Count(); n != 1 {
		t.Errorf("upstream requests %d, want 1", n)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Attempts != 1 || rec.Status != 429 || rec.ErrorCode != "rate_limit_exceeded" || len(rec.Spans) != 2 {
		t.Errorf("record attempts %d status %d code %q spans %d, want 1 429 rate_limit_exceeded 2",
			rec.Attempts, rec.Status, rec.ErrorCode, len(rec.Spans))
	}
}

func TestUpstreamClientErrorNotRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(3, 0)}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.rebuild()
	for _, status := range []int{400, 401, 403, 404, 422} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			before := h.mock.Count()
			h.mock.Script(providertest.Step{Status: status})
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
			// A refused provider key is the gateway's problem, not the
			// client's credential (TestUpstreamKeyRejected).
			want, typ := status, map[int]string{400: "invalid_request_error", 404: "not_found_error", 422: "invalid_request_error"}[status]
			if status == 401 || status == 403 {
				want, typ = 502, "api_error"
			}
			wantAPIError(t, resp, b, want, typ, "upstream_error", "")
			if n := h.mock.Count() - before; n != 1 {
				t.Errorf("upstream requests %d, want 1 (not retried)", n)
			}
			if strings.Contains(string(b), "sk-upstream") {
				t.Errorf("answer %s holds a provider key", b)
			}
		})
	}
}

func TestKeyAndTargetFallback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0)}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.addKey(h.gw.ID, "groq", "main", "gsk-upstream-groq-0001")
	routes := []store.Route{
		{Name: "to-groq", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("main")}, {Provider: "groq", Model: "llama-3.1-8b-instant"}}},
		{Name: "backup-only", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("backup")}}},
	}
	h.update(admin.GatewaySettings{Routes: &routes})

	t.Run("next key of the provider", func(t *testing.T) {
		before := h.mock.Count()
		h.mock.Script(providertest.Step{Status: 500})
		resp, b := h.do("POST", gwPath("openai/chat/completions"), bearer(h.token), chatBody("gpt-4o-mini", ""))
		wantStatus(t, resp, b, 200)
		if resp.Header.Get("x-sluice-attempts") != "2" {
			t.Errorf("x-sluice-attempts %q", resp.Header.Get("x-sluice-attempts"))
		}
		used := h.keysUsed(before)
		if len(used) == 2 && used[0] == used[1] {
			t.Errorf("keys used %v: the retry should take another key", used)
		}
	})

	t.Run("next target", func(t *testing.T) {
		before := h.mock.Count()
		h.mock.Script(providertest.Step{Status: 503})
		resp, b := h.chat(chatBody("to-groq", ""))
		wantStatus(t, resp, b, 200)
		if got := resp.Header.Get("x-sluice-provider"); got != "groq" {
			t.Errorf("x-sluice-provider %q, want groq", got)
		}
		if diff := cmp.Diff([]string{mainKey, "gsk-upstream-groq-0001"}, h.keysUsed(before)); diff != "" {
			t.Errorf("keys used (-want +got):\n%s", diff)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Provider != "groq" || rec.Model != "llama-3.1-8b-instant" || rec.Attempts != 2 || rec.Route != "to-groq" {
			t.Errorf("record provider %q model %q attempts %d route %q", rec.Provider, rec.Model, rec.Attempts, rec.Route)
		}
	})

	t.Run("key alias", func(t *testing.T) {
		before := h.mock.Count()
		for range 6 {
			resp, b := h.chat(chatBody("backup-only", ""))
			wantStatus(t, resp, b, 200)
		}
		for _, k := range h.keysUsed(before) {
			if k != "sk-upstream-backup-0001" {
				t.Errorf("key %q used, the route allows only backup", k)
			}
		}
		// Failing, the restricted target does not fall over to another key.
		before = h.mock.Count()
		h.mock.Script(providertest.Step{Status: 500, Times: 2})
		resp, b := h.chat(chatBody("backup-only", ""))
		wantStatus(t, resp, b, 502)
		for _, k := range h.keysUsed(before) {
			if k != "sk-upstream-backup-0001" {
				t.Errorf("key %q used on retry, the route allows only backup", k)
			}
		}
	})

	t.Run("connect error", func(t *testing.T) {
		// Port 1 on loopback refuses connections.
		h.addKeyAt(h.gw.ID, "openai", "dead", "sk-upstream-dead-00001", "http://127.0.0.1:1/v1")
		routes := append(routes, store.Route{Name: "dead-first", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("dead")}, {Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("main")}}})
		h.update(admin.GatewaySettings{Routes: &routes})
		before := h.mock.Count()
		resp, b := h.chat(chatBody("dead-first", ""))
		wantStatus(t, resp, b, 200)
		if resp.Header.Get("x-sluice-attempts") != "2" || h.mock.Count()-before != 1 {
			t.Errorf("attempts %q, upstream requests %d", resp.Header.Get("x-sluice-attempts"), h.mock.Count()-before)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		var codes []string
		for _, s := range rec.Spans {
			if s.ParentID != "" {
				codes = append(codes, s.AttributeMap()["key_alias"]+":"+s.AttributeMap()["upstream_status"])
			}
		}
		if diff := cmp.Diff([]string{"dead:0", "main:200"}, codes); diff != "" {
			t.Errorf("attempt spans (-want +got):\n%s", diff)
		}
	})
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{RequestTimeoutMS: ptr(1000), Retry: retry(3, 10)}})
	check := func(t *testing.T, resp *http.Response, b []byte, start time.Time) {
		t.Helper()
		elapsed := time.Since(start)
		wantAPIError(t, resp, b, 504, "api_error", "upstream_timeout", "")
		if elapsed < 900*time.Millisecond || elapsed > 2900*time.Millisecond {
			t.Errorf("answered after %s, want about 1 s", elapsed)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 504 || rec.ErrorCode != "upstream_timeout" {
			t.Errorf("record %d %q", rec.Status, rec.ErrorCode)
		}
	}
	t.Run("gateway timeout", func(t *testing.T) {
		before := h.mock.Count()
		h.mock.Script(providertest.Step{Latency: 3 * time.Second})
		start := time.Now()
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
		check(t, resp, b, start)
		if n := h.mock.Count() - before; n != 1 {
			t.Errorf("upstream requests %d, want 1: no time is left for a retry", n)
		}
	})
	t.Run("stream timeout before the first byte", func(t *testing.T) {
		h.mock.Script(providertest.Step{Latency: 3 * time.Second})
		start := time.Now()
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", `,"stream":true`))
		check(t, resp, b, start)
	})
	t.Run("header lowers the timeout", func(t *testing.T) {
		h.update(admin.GatewaySettings{RequestTimeoutMS: ptr(60000)})
		h.mock.Script(providertest.Step{Latency: 3 * time.Second})
		start := time.Now()
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""), "x-sluice-request-timeout", "1000")
		check(t, resp, b, start)
	})
	t.Run("header cannot raise the timeout", func(t *testing.T) {
		h.update(admin.GatewaySettings{RequestTimeoutMS: ptr(1000)})
		h.mock.Script(providertest.Step{Latency: 3 * time.Second})
		start := time.Now()
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""), "x-sluice-request-timeout", "600000")
		check(t, resp, b, start)
	})
}

func TestGarbageFromUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0)}})
	for _, tc := range []struct{ name, body string }{
		{"html with 200", "<html><body>Bad gateway, but 200</body></html>"},
		{"invalid json", `{"id":"x","choices":[`},
		{"text", "upstream says no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.mock.Script(providertest.Step{Status: 200, Body: tc.body})
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
			wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
		})
	}
	t.Run("stream answered with json", func(t *testing.T) {
		h.mock.Script(providertest.Step{Status: 200, Body: `{"not":"a stream"}`})
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", `,"stream":true`))
		wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	})
}

func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 2, CooldownSeconds: 1}}})
	body := chatBody("openai/gpt-4o-mini", "")
	state := func() (string, int) {
		st := h.inf.BreakerStates(h.gw.ID)["openai/main"]
		return string(st.State), st.ConsecutiveFailures
	}

	h.mock.Script(providertest.Step{Status: 500, Times: 2})
	for range 2 {
		resp, b := h.chat(body)
		wantStatus(t, resp, b, 502)
	}
	if s, n := state(); s != "open" || n != 2 {
		t.Errorf("breaker %s with %d failures, want open with 2", s, n)
	}
	// Open: the key is skipped; with no other key, 503 circuit_open.
	for range 3 {
		resp, b := h.chat(body)
		wantAPIError(t, resp, b, 503, "api_error", "circuit_open", "")
		if resp.Header.Get("Retry-After") == "" {
			t.Error("circuit_open without Retry-After")
		}
		if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 503 || rec.ErrorCode != "circuit_open" || rec.Attempts != 0 {
			t.Errorf("record %d %q attempts %d", rec.Status, rec.ErrorCode, rec.Attempts)
		}
	}
	if n := h.mock.Count(); n != 2 {
		t.Errorf("upstream requests %d, want 2: an open breaker sends nothing", n)
	}

	// After the cooldown one probe goes through; it fails, and the
	// breaker reopens for twice the cooldown.
	st := h.inf.BreakerStates(h.gw.ID)["openai/main"]
	time.Sleep(time.Until(*st.NextProbeAt) + 20*time.Millisecond)
	h.mock.Script(providertest.Step{Status: 500})
	resp, b := h.chat(body)
	wantStatus(t, resp, b, 502)
	st = h.inf.BreakerStates(h.gw.ID)["openai/main"]
	if st.State != "open" || st.NextProbeAt.Sub(*st.OpenedAt) != 2*time.Second {
		t.Errorf("after a failed probe: %s, next probe %s after opening; want open, 2s", st.State, st.NextProbeAt.Sub(*st.OpenedAt))
	}
	resp, b = h.chat(body)
	wantAPIError(t, resp, b, 503, "api_error", "circuit_open", "")

	// The next probe is slow: while it runs the breaker is half-open and
	// lets nothing else through; its success closes the breaker.
	time.Sleep(time.Until(*st.NextProbeAt) + 20*time.Millisecond)
	h.mock.Script(providertest.Step{Latency: 1500 * time.Millisecond})
	var wg sync.WaitGroup
	var probeStatus int
	wg.Go(func() {
		resp, _ := h.chat(body)
		probeStatus = resp.StatusCode
	})
	if !waitFor(5*time.Second, func() bool { s, _ := state(); return s == "half_open" }) {
		s, _ := state()
		t.Errorf("breaker %s while the probe runs, want half_open", s)
	}
	resp, b = h.chat(body)
	wantAPIError(t, resp, b, 503, "api_error", "circuit_open", "")
	wg.Wait()
	if probeStatus != 200 {
		t.Errorf("probe answered %d", probeStatus)
	}
	if s, n := state(); s != "closed" || n != 0 {
		t.Errorf("breaker %s with %d failures after a good probe, want closed", s, n)
	}
	resp, b = h.chat(body)
	wantStatus(t, resp, b, 200)
	if n := h.mock.Count(); n != 5 {
		t.Errorf("upstream requests %d, want 5", n)
	}
}

func TestCircuitBreakerFallsOverToHealthyKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1, CooldownSeconds: 60}}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{{Name: "r", Targets: []store.RouteTarget{
		{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("main")},
		{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("backup")}}}}})
	h.mock.Script(providertest.Step{Status: 500})
	resp, b := h.chat(chatBody("r", ""))
	wantStatus(t, resp, b, 200)
	if s := h.inf.BreakerStates(h.gw.ID)["openai/main"].State; s != "open" {
		t.Fatalf("main breaker %s, want open", s)
	}
	before := h.mock.Count()
	for range 3 {
		resp, b := h.chat(chatBody("r", ""))
		wantStatus(t, resp, b, 200)
		if resp.Header.Get("x-sluice-attempts") != "1" {
			t.Errorf("x-sluice-attempts %q: a skipped key is no attempt", resp.Header.Get("x-sluice-attempts"))
		}
	}
	for _, k := range h.keysUsed(before) {
		if k != "sk-upstream-backup-0001" {
			t.Errorf("key %q used while its breaker is open", k)
		}
	}
}

func TestHalfOpenProbeReleasedWhenBackoffGivesUp(t *testing.T) {
	t.Parallel()
	// The first key answers 429 with a Retry-After beyond the deadline;
	// the plan's next candidate is a half-open key, whose probe slot the
	// plan took. Giving up must hand the slot back, or the key stays
	// half-open with a phantom probe (for probeLease, 10 min).
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1, CooldownSeconds: 1}}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "r", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("main")},
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("backup")}}},
		{Name: "backup", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("backup")}}},
	}})
	// Open the backup key's breaker.
	h.mock.Script(providertest.Step{Status: 500})
	resp, b := h.chat(chatBody("backup", ""), "x-sluice-max-attempts", "1")
	wantStatus(t, resp, b, 502)
	st := h.inf.BreakerStates(h.gw.ID)["openai/backup"]
	if st.State != "open" {
		t.Fatalf("backup breaker %s, want open", st.State)
	}
	time.Sleep(time.Until(*st.NextProbeAt) + 20*time.Millisecond)

	h.mock.Script(providertest.Step{Status: 429, RetryAfter: "30"})
	resp, b = h.chat(chatBody("r", ""), "x-sluice-request-timeout", "2000")
	wantStatus(t, resp, b, 429)

	// The backup key is healthy and its cooldown is over: it must serve.
	resp, b = h.chat(chatBody("backup", ""))
	wantStatus(t, resp, b, 200)
	if s := h.inf.BreakerStates(h.gw.ID)["openai/backup"].State; s != "closed" {
		t.Errorf("backup breaker %s after a good probe, want closed", s)
	}
}
