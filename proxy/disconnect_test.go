package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// verifyNoLeaks checks, when the test ends (after every other cleanup),
// that the goroutines are back to those running when it began. fasthttp's
// housekeeping may remain: the process-wide Date updater, and the pool
// cleaners of clients and servers, which notice a stop only at their next
// tick. Anything of a request (a watcher, a relay, a stream writer, an
// upstream reader) would show.
func verifyNoLeaks(t *testing.T) {
	base := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, base,
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
	})
}

// rawRequest is a chat request as bytes on the wire.
func rawRequest(token, body string) string {
	return "POST " + chatPath + " HTTP/1.1\r\nHost: sluice\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

// TestClientDisconnectCancelsUpstream (issue 12, defect 10; checklist 60):
// a client that leaves while its non-streamed request waits for a slow
// upstream cancels the upstream call (the gateway closes the upstream
// connection within 1 s), the request is recorded 499 client_closed with
// the usage it may have cost (the prompt, estimated) and flagged partial,
// its slots and its budget reservation are given back, and no goroutine is
// left behind.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	// Not parallel: the goroutine check needs the process to itself.
	verifyNoLeaks(t)
	budgets := budget.NewLocal(nil)
	h := newHarness(t, harnessConfig{inference: func(c *InferenceConfig) { c.Budgets = budgets }})
	tp := testenv.NewTCPProxy(t, strings.TrimPrefix(h.mockURL, "http://"))
	h.addKeyAt(h.gw.ID, "openai", "proxied", "sk-upstream-proxied-01", "http://"+tp.Addr()+"/v1")
	h.update(admin.GatewaySettings{
		Routes: &[]store.Route{{Name: "slow", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("proxied")}}}},
		Budget: graphql.OmittableOf(&store.Budget{AmountUSD: money.FromFloat(1000), Period: store.PeriodMonthly, Hard: true})})
	h.mock.Script(providertest.Step{Latency: 20 * time.Second})

	conn, err := net.Dial("tcp", h.addr)
	must(t, err)
	_, err = io.WriteString(conn, rawRequest(h.token, chatBody("slow", "")))
	must(t, err)
	if !waitFor(5*time.Second, func() bool { return h.mock.Count() == 1 && tp.Conns() == 1 }) {
		t.Fatal("the request did not reach the upstream")
	}
	left := time.Now()
	conn.Close()
	if !waitFor(5*time.Second, func() bool { return tp.Conns() == 0 }) {
		t.Fatal("the upstream connection is still open 5 s after the client left (the upstream answers after 20 s)")
	}
	if d := time.Since(left); d > time.Second {
		t.Errorf("the upstream connection closed %s after the client left, want within 1 s", d)
	}
	var rec struct {
		status int
		code   string
		flags  []string
		in     int64
		out    int64
		cost   bool
	}
	waitFor(5*time.Second, func() bool { return len(h.sink.Records()) == 1 })
	for _, r := range h.sink.Records() {
		rec.status, rec.code, rec.flags, rec.in, rec.out, rec.cost = r.Status, r.ErrorCode, r.Flags, r.TokensIn, r.TokensOut, r.CostUSD > 0
	}
	if rec.status != 499 || rec.code != "client_closed" || !hasFlag(rec.flags, "partial") || !hasFlag(rec.flags, "usage_estimated") {
		t.Errorf("record %d %q %v, want 499 client_closed partial usage_estimated", rec.status, rec.code, rec.flags)
	}
	if rec.in == 0 || rec.out != 0 || !rec.cost {
		t.Errorf("record tokens in %d out %d, cost > 0 %v: want the prompt's tokens and cost, no answer", rec.in, rec.out, rec.cost)
	}
	h.waitIdle(t)
	spent, reserved, err := budgets.State(context.Background(), budget.GatewayScope(h.gw.ID), monthStartOf(time.Now()))
	must(t, err)
	if reserved != 0 || spent == 0 {
		t.Errorf("budget after the cancelled request: spent %s, reserved %s; want the prompt spent and nothing reserved", spent, reserved)
	}
}

// TestPipelinedRequestAfterWatch: the watcher of a non-streamed request
// reads the client's connection; a client that sends its next requests
// before the answers (HTTP pipelining) loses no byte of them, also when a
// request was read ahead while fasthttp still held a whole one.
func TestPipelinedRequestAfterWatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	conn, err := net.Dial("tcp", h.addr)
	must(t, err)
	defer conn.Close()
	req := func(text string) string {
		return rawRequest(h.token, `{"model":"openai/gpt-4o-mini@latency=300ms","messages":[{"role":"user","content":"`+text+`"}]}`)
	}
	// The first two arrive together: fasthttp reads both at once. The
	// third arrives while the first waits for its upstream: its first
	// byte is what the first request's watcher reads.
	_, err = io.WriteString(conn, req("first one")+req("second one"))
	must(t, err)
	if !waitFor(5*time.Second, func() bool { return h.mock.Count() == 1 }) {
		t.Fatal("the first request did not reach the upstream")
	}
	_, err = io.WriteString(conn, req("third one"))
	must(t, err)
	br := bufio.NewReader(conn)
	for i, want := range []string{"first one", "second one", "third one"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("response %d: %d %s, want 200 answering %q", i+1, resp.StatusCode, b, want)
		}
	}
}

