package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// heldUpstream is an OpenAI-compatible upstream whose streams send their
// first event and then wait for release: each one is a request in flight
// for as long as the test wants. It is added to gateway gwID as key alias
// "held"; requests name model "openai-compatible/m".
func (h *harness) heldUpstream(gwID string) *heldSSE {
	h.tb.Helper()
	up := &heldSSE{sseUpstream: newSSEUpstream(h.tb, 0, roleFrame, contentFrame("x"), "data: [DONE]\n\n")}
	up.hold = 1
	// Registered after the upstream's own cleanup, so run before it: a
	// test that failed early must not leave its streams held.
	h.tb.Cleanup(up.releaseAll)
	h.addKeyAt(gwID, "openai-compatible", "held", "sk-upstream-held-0001", up.srv.URL+"/v1")
	h.rebuild()
	return up
}

// heldSSE is an sseUpstream whose held streams are let go once.
type heldSSE struct {
	*sseUpstream
	once sync.Once
}

func (u *heldSSE) releaseAll() { u.once.Do(func() { close(u.release) }) }

const heldModel = "openai-compatible/m"

// streamAs posts a streamed chat request with token to path; when it
// started (200), it reads the first event, so that the request is in
// flight when streamAs returns. Otherwise it returns the error answer.
func (h *harness) streamAs(tb testing.TB, token, path, model string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest("POST", h.url(path), strings.NewReader(chatBody(model, `,"stream":true`)))
	must(tb, err)
	req.Header = bearer(token)
	resp, err := h.hc.Do(req)
	must(tb, err)
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if _, err := newSSEReader(resp.Body).next(); err != nil {
		tb.Fatalf("first event: %v", err)
	}
	return resp, nil
}

// waitIdle waits until no request is counted in flight anywhere, and
// fails the test if some still are after 5 s.
func (h *harness) waitIdle(tb testing.TB) {
	tb.Helper()
	var n int
	var sum int64
	if !waitFor(5*time.Second, func() bool { n, sum = h.counters.Busy(); return n == 0 }) {
		tb.Fatalf("%d in-flight counters still count %d requests", n, sum)
	}
}

// TestInFlightLimits (issue 12, defect 2a; checklist 44): each scope's
// max_in_flight lets that many requests run at once; the next one gets
// 429 concurrency_limit_exceeded (rate_limit_error, Retry-After: 1)
// naming the scope, and is recorded; once the running ones end, requests
// pass again and every counter is back at 0.
func TestInFlightLimits(t *testing.T) {
	t.Parallel()
	for _, scope := range []string{"gateway", "token", "user", "tenant", "tenant default"} {
		t.Run(scope, func(t *testing.T) {
			t.Parallel()
			var cfg harnessConfig
			if scope == "tenant default" {
				cfg.inference = func(c *InferenceConfig) { c.TenantMaxInFlight = 2 }
			}
			h := newHarness(t, cfg)
			up := h.heldUpstream(h.gw.ID)
			token := h.token
			switch scope {
			case "gateway":
				h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: ptr(2)}})
			case "token":
				tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "limited",
					RateLimit: &store.RateLimit{MaxInFlight: ptr(2)}})
				must(t, err)
				token = tok.Secret
			case "user":
				u, secret := h.userToken(testTenant, auth.Member, "member@acme.test", h.gw.ID)
				_, err := h.svc.UpdateUser(h.ctx, h.root, u.ID, admin.UserPatch{RateLimit: &store.RateLimit{MaxInFlight: ptr(2)}})
				must(t, err)
				token = secret
			case "tenant":
				settings := admin.DefaultTenantSettings()
				settings.MaxInFlight = ptr(2)
				_, err := h.svc.UpdateTenant(h.ctx, h.root, testTenant, admin.TenantPatch{Settings: &settings})
				must(t, err)
			}
			h.rebuild()

			var open []*http.Response
			for range 2 {
				resp, b := h.streamAs(t, token, chatPath, heldModel)
				wantStatus(t, resp, b, 200)
				open = append(open, resp)
			}
			want := "this " + strings.TrimSuffix(scope, " default") + " allows 2 at once"
			for _, model := range []string{heldModel, "openai/gpt-4o-mini"} { // streamed, then not
				resp, b := h.streamAs(t, token, chatPath, model)
				if model == "openai/gpt-4o-mini" {
					resp, b = h.post(h.addr, chatPath, token, chatBody(model, ""))
				}
				wantAPIError(t, resp, b, 429, "rate_limit_error", "concurrency_limit_exceeded", "")
				if ra := resp.Header.Get("Retry-After"); ra != "1" {
					t.Errorf("Retry-After %q, want 1", ra)
				}
				if !strings.Contains(string(b), want) {
					t.Errorf("message %s does not say %q", b, want)
				}
				if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 429 || rec.ErrorCode != "concurrency_limit_exceeded" {
					t.Errorf("record %d %q, want 429 concurrency_limit_exceeded", rec.Status, rec.ErrorCode)
				}
			}
			if n := h.mock.Count(); n != 0 {
				t.Errorf("a refused request reached the provider (%d requests)", n)
			}
			up.releaseAll()
			for _, resp := range open {
				evs := newSSEReader(resp.Body).all(t)
				resp.Body.Close()
				if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
					t.Errorf("a held stream ended with %v, want [DONE]", kinds(evs))
				}
			}
			h.waitIdle(t)
			resp, b := h.post(h.addr, chatPath, token, chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 200)
		})
	}
}

