package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Tests of the security-reliability checklist (§4 of
// shared/reference/security-reliability.md) that no other test file
// covers; each names its item. docs/security.md maps every item to its
// tests.

// startMock starts another mock provider, closed when the test ends.
func startMock(t *testing.T) (*providertest.Server, string) {
	t.Helper()
	m, url, err := providertest.Start(context.Background(), "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m, url
}

// attemptSpans returns "attempt:key_alias:upstream_status" of each attempt
// span of rec, in order.
func attemptSpans(t *testing.T, h *harness, id string) []string {
	t.Helper()
	rec := h.record(id)
	var out []string
	for _, s := range rec.Spans {
		if s.ParentID == "" {
			continue
		}
		if s.TraceID != rec.TraceID || s.AttributeMap()["provider"] == "" {
			t.Errorf("attempt span %+v is not in the request's trace %s", s, rec.TraceID)
		}
		out = append(out, s.AttributeMap()["attempt"]+":"+s.AttributeMap()["key_alias"]+":"+s.AttributeMap()["upstream_status"])
	}
	return out
}

// TestRetryBudget (checklist 45): while a provider fails, the retries a
// gateway sends it are bounded by the retry budget — at most
// max(3, 20 % of the attempts in flight) retries in flight — on top of the
// per-request attempt cap. A refused retry ends the request with the last
// failure (or lets a route fall back to a provider it has not tried), and
// every attempt made is recorded under the one request id.
func TestRetryBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1000, CooldownSeconds: 1}}})
	failing, failingURL := startMock(t)
	slow, slowURL := startMock(t)
	h.addKeyAt(h.gw.ID, "openai", "a", "sk-upstream-failing-01", failingURL+"/v1")
	h.addKeyAt(h.gw.ID, "openai", "b", "sk-upstream-slow-0001", slowURL+"/v1")
	h.addKey(h.gw.ID, "groq", "main", "gsk-upstream-groq-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "ab", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("a")}, {Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("b")}}},
		{Name: "ab-groq", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("a")}, {Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("b")},
			{Provider: "groq", Model: "llama-3.1-8b-instant"}}},
	}})
	failing.Script(providertest.Step{Status: 500, Times: 100})
	// The first three retries hang at the slow key: three retries in
	// flight, the budget's minimum.
	slow.Script(providertest.Step{Latency: 5 * time.Second, Times: 3})
	var wg sync.WaitGroup
	hung := make([]int, 3)
	for i := range hung {
		wg.Go(func() {
			resp, _ := h.chat(chatBody("ab", ""))
			hung[i] = resp.StatusCode
		})
	}
	if !waitFor(10*time.Second, func() bool { return slow.Count() == 3 }) {
		t.Fatalf("%d retries reached the slow key, want 3", slow.Count())
	}

	// A fourth failing request gets no retry: 502 after one attempt.
	resp, b := h.chat(chatBody("ab", ""))
	wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
	id := resp.Header.Get(RequestIDHeader)
	if rec := h.record(id); rec.Attempts != 1 || !hasFlag(rec.Flags, "retry_budget_exhausted") {
		t.Errorf("record attempts %d flags %v, want 1 attempt and retry_budget_exhausted", rec.Attempts, rec.Flags)
	}
	if diff := cmp.Diff([]string{"1:a:500"}, attemptSpans(t, h, id)); diff != "" {
		t.Errorf("attempt spans (-want +got):\n%s", diff)
	}
	if n := slow.Count(); n != 3 {
		t.Errorf("the slow key got %d requests, want 3: a retry beyond the budget was sent", n)
	}

	// A route still falls back to a provider it has not tried: a first
	// attempt there is no retry.
	upstream := h.mock.Count()
	resp, b = h.chat(chatBody("ab-groq", ""))
	wantStatus(t, resp, b, 200)
	id = resp.Header.Get(RequestIDHeader)
	if p, a := resp.Header.Get("x-sluice-provider"), resp.Header.Get("x-sluice-attempts"); p != "groq" || a != "2" {
		t.Errorf("answered by %q after %q attempts, want groq after 2", p, a)
	}
	if diff := cmp.Diff([]string{"1:a:500", "2:main:200"}, attemptSpans(t, h, id)); diff != "" {
		t.Errorf("attempt spans (-want +got):\n%s", diff)
	}
	if h.mock.Count()-upstream != 1 || slow.Count() != 3 {
		t.Errorf("groq got %d requests, the slow key %d; want 1 and 3", h.mock.Count()-upstream, slow.Count())
	}

	// Once the retries in flight end, the budget admits retries again.
	wg.Wait()
	if diff := cmp.Diff([]int{200, 200, 200}, hung); diff != "" {
		t.Errorf("the retried requests (-want +got):\n%s", diff)
	}
	resp, b = h.chat(chatBody("ab", ""))
	wantStatus(t, resp, b, 200)
	id = resp.Header.Get(RequestIDHeader)
	if diff := cmp.Diff([]string{"1:a:500", "2:b:200"}, attemptSpans(t, h, id)); diff != "" {
		t.Errorf("attempt spans (-want +got):\n%s", diff)
	}
	if rec := h.record(id); hasFlag(rec.Flags, "retry_budget_exhausted") {
		t.Errorf("record flags %v: the retry was admitted", rec.Flags)
	}
	if a, r := h.inf.cfg.Breakers.RetryBudget(h.gw.ID, "openai").InFlight(); a != 0 || r != 0 {
		t.Errorf("retry budget in flight %d attempts %d retries after every request ended, want 0 0", a, r)
	}
}