// TestStreamSlowReader (issue 12, defect 2c; checklist 12): a streaming
// client that stops reading blocks the stream's writes; after the stream
// write timeout the gateway closes the connection, cancels the upstream
// (which had to stop writing long before the end: nothing is buffered
// without bound), records the request 499 client_write_timeout with the
// partial usage, and gives back its slots.
func TestStreamSlowReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{inference: func(c *InferenceConfig) { c.StreamWriteTimeout = 300 * time.Millisecond }})
	big := strings.Repeat("many words ", 1500) // 16 KiB of content per event
	frames := []string{roleFrame}
	for i := range 2000 { // 32 MiB: more than every buffer between the gateway and the client
		// Each event reports the usage so far, which spares the record a
		// token count of megabytes (slow under -race).
		frames = append(frames, strings.Replace(contentFrame(big), `}]}`,
			`}],"usage":{"prompt_tokens":7,"completion_tokens":`+itoa(3000*(i+1))+`,"total_tokens":`+itoa(3000*(i+1)+7)+`}}`, 1))
	}
	frames = append(frames, "data: [DONE]\n\n")
	up := newSSEUpstream(t, 0, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "big", "sk-upstream-big-0001", up.srv.URL+"/v1")
	h.rebuild()

	conn, err := net.Dial("tcp", h.addr)
	must(t, err)
	defer conn.Close()
	// A small receive window: the buffers between the gateway and the
	// client fill soon, however slow the machine.
	must(t, conn.(*net.TCPConn).SetReadBuffer(4<<10))
	_, err = io.WriteString(conn, rawRequest(h.token, chatBody("openai-compatible/m", `,"stream":true`)))
	must(t, err)
	// The client reads nothing.
	select {
	case <-up.closed:
	case <-time.After(60 * time.Second):
		t.Fatal("the upstream was not cancelled while the client did not read")
	}
	up.mu.Lock()
	written := up.written
	up.mu.Unlock()
	if written >= len(frames) {
		t.Errorf("the upstream wrote all %d frames to a client that read none", written)
	}
	waitFor(5*time.Second, func() bool { return len(h.sink.Records()) == 1 })
	recs := h.sink.Records()
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	if r := recs[0]; r.Status != 499 || r.ErrorCode != "client_write_timeout" || !hasFlag(r.Flags, "partial") || r.TokensOut == 0 {
		t.Errorf("record %d %q %v tokens out %d, want 499 client_write_timeout partial with the tokens relayed",
			r.Status, r.ErrorCode, r.Flags, r.TokensOut)
	}
	h.waitIdle(t)
}

// TestUpstreamFairness (issue 12, defect 2b): one tenant flooding a
// provider with slow requests holds at most its share of the gateway's
// connections to that provider; its requests beyond the share are
// refused at once, and another tenant's requests to the same provider
// still succeed. The client keeps 4 connections per host (a share of 2);
// before the share, the flood took all 4 and the other tenant's requests
// failed with 502 once the wait for a connection ran out.
func TestUpstreamFairness(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{
		client:    providers.ClientConfig{MaxConnsPerHost: 4, DialTimeout: time.Second},
		inference: func(c *InferenceConfig) { c.UpstreamShare = 2 },
	})
	g := h.gateway("globex", "prod")
	tok, err := h.svc.CreateGatewayToken(h.ctx, h.root, g.ID, admin.TokenInput{Name: "b"})
	must(t, err)
	h.rebuild()

	const flood = 6
	type result struct {
		status int
		body   string
	}
	results := make(chan result, flood)
	for range flood {
		go func() {
			req, _ := http.NewRequest("POST", h.url(chatPath), strings.NewReader(chatBody("openai/gpt-4o-mini@latency=3s", "")))
			req.Header = bearer(h.token)
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				results <- result{body: err.Error()}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{resp.StatusCode, string(b)}
		}()
	}
	if !waitFor(5*time.Second, func() bool { return h.mock.Count() >= 2 }) {
		t.Fatal("the flood did not reach the provider")
	}
	for i := range 3 {
		resp, b := h.post(h.addr, chatPathOf("globex", "prod"), tok.Secret, chatBody("openai/gpt-4o-mini", ""))
		if resp.StatusCode != 200 {
			t.Errorf("the other tenant's request %d during the flood: %d %s, want 200", i+1, resp.StatusCode, b)
		}
	}
	var ok, refused int
	for range flood {
		r := <-results
		switch {
		case r.status == 200:
			ok++
		case r.status == 429 && strings.Contains(r.body, "concurrency_limit_exceeded") && strings.Contains(r.body, "provider openai"):
			refused++
		default:
			t.Errorf("flood request: %d %s", r.status, r.body)
		}
	}
	if ok != 2 || refused != flood-2 {
		t.Errorf("flood: %d answered, %d refused; want 2 (the share) and %d", ok, refused, flood-2)
	}
	h.waitIdle(t)
}