// TestInFlightSurvivesRebuild: the counters hang off the snapshot's
// objects but outlive them. Requests in flight when a limit is set count
// against it, and a snapshot rebuild (any configuration change) forgets
// none of them.
func TestInFlightSurvivesRebuild(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	up := h.heldUpstream(h.gw.ID)
	resp1, b := h.streamAs(t, h.token, chatPath, heldModel) // no limit yet
	wantStatus(t, resp1, b, 200)
	defer resp1.Body.Close()
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: ptr(2)}})
	resp2, b := h.streamAs(t, h.token, chatPath, heldModel)
	wantStatus(t, resp2, b, 200)
	defer resp2.Body.Close()
	for range 3 {
		h.update(admin.GatewaySettings{RequestTimeoutMS: ptr(30000 + int(time.Now().UnixNano()%1000))})
		resp, b := h.streamAs(t, h.token, chatPath, heldModel)
		wantAPIError(t, resp, b, 429, "rate_limit_error", "concurrency_limit_exceeded", "")
	}
	up.releaseAll()
	_, _ = io.Copy(io.Discard, resp1.Body)
	_, _ = io.Copy(io.Discard, resp2.Body)
	h.waitIdle(t)
}

// panicky serves provider "groq" with an adapter that panics, and every
// other provider from the registry.
type panicky struct{ ProviderSource }

func (p panicky) Get(id string) (providers.Provider, bool) {
	if id == "groq" {
		return panicProvider{}, true
	}
	return p.ProviderSource.Get(id)
}

type panicProvider struct{}

func (panicProvider) Name() string { return "groq" }
func (panicProvider) Chat(context.Context, *providers.Request) (*providers.Response, error) {
	panic("adapter bug")
}
func (panicProvider) ChatStream(context.Context, *providers.Request) (providers.Stream, error) {
	return panicStream{}, nil
}

type panicStream struct{}

func (panicStream) Next() ([]byte, error) { panic("stream adapter bug") }
func (panicStream) Usage() llm.Usage      { return llm.Usage{} }
func (panicStream) Close() error          { return nil }