// TestCircuitOpenOnEveryKey (checklist 50): with every key of a route
// open, the request is answered at once with 503 circuit_open and a
// Retry-After that says when the first key admits its next probe; the
// admin API (REST GET /gateways/{id}/circuit-breaker) shows the state the
// proxy acts on.
func TestCircuitOpenOnEveryKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0),
		CircuitBreaker: &store.BreakerSettings{FailureThreshold: 1, CooldownSeconds: 300}}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{{Name: "r", Targets: []store.RouteTarget{
		{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("main")},
		{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("backup")}}}}})
	h.mock.Script(providertest.Step{Status: 500, Times: 2})
	resp, b := h.chat(chatBody("r", ""))
	wantStatus(t, resp, b, 502)

	upstream := h.mock.Count()
	start := time.Now()
	resp, b = h.chat(chatBody("r", ""))
	wantAPIError(t, resp, b, 503, "api_error", "circuit_open", "")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("circuit_open took %s: it must not wait for the cooldown", d)
	}
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || ra < 280 || ra > 300 {
		t.Errorf("Retry-After %q, want the cooldown left (about 300 s)", resp.Header.Get("Retry-After"))
	}
	if h.mock.Count() != upstream {
		t.Error("a request reached a key whose breaker is open")
	}
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 503 || rec.ErrorCode != "circuit_open" || rec.Attempts != 0 {
		t.Errorf("record %d %q attempts %d, want 503 circuit_open 0", rec.Status, rec.ErrorCode, rec.Attempts)
	}

	// The admin API reads the proxy's breakers.
	svc := h.adminWith(func(c *admin.Config) { c.Breakers = adminBreakers{h.inf} })
	tok, err := svc.CreateUserToken(h.ctx, h.root, h.root.UserID, admin.TokenInput{Name: "admin"})
	must(t, err)
	srv := httptest.NewServer(rest.NewAdmin(svc, rest.AdminOptions{}))
	t.Cleanup(srv.Close)
	req, err := http.NewRequest("GET", srv.URL+"/admin/v1/gateways/"+h.gw.ID+"/circuit-breaker", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	aresp, err := srv.Client().Do(req)
	must(t, err)
	defer aresp.Body.Close()
	var got struct {
		Data []struct {
			Provider            string     `json:"provider"`
			KeyAlias            string     `json:"key_alias"`
			State               string     `json:"state"`
			ConsecutiveFailures int        `json:"consecutive_failures"`
			OpenedAt            *time.Time `json:"opened_at"`
			NextProbeAt         *time.Time `json:"next_probe_at"`
		} `json:"data"`
	}
	must(t, json.NewDecoder(aresp.Body).Decode(&got))
	if aresp.StatusCode != 200 || len(got.Data) != 2 {
		t.Fatalf("circuit-breaker answered %d with %+v", aresp.StatusCode, got)
	}
	for _, k := range got.Data {
		if k.Provider != "openai" || k.State != "open" || k.ConsecutiveFailures != 1 || k.OpenedAt == nil || k.NextProbeAt == nil ||
			k.NextProbeAt.Sub(*k.OpenedAt) != 300*time.Second {
			t.Errorf("breaker %+v, want openai open with 1 failure and a probe 300 s after opening", k)
		}
	}
	if !strings.Contains(got.Data[0].KeyAlias+got.Data[1].KeyAlias, "main") || !strings.Contains(got.Data[0].KeyAlias+got.Data[1].KeyAlias, "backup") {
		t.Errorf("breakers of %q and %q, want main and backup", got.Data[0].KeyAlias, got.Data[1].KeyAlias)
	}

	// So do the metrics: 2 is open.
	var m strings.Builder
	h.inf.WriteBreakerMetrics(&m)
	gw := h.gw.TenantID + "/" + h.gw.Slug
	for _, alias := range []string{"backup", "main"} {
		want := `sluice_circuit_breaker_state{gateway="` + gw + `",provider="openai",key_alias="` + alias + `"} 2` + "\n"
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, m.String())
		}
	}
}

