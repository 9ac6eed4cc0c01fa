package proxy

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// sample is one line of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape GETs /metrics and parses the text format: comment lines are
// skipped, every other line is name{labels} value.
func (h *harness) scrape(t *testing.T) []sample {
	t.Helper()
	resp, b := h.do("GET", "/metrics", nil, "")
	wantStatus(t, resp, b, 200)
	return parseExposition(t, string(b))
}

func parseExposition(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			t.Fatalf("metrics line %q: no value", line)
		}
		s.name, line = line[:i], line[i:]
		if line[0] == '{' {
			line = line[1:]
			for line[0] != '}' {
				eq := strings.IndexByte(line, '=')
				if eq < 0 || line[eq+1] != '"' {
					t.Fatalf("metrics labels %q", line)
				}
				name := line[:eq]
				line = line[eq+2:]
				var v strings.Builder
				for line[0] != '"' {
					if line[0] == '\\' {
						line = line[1:]
						if line[0] == 'n' {
							v.WriteByte('\n')
							line = line[1:]
							continue
						}
					}
					v.WriteByte(line[0])
					line = line[1:]
				}
				s.labels[name] = v.String()
				line = strings.TrimPrefix(line[1:], ",")
			}
			line = line[1:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
		if err != nil {
			t.Fatalf("metrics value %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// sum adds the samples named name whose labels include want.
func sum(ss []sample, name string, want ...string) float64 {
	var n float64
next:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for i := 0; i+1 < len(want); i += 2 {
			if s.labels[want[i]] != want[i+1] {
				continue next
			}
		}
		n += s.value
	}
	return n
}

// waitRecords waits until the sink holds n records (a stream's record is
// handed over after its last byte) and returns them.
func (h *harness) waitRecords(t *testing.T, n int) []analytics.Record {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := h.sink.Records()
		if len(recs) >= n || time.Now().After(deadline) {
			if len(recs) != n {
				t.Fatalf("%d records, want %d", len(recs), n)
			}
			return recs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// TestMetricsAgreeWithLogs (issue 15): a known mix of requests over
// every front door — successes, streams, a cache hit, retried upstream
// failures, rate-limited, blocked by a rule, invalid, unauthenticated —
// then the scraped series equal the counts and sums of the request logs
// of the same requests.
func TestMetricsAgreeWithLogs(t *testing.T) {
	t.Parallel()
	h := govHarness(t, harnessConfig{gateway: admin.GatewaySettings{
		Cache: &store.CacheSettings{Enabled: true, TTLSeconds: 300},
		Retry: &store.RetrySettings{MaxAttempts: 2, BackoffMS: 1}}})
	h.addRule(admin.RuleInput{Name: "codename", Direction: "request", Kind: "keyword", Patterns: []string{"bluebird"}, Action: "block"})
	gateway := testTenant + "/" + testGateway

	sent := 0
	streamIDs := map[string]bool{}
	send := func(path string, hdr http.Header, body string, want int) {
		t.Helper()
		resp, b := h.do("POST", path, hdr, body)
		wantStatus(t, resp, b, want)
		sent++
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			streamIDs[resp.Header.Get(RequestIDHeader)] = true
		}
	}
	for i, d := range govDoors {
		for j := range 2 {
			send(d.path, d.hdr(h.token), d.body(fmt.Sprintf("door %d request %d", i, j)), 200)
		}
	}
	send(gwPath("compat/embeddings"), bearer(h.token), `{"model":"openai/text-embedding-3-small","input":"embed me"}`, 200)
	// Streams: chat and the Messages door.
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "stream one", `,"stream":true`), 200)
	send(messagesPath, anthropicHeaders(h.token),
		`{"model":"openai/gpt-4o-mini","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"stream two"}]}`, 200)
	// A cache hit: the same chat request again.
	send(chatPath, bearer(h.token), govDoors[0].body("door 0 request 0"), 200)
	// A retried upstream failure that then succeeds, and one whose both
	// attempts fail.
	h.mock.Script(providertest.Step{Status: 503})
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "retry me", ""), 200)
	h.mock.Script(providertest.Step{Status: 503}, providertest.Step{Status: 503})
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "fail me", ""), 502)
	// Refusals: a rule's block, an invalid body, an unknown token (401:
	// answered, not logged).
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "about bluebird", ""), 400)
	send(chatPath, bearer(h.token), `{"model":`, 400)
	resp, b := h.do("POST", chatPath, bearer("sk-not-a-token"), chatSaying("openai/gpt-4o-mini", "who", ""))
	wantStatus(t, resp, b, 401)
	// Rate-limited: one request per minute lets the first through.
	h.update(admin.GatewaySettings{RateLimit: rpm(1)})
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "limited 1", ""), 200)
	send(chatPath, bearer(h.token), chatSaying("openai/gpt-4o-mini", "limited 2", ""), 429)

	recs := h.waitRecords(t, sent)
	ss := h.scrape(t)

	type group struct {
		op   string
		code int
	}
	byGroup := map[group]int{}
	var latencyMS, ttfbMS, in, out, cached, attempts int64
	var nanoUSD money.USD
	streams, cache := 0, map[string]int{}
	for _, r := range recs {
		byGroup[group{r.Operation, r.Status}]++
		latencyMS += r.LatencyMS
		in, out, cached, attempts = in+r.TokensIn, out+r.TokensOut, cached+r.CachedTokens, attempts+int64(r.Attempts)
		nanoUSD += r.CostUSD
		if streamIDs[r.ID] {
			streams++
			ttfbMS += r.TTFBMS
		}
		cache[r.Cache]++
	}
	if got := sum(ss, "sluice_requests_total"); got != float64(len(recs)) {
		t.Errorf("sluice_requests_total = %v, want %d records", got, len(recs))
	}
	for g, n := range byGroup {
		if got := sum(ss, "sluice_requests_total", "gateway", gateway, "operation", g.op, "code", strconv.Itoa(g.code)); got != float64(n) {
			t.Errorf("sluice_requests_total{operation=%q,code=%d} = %v, want %d", g.op, g.code, got, n)
		}
	}
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"duration _count", sum(ss, "sluice_request_duration_seconds_count"), float64(len(recs))},
		{"duration _sum", sum(ss, "sluice_request_duration_seconds_sum"), float64(latencyMS) / 1000},
		{"duration +Inf", sum(ss, "sluice_request_duration_seconds_bucket", "le", "+Inf"), float64(len(recs))},
		{"ttft _count", sum(ss, "sluice_time_to_first_token_seconds_count"), float64(streams)},
		{"ttft _sum", sum(ss, "sluice_time_to_first_token_seconds_sum"), float64(ttfbMS) / 1000},
		{"tokens input", sum(ss, "sluice_tokens_total", "type", "input"), float64(in)},
		{"tokens output", sum(ss, "sluice_tokens_total", "type", "output"), float64(out)},
		{"tokens cache_read", sum(ss, "sluice_tokens_total", "type", "cache_read"), float64(cached)},
		{"cost", sum(ss, "sluice_cost_usd_total"), float64(nanoUSD) / money.PerDollar},
		{"attempts", sum(ss, "sluice_upstream_attempts_total"), float64(attempts)},
		{"attempts retryable", sum(ss, "sluice_upstream_attempts_total", "outcome", "retryable"), 3},
		{"rejected rate_limit", sum(ss, "sluice_rejected_total", "gateway", gateway, "reason", "rate_limit"), 1},
		{"rejected content_blocked", sum(ss, "sluice_rejected_total", "gateway", gateway, "reason", "content_blocked"), 1},
		{"rejected invalid", sum(ss, "sluice_rejected_total", "gateway", gateway, "reason", "invalid"), 1},
		{"rejected auth (401, not logged)", sum(ss, "sluice_rejected_total", "gateway", "unknown", "reason", "auth"), 1},
		{"rejected", sum(ss, "sluice_rejected_total"), 4},
		{"rule hits block", sum(ss, "sluice_rule_hits_total", "gateway", gateway, "action", "block"), 1},
		{"cache hit", sum(ss, "sluice_cache_requests_total", "result", "hit"), float64(cache["HIT"])},
		{"cache miss", sum(ss, "sluice_cache_requests_total", "result", "miss"), float64(cache["MISS"])},
		{"cache bypass", sum(ss, "sluice_cache_requests_total", "result", "bypass"), float64(cache["BYPASS"])},
		{"breaker closed", sum(ss, "sluice_circuit_breaker_state", "gateway", gateway, "provider", "openai", "key_alias", "main"), 0},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v (from the records)", c.name, c.got, c.want)
		}
	}
	if cache["HIT"] != 1 || streams != 2 || in == 0 || nanoUSD == 0 {
		t.Errorf("the mix: %d cache hits, %d streams, %d input tokens, cost %v; want 1, 2 and some", cache["HIT"], streams, in, nanoUSD)
	}
	for _, s := range ss {
		if s.name == "sluice_requests_total" && s.labels["model"] != "gpt-4o-mini" && s.labels["model"] != "text-embedding-3-small" &&
			s.labels["model"] != "claude-sonnet-4-5" && s.labels["model"] != "unknown" {
			t.Errorf("series %v: a model outside the configuration", s.labels)
		}
	}
}

