package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/ratelimit"
)

// privateRedis is a redis-server of the test's own on a free loopback
// port, so that the test may kill and restart it: the shared test Redis
// is never touched.
type privateRedis struct {
	t    *testing.T
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	r := &privateRedis{t: t, addr: ln.Addr().String()}
	must(t, ln.Close())
	r.start(path)
	t.Cleanup(r.kill)
	return r
}

func (r *privateRedis) start(path string) {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--dir", r.t.TempDir(), "--protected-mode", "no")
	must(r.t, cmd.Start())
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	if !waitFor(10*time.Second, func() bool { return c.Ping(context.Background()).Err() == nil }) {
		r.t.Fatalf("private redis-server on %s did not answer", r.addr)
	}
}

// kill ends the server at once (SIGKILL), as a crash would.
func (r *privateRedis) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// restart kills the server and starts it again on the same port after
// down.
func (r *privateRedis) restart(down time.Duration) {
	r.kill()
	time.Sleep(down)
	path, _ := exec.LookPath("redis-server")
	r.start(path)
}

// statusSink counts records by status and keeps none, so that the heap
// after a run holds nothing of it.
type statusSink struct {
	mu     sync.Mutex
	counts map[string]int
	n      atomic.Int64
}

func (s *statusSink) Enqueue(rec *analytics.Record) {
	s.n.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[fmt.Sprintf("%d %s", rec.Status, rec.ErrorCode)]++
}

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoakFaults is a short soak under faults (issue 12; checklist 44,
// 60): for a few seconds, concurrent clients run streams and plain
// requests, leave in the middle of them, and meet upstreams that reset
// mid-stream or fail, while the limits and budgets run on a Redis that is
// killed and restarted halfway. Every request is answered or recorded as
// its client left; afterwards the in-flight counters are back at 0, the
// goroutines at their baseline, and the heap near it.
func TestSoakFaults(t *testing.T) {
	// Not parallel: the goroutine and heap checks need the process to
	// themselves.
	rds := startPrivateRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: rds.addr, MaxRetries: -1, ContextTimeoutEnabled: true, DialerRetries: 1})
	t.Cleanup(func() { _ = rc.Close() })
	discard := slog.New(slog.DiscardHandler)
	lim, err := ratelimit.NewRedis(ratelimit.RedisConfig{Client: rc, Timeout: 200 * time.Millisecond,
		RetryInterval: 100 * time.Millisecond, Logger: discard})
	must(t, err)
	budgets, err := budget.NewManager(budget.Config{Redis: rc, Timeout: 200 * time.Millisecond,
		RetryInterval: 100 * time.Millisecond, Logger: discard})
	must(t, err)
	sink := &statusSink{counts: map[string]int{}}
	h := newHarness(t, harnessConfig{inference: func(c *InferenceConfig) {
		c.Limiter, c.Budgets, c.Sink = lim, budgets, sink
	}})
	setPrice(h)
	// Failing requests go to a key of their own, so that its circuit
	// breaker opening does not turn the others away.
	h.addKey(h.gw.ID, "openai", "flaky", mainKey)
	h.update(admin.GatewaySettings{Routes: &[]store.Route{{Name: "flaky", Targets: []store.RouteTarget{
		{Provider: "openai", Model: pricedModel + "@status=500", KeyAlias: ptr("flaky")}}}}})
	h.update(admin.GatewaySettings{RateLimit: &store.RateLimit{RequestsPerMinute: ptr(1_000_000),
		TokensPerMinute: ptr(1_000_000_000), MaxInFlight: ptr(1000)}})
	h.update(hardBudget(money.FromFloat(1000), "monthly"))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	// send runs one request of the given kind; "" when all went as meant.
	send := func(kind string) string {
		stream := strings.HasPrefix(kind, "stream")
		model := "openai/" + pricedModel
		switch kind {
		case "stream-reset":
			model += "@chunks=6@reset=2"
		case "stream-leave", "plain-leave":
			model += "@chunks=30@delay=20ms@latency=100ms"
		case "plain-error":
			model = "flaky"
		}
		extra := `,"max_tokens":8`
		if stream {
			extra += `,"stream":true`
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", h.url(chatPath), strings.NewReader(chatBody(model, extra)))
		req.Header = bearer(h.token)
		if kind == "plain-leave" {
			time.AfterFunc(50*time.Millisecond, cancel) // during the upstream's latency
		}
		resp, err := client.Do(req)
		if err != nil {
			if kind == "plain-leave" {
				return ""
			}
			return kind + ": " + err.Error()
		}
		defer resp.Body.Close()
		switch kind {
		case "plain", "stream", "stream-reset":
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				return fmt.Sprintf("%s: %d %s", kind, resp.StatusCode, b)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
		case "plain-error":
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 502 && resp.StatusCode != 503 { // 503 once the key's breaker opened
				return fmt.Sprintf("%s: %d, want 502 or 503", kind, resp.StatusCode)
			}
		case "stream-leave":
			_, _ = newSSEReader(resp.Body).next()
			cancel()
		}
		return ""
	}
	kinds := []string{"plain", "stream", "stream-reset", "stream-leave", "plain-leave", "plain-error"}
	run := func(d time.Duration, workers int) {
		var wg sync.WaitGroup
		end := time.Now().Add(d)
		for range workers {
			wg.Go(func() {
				for time.Now().Before(end) {
					if msg := send(kinds[rand.IntN(len(kinds))]); msg != "" {
						t.Error(msg)
						return
					}
				}
			})
		}
		wg.Wait()
	}

	// Warm up (pools, caches, fasthttp's housekeeping), then take the
	// baselines.
	run(time.Second, 4)
	h.waitIdle(t)
	client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	baseHeap := heapInUse()
	baseGoroutines := goleak.IgnoreCurrent()
	before := sink.n.Load()

	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(2 * time.Second)
		rds.restart(time.Second)
	}()
	run(6*time.Second, 12)
	<-restarted

	h.waitIdle(t)
	if n := sink.n.Load() - before; n < 50 {
		t.Errorf("only %d requests recorded in the run", n)
	}
	t.Logf("records: %v; limiter fallbacks %d, budget fallbacks %d", sink.counts, lim.Fallbacks(), budgets.Fallbacks())
	if lim.Fallbacks() == 0 && budgets.Fallbacks() == 0 {
		t.Error("no limiter or budget call fell back while Redis was down: the restart was not felt")
	}
	client.CloseIdleConnections()
	h.client.CloseIdleConnections()
	// fasthttp's pool cleaners, started again by the run, end on their
	// own some seconds after the pools are empty: they are housekeeping,
	// not requests.
	goleak.VerifyNone(t, baseGoroutines,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).workerFunc"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
	// The heap: what a run leaves is caches that do not grow with the
	// number of requests (pools, the breakers and limiter fallbacks of one
	// gateway); 8 MiB is far below what a leak of per-request state over
	// thousands of requests (bodies, records, stream buffers) would hold.
	if heap := heapInUse(); heap > baseHeap+8<<20 {
		t.Errorf("heap in use %d MiB after the run, %d MiB before", heap>>20, baseHeap>>20)
	}
}