// TestBreakerMetrics: every key of every gateway has a state series, 0
// while its breaker is closed (or never used), with label values escaped.
func TestBreakerMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	var m strings.Builder
	h.inf.WriteBreakerMetrics(&m)
	want := "# TYPE sluice_circuit_breaker_state gauge\n" +
		`sluice_circuit_breaker_state{gateway="` + h.gw.TenantID + "/" + h.gw.Slug + `",provider="openai",key_alias="main"} 0` + "\n"
	if m.String() != want {
		t.Errorf("metrics:\n%s\nwant:\n%s", m.String(), want)
	}
	if got := string(appendLabel(nil, "a\"b\\c\nd")); got != `a\"b\\c\nd` {
		t.Errorf("appendLabel = %s", got)
	}
}

// TestMalformedJSONNamesTheProblem (checklist 1): a body that is not JSON
// answers 400 whose message says what is wrong with it; nothing goes
// upstream and the request is logged with status 400 (TestRejectedInputs
// covers the codes and the records).
func TestMalformedJSONNamesTheProblem(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ name, body, says string }{
		{"empty", "", "empty"},
		{"missing value", `{"model":}`, "not valid JSON"},
		{"truncated", `{"model":"openai/gpt-4o-mini",` + msgs, "not valid JSON"},
		{"trailing garbage", chatBody("openai/gpt-4o-mini", "") + ` {}`, "not valid JSON"},
		{"not an object", `[1,2]`, "must be a JSON object"},
		{"duplicate key", `{"model":"openai/gpt-4o-mini","model":"openai/gpt-4o",` + msgs + `}`, `"model" more than once`},
		{"control character", "{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"a\tb\"}]}", "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := h.chat(tc.body)
			wantAPIError(t, resp, b, 400, "invalid_request_error", "invalid_json", "")
			var e struct{ Error struct{ Message string } }
			must(t, json.Unmarshal(b, &e))
			if !strings.Contains(e.Error.Message, tc.says) {
				t.Errorf("message %q does not say %q", e.Error.Message, tc.says)
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 400 || rec.ErrorCode != "invalid_json" {
				t.Errorf("record %d %q", rec.Status, rec.ErrorCode)
			}
		})
	}
	if n := h.mock.Count(); n != 0 {
		t.Errorf("%d upstream requests for malformed bodies", n)
	}
}