// TestInFlightReleasedOnEveryExit (checklist 44): whatever way a request
// ends (an answer, an upstream error, a timeout, a refusal after the
// slots were taken, a reset, a client leaving, a panic in the handler or
// in a stream's relay, a shutdown), its slots are given back: the
// counters return to 0 after each.
func TestInFlightReleasedOnEveryExit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{shutdownGrace: 300 * time.Millisecond,
		inference: func(c *InferenceConfig) { c.Providers = panicky{c.Providers} }})
	h.addKey(h.gw.ID, "groq", "bug", "sk-upstream-groq-0001")
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: ptr(1000), RequestsPerMinute: ptr(1000)}})
	up := h.heldUpstream(h.gw.ID)

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"answer", func(t *testing.T) {
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 200)
		}},
		{"stream", func(t *testing.T) {
			resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
			sr.all(t)
			resp.Body.Close()
		}},
		{"upstream error", func(t *testing.T) {
			h.mock.Script(providertest.Step{Status: 500, Times: 3})
			resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 502)
		}},
		{"timeout", func(t *testing.T) {
			resp, b := h.chat(chatBody("openai/gpt-4o-mini@latency=2s", ""), "x-sluice-request-timeout", "200")
			wantStatus(t, resp, b, 504)
		}},
		{"refused after the slots were taken", func(t *testing.T) {
			// The rate limit is checked after the slots are taken.
			tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, h.gw.ID, admin.TokenInput{Name: "one", RateLimit: rpm(1)})
			must(t, err)
			h.rebuild()
			resp, b := h.post(h.addr, chatPath, tok.Secret, chatBody("openai/gpt-4o-mini", ""))
			wantStatus(t, resp, b, 200)
			resp, b = h.post(h.addr, chatPath, tok.Secret, chatBody("openai/gpt-4o-mini", ""))
			wantAPIError(t, resp, b, 429, "rate_limit_error", "rate_limit_exceeded", "")
		}},
		{"reset mid-stream", func(t *testing.T) {
			resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini@chunks=3@reset=1", `,"stream":true`))
			sr.all(t)
			resp.Body.Close()
		}},
		{"client leaves a stream", func(t *testing.T) {
			resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini@chunks=50@delay=20ms", `,"stream":true`))
			_, err := sr.next()
			must(t, err)
			resp.Body.Close()
		}},
		{"client leaves a plain request", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", h.url(chatPath), strings.NewReader(chatBody("openai/gpt-4o-mini@latency=3s", "")))
			req.Header = bearer(h.token)
			n := h.mock.Count()
			go func() {
				waitFor(5*time.Second, func() bool { return h.mock.Count() > n })
				cancel()
			}()
			if resp, err := (&http.Client{}).Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the request was answered %d before the client left", resp.StatusCode)
			}
		}},
		{"panic in the handler", func(t *testing.T) {
			resp, b := h.chat(chatBody("groq/llama-3.1-8b-instant", ""))
			wantStatus(t, resp, b, 500)
		}},
		{"panic in a stream's relay", func(t *testing.T) {
			resp, sr := h.openStream(t, chatBody("groq/llama-3.1-8b-instant", `,"stream":true`))
			evs := sr.all(t)
			resp.Body.Close()
			if len(evs) != 1 || chunkKind(evs[0].data) != "error" {
				t.Errorf("stream %v, want one error event", kinds(evs))
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 500 {
				t.Errorf("record status %d, want 500", rec.Status)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.run(t)
			h.waitIdle(t)
		})
	}

	// Shutdown with streams open: they end after the grace period.
	var wg sync.WaitGroup
	for range 3 {
		resp, b := h.streamAs(t, h.token, chatPath, heldModel)
		wantStatus(t, resp, b, 200)
		wg.Go(func() {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	if n, sum := h.counters.Busy(); sum != 3*4 {
		t.Errorf("with 3 streams open: %d counters count %d, want 12 (tenant, gateway, token, upstream)", n, sum)
	}
	if err := h.shutdown(10 * time.Second); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	wg.Wait()
	up.releaseAll()
	h.waitIdle(t)
}
