package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/admin"
	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/mockprovider"
	"github.com/sluicehq/sluice/store"
)

// Tests of the security-reliability checklist (§4 of
// shared/reference/security-reliability.md) that no other test file
// covers; each names its item. docs/security.md maps every item to its
// tests.

// startMock starts another mock provider, closed when the test ends.
func startMock(t *testing.T) (*mockprovider.Server, string) {
	t.Helper()
	m, url, err := mockprovider.Start(context.Background(), "127.0.0.1:0")
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
		if s.TraceID != rec.TraceID || s.Attributes["provider"] == "" {
			t.Errorf("attempt span %+v is not in the request's trace %s", s, rec.TraceID)
		}
		out = append(out, s.Attributes["attempt"]+":"+s.Attributes["key_alias"]+":"+s.Attributes["upstream_status"])
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
	failing.Script(mockprovider.Step{Status: 500, Times: 100})
	// The first three retries hang at the slow key: three retries in
	// flight, the budget's minimum.
	slow.Script(mockprovider.Step{Latency: 5 * time.Second, Times: 3})
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
	h.mock.Script(mockprovider.Step{Status: 500, Times: 2})
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
	h.svc.SetBreakerStates(h.inf)
	tok, err := h.svc.CreateUserToken(h.ctx, h.root, h.root.UserID, admin.TokenInput{Name: "admin"})
	must(t, err)
	srv := httptest.NewServer(rest.NewAdmin(h.svc, rest.AdminOptions{}))
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
}