// TestIDOROnTheProxyMovesNoBudget (checklist 20): a token of tenant A on
// tenant B's gateway answers 404, logs nothing against B and moves neither
// gateway's budget.
func TestIDOROnTheProxyMovesNoBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: hardBudget(money.FromFloat(10), "monthly")})
	other := h.gateway("globex", "prod")
	_, err := h.svc.UpdateGateway(h.ctx, h.root, other.ID, hardBudget(money.FromFloat(10), "monthly"))
	must(t, err)
	h.rebuild()
	for range 3 {
		resp, b := h.do("POST", chatPathOf("globex", "prod"), bearer(h.token), chatBody("openai/gpt-4o-mini", `,"max_tokens":8`))
		wantAPIError(t, resp, b, 404, "not_found_error", "not_found", "")
		if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.GatewayID != "" || rec.TenantID != testTenant || rec.CostUSD != 0 {
			t.Errorf("record gateway %q tenant %q cost %v, want no gateway, tenant %s and no cost", rec.GatewayID, rec.TenantID, rec.CostUSD, testTenant)
		}
	}
	for _, g := range []string{h.gw.ID, other.ID} {
		spent, reserved, err := h.inf.cfg.Budgets.State(h.ctx, budget.GatewayScope(g), monthStartOf(time.Now()))
		if err != nil || spent != 0 || reserved != 0 {
			t.Errorf("budget of gateway %s: spent %v reserved %v (%v), want nothing", g, spent, reserved, err)
		}
	}
	if n := h.mock.Count(); n != 0 {
		t.Errorf("%d upstream requests", n)
	}
}

// TestRequestBodyCannotChooseTheUpstream (checklist 32): no field of the
// body can name the upstream host, its credentials or its headers; the
// attacker's listener gets nothing.
func TestRequestBodyCannotChooseTheUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	attacker, attackerURL := startMock(t)
	host := strings.TrimPrefix(attackerURL, "http://")
	for _, f := range []struct{ field, value string }{
		{"api_base", quote(attackerURL + "/v1")},
		{"base_url", quote(attackerURL + "/v1")},
		{"custom_host", quote(attackerURL)},
		{"url", quote(attackerURL + "/v1/chat/completions")},
		{"host", quote(host)},
		{"api_key", quote("sk-attacker-000000000000")},
		{"headers", `{"Host":` + quote(host) + `}`},
		{"extra_headers", `{"Host":` + quote(host) + `}`},
		{"organization", quote("org-attacker")},
	} {
		t.Run(f.field, func(t *testing.T) {
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", `,"`+f.field+`":`+f.value))
			wantAPIError(t, resp, b, 400, "invalid_request_error", "invalid_request", f.field)
		})
	}
	if n, m := attacker.Count(), h.mock.Count(); n != 0 || m != 0 {
		t.Errorf("the attacker got %d requests, the provider %d; want 0 and 0", n, m)
	}
}

// TestUpstream429 (checklist 46): an upstream 429 moves the retry to
// another key of the provider, after the upstream's Retry-After; when
// every attempt is refused the client gets 429 with Retry-After.
func TestUpstream429(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0)}})
	h.addKey(h.gw.ID, "openai", "backup", "sk-upstream-backup-0001")
	h.rebuild()

	h.mock.Script(providertest.Step{Status: 429, RetryAfter: "1"})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	reqs := h.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests %d, want 2", len(reqs))
	}
	if used := h.keysUsed(0); used[0] == used[1] {
		t.Errorf("keys used %v: the retry after a 429 went to the same key", used)
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 950*time.Millisecond {
		t.Errorf("retried after %s, before the upstream's Retry-After of 1 s", gap)
	}

	h.mock.Script(providertest.Step{Status: 429, RetryAfter: "1", Times: 2})
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want the upstream's 1", got)
	}
	if used := h.keysUsed(2); len(used) != 2 || used[0] == used[1] {
		t.Errorf("keys used %v, want both keys once", used)
	}
}

// hangingUpstream is an OpenAI-compatible upstream that never answers and
// notes when the gateway closed the connection.
func hangingUpstream(t *testing.T) (url string, closed <-chan struct{}) {
	t.Helper()
	gone := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Once the body is read, the server watches the connection and
		// ends the context when the gateway closes it.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		once.Do(func() { close(gone) })
	}))
	t.Cleanup(srv.Close)
	return srv.URL, gone
}