// TestMetricsUnknownModels (issue 15): 200 requests naming random models
// — forwarded by the unrestricted key, or refused as unknown — add no
// series beyond model="unknown".
func TestMetricsUnknownModels(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	series := func() map[string]bool {
		out := map[string]bool{}
		for _, s := range h.scrape(t) {
			if m, ok := s.labels["model"]; ok {
				out[s.name+"\x00"+m] = true
			}
		}
		return out
	}
	before := series()
	for i := range 200 {
		model := fmt.Sprintf("openai/made-up-%d", i)
		want := 200
		if i%2 == 1 {
			model, want = fmt.Sprintf("made-up-%d", i), 400 // a bare id nothing serves
		}
		resp, b := h.chat(chatBody(model, ""))
		wantStatus(t, resp, b, want)
	}
	h.waitRecords(t, 201)
	after := series()
	for s := range after {
		if !before[s] && !strings.HasSuffix(s, "\x00unknown") {
			t.Errorf("new series %q", s)
		}
	}
	if len(after) > len(before)+3 { // requests, tokens and cost gain an "unknown" series each
		t.Errorf("%d series with a model label after 200 unknown models, %d before", len(after), len(before))
	}
	ss := h.scrape(t)
	if got := sum(ss, "sluice_requests_total", "model", "unknown"); got != 200 {
		t.Errorf(`sluice_requests_total{model="unknown"} = %v, want 200`, got)
	}
}