// TestTimeoutsCloseTheUpstream (checklist 47): a timeout before the first
// byte answers 504 upstream_timeout; one during a stream ends it with an
// SSE error event of the same code and no [DONE]; either way the upstream
// connection is closed, so that the provider stops generating.
func TestTimeoutsCloseTheUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0)}})
	hangURL, hangClosed := hangingUpstream(t)
	stall := newSSEUpstream(t, 0, roleFrame, contentFrame("first"), contentFrame("never sent"), "data: [DONE]\n\n")
	stall.hold = 2
	h.addKeyAt(h.gw.ID, "openai-compatible", "hang", "sk-upstream-hang-0001", hangURL+"/v1")
	h.addKeyAt(h.gw.ID, "openai-compatible", "stall", "sk-upstream-stall-001", stall.srv.URL+"/v1")
	h.update(admin.GatewaySettings{Routes: &[]store.Route{
		{Name: "hang", Targets: []store.RouteTarget{{Provider: "openai-compatible", Model: "m", KeyAlias: ptr("hang")}}},
		{Name: "stall", Targets: []store.RouteTarget{{Provider: "openai-compatible", Model: "m", KeyAlias: ptr("stall")}}},
	}})

	t.Run("before the first byte", func(t *testing.T) {
		resp, b := h.chat(chatBody("hang", ""), "x-sluice-request-timeout", "1000")
		wantAPIError(t, resp, b, 504, "api_error", "upstream_timeout", "")
		select {
		case <-hangClosed:
		case <-time.After(5 * time.Second):
			t.Error("the upstream connection stayed open after the 504")
		}
	})

	t.Run("during a stream", func(t *testing.T) {
		req, err := http.NewRequest("POST", h.url(chatPath), strings.NewReader(chatBody("stall", `,"stream":true`)))
		must(t, err)
		req.Header = bearer(h.token)
		req.Header.Set("x-sluice-request-timeout", "1500")
		resp, err := h.hc.Do(req)
		must(t, err)
		defer resp.Body.Close()
		wantStatus(t, resp, nil, 200)
		evs := newSSEReader(resp.Body).all(t)
		if got := strings.Join(kinds(evs), " "); got != "other content error" {
			t.Fatalf("events %q, want the chunks sent, then an error event and no [DONE]", got)
		}
		if typ, code := streamError(t, evs[len(evs)-1].data); typ != "api_error" || code != "upstream_timeout" {
			t.Errorf("error event %s %s, want api_error upstream_timeout", typ, code)
		}
		if msg := evs[len(evs)-1].data; !strings.Contains(msg, "request timeout ended the stream") {
			t.Errorf("error event %s, want it to name the request timeout (not an idle timeout)", msg)
		}
		select {
		case <-stall.closed:
		case <-time.After(5 * time.Second):
			t.Error("the upstream stream stayed open after the timeout")
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 504 || rec.ErrorCode != "upstream_timeout" || !hasFlag(rec.Flags, "partial") {
			t.Errorf("record %d %q %v, want 504 upstream_timeout partial", rec.Status, rec.ErrorCode, rec.Flags)
		}
	})
}

// TestStreamedAndBufferedCostAgree (checklist 51): the same prompt costs
// the same streamed or not, with the provider's usage and with an
// estimate (within 1 %).
func TestStreamedAndBufferedCostAgree(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	for _, noUsage := range []bool{false, true} {
		h.mock.Script(providertest.Step{NoUsage: noUsage})
		resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, b, 200)
		buffered := h.record(resp.Header.Get(RequestIDHeader))

		h.mock.Script(providertest.Step{NoUsage: noUsage, Chunks: 4})
		sresp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
		sr.all(t)
		sresp.Body.Close()
		streamed := h.record(sresp.Header.Get(RequestIDHeader))

		if buffered.CostUSD <= 0 || hasFlag(buffered.Flags, "usage_estimated") != noUsage || hasFlag(streamed.Flags, "usage_estimated") != noUsage {
			t.Fatalf("no usage %v: buffered cost %v flags %v, streamed flags %v", noUsage, buffered.CostUSD, buffered.Flags, streamed.Flags)
		}
		diff := buffered.CostUSD - streamed.CostUSD
		if diff < 0 {
			diff = -diff
		}
		if diff*100 > buffered.CostUSD {
			t.Errorf("no usage %v: buffered %v (%d/%d tokens), streamed %v (%d/%d): more than 1 %% apart", noUsage,
				buffered.CostUSD, buffered.TokensIn, buffered.TokensOut, streamed.CostUSD, streamed.TokensIn, streamed.TokensOut)
		}
	}
}