// TestMetricsNoModel: with the model label dropped, no series has one
// and the requests still count.
func TestMetricsNoModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{inference: func(c *InferenceConfig) { c.Metrics.NoModel = true }})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	h.waitRecords(t, 1)
	ss := h.scrape(t)
	for _, s := range ss {
		if _, ok := s.labels["model"]; ok {
			t.Errorf("%s has a model label: %v", s.name, s.labels)
		}
	}
	if got := sum(ss, "sluice_requests_total", "provider", "openai", "operation", "chat", "code", "200"); got != 1 {
		t.Errorf("sluice_requests_total = %v, want 1", got)
	}
	if got := sum(ss, "sluice_tokens_total", "type", "output"); got == 0 {
		t.Errorf("no output tokens counted")
	}
}

// TestMetricsBreakerOpen (issue 15): a key whose breaker opened reads 2
// at /metrics, and the failed attempt counts as retryable.
func TestMetricsBreakerOpen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1, CooldownSeconds: 300}}})
	gateway := testTenant + "/" + testGateway
	if got := sum(h.scrape(t), "sluice_circuit_breaker_state", "gateway", gateway, "key_alias", "main"); got != 0 {
		t.Errorf("breaker state %v before any failure, want 0", got)
	}
	h.mock.Script(providertest.Step{Status: 500})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 502)
	h.waitRecords(t, 1)
	ss := h.scrape(t)
	if got := sum(ss, "sluice_circuit_breaker_state", "gateway", gateway, "provider", "openai", "key_alias", "main"); got != 2 {
		t.Errorf("breaker state %v after the failure, want 2 (open)", got)
	}
	if got := sum(ss, "sluice_upstream_attempts_total", "provider", "openai", "outcome", "retryable"); got != 1 {
		t.Errorf("retryable attempts %v, want 1", got)
	}
	if got := sum(ss, "sluice_requests_total", "gateway", gateway, "code", "502"); got != 1 {
		t.Errorf("502 requests %v, want 1", got)
	}
}

// BenchmarkMetricsObserve is what finish adds to a request: counting an
// answered, priced request with two attempts and a rule hit, once its
// series exist. It allocates nothing.
func BenchmarkMetricsObserve(b *testing.B) {
	h := newHarness(b, harnessConfig{})
	snap := h.snaps.Load()
	g, _ := snap.GatewayByID(h.gw.ID)
	m := newTrafficMetrics(MetricsConfig{})
	c := &call{snap: snap, gw: g, out: outcome{billed: true, answered: true}}
	c.rec = &analytics.Record{Provider: "openai", Model: "gpt-4o-mini", Operation: analytics.OpChat, Status: 200,
		LatencyMS: 420, TTFBMS: 120, TokensIn: 30, TokensOut: 60, CostUSD: 1234, Cache: "MISS", RuleHits: []string{"r1"},
		Spans: []analytics.Span{
			{Attributes: map[string]string{"provider": "openai", "outcome": "retryable"}},
			{Attributes: map[string]string{"provider": "openai", "outcome": "ok"}},
		}}
	c.in.stream = true
	m.observe(c)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observe(c)
		}
	})
	if testing.AllocsPerRun(100, func() { m.observe(c) }) != 0 {
		b.Errorf("observe allocates")
	}
}
