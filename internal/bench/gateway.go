package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Times the gateway is given to start, to apply its configuration and to
// stop.
const (
	startTimeout     = 30 * time.Second
	configureTimeout = 10 * time.Second
	stopTimeout      = 15 * time.Second
	// outputTail is how much of the gateway's output is kept for error
	// messages.
	outputTail = 16 << 10
)

// gatewayOptions start a gateway.
type gatewayOptions struct {
	command []string // the sluice binary and any leading arguments
	env     []string // added last: overrides the benchmark's variables
	cpu     int      // the CPU to pin the process to; -1 leaves it unpinned
}

// gateway is a `sluice serve` child process on a fresh embedded store.
type gateway struct {
	cmd        *exec.Cmd
	base       string // "http://127.0.0.1:port"
	adminToken string
	dataDir    string
	out        *tail
	http       *http.Client

	exited  chan struct{} // closed by the waiting goroutine once cmd.Wait returned
	waitErr error         // cmd.Wait's result; read after exited is closed

	stopOnce sync.Once
	stopErr  error
}

// newGateway picks a free loopback address and makes a temporary dir
// named after prefix (what names it in errors) for a child process whose
// admin token is adminToken; it returns the gateway, not yet started, and
// its address.
func newGateway(prefix, what, adminToken string) (*gateway, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, "", fmt.Errorf("create the %s: %w", what, err)
	}
	return &gateway{
		base:       "http://" + addr,
		adminToken: adminToken,
		dataDir:    dir,
		out:        &tail{max: outputTail},
		http:       &http.Client{Timeout: 10 * time.Second},
		exited:     make(chan struct{}),
	}, addr, nil
}

// startGateway starts `sluice serve` on a free loopback port with
// GOMAXPROCS=1 and waits until /healthz answers 200.
func startGateway(ctx context.Context, o gatewayOptions) (*gateway, error) {
	g, addr, err := newGateway("sluice-bench-", "gateway's data dir", "sk-sl-bench-"+rand.Text())
	if err != nil {
		return nil, err
	}
	dir := g.dataDir
	args := append(append([]string{}, o.command[1:]...), "serve", "--listen", addr, "--data-dir", dir, "--shutdown-grace", "2s")
	g.cmd = exec.Command(o.command[0], args...)
	// The caller's SLUICE_ variables (a database URL, a listen address)
	// must not reach the gateway; exec keeps the last of duplicate names.
	g.cmd.Env = append(envWithout(os.Environ(), "SLUICE_"),
		"GOMAXPROCS=1",
		"SLUICE_ADMIN_TOKEN="+g.adminToken,
		"SLUICE_ALLOW_PRIVATE_UPSTREAMS=true")
	g.cmd.Env = append(g.cmd.Env, o.env...)
	return g.run(ctx, o.cpu, "gateway")
}

// run starts g.cmd pinned to cpu (what names it in errors), its output
// in g.out, and waits until it answers /healthz; it stops it otherwise.
func (g *gateway) run(ctx context.Context, cpu int, what string) (*gateway, error) {
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	g.cmd.SysProcAttr = childAttr()
	if err := startPinned(g.cmd, cpu); err != nil {
		_ = os.RemoveAll(g.dataDir)
		return nil, fmt.Errorf("start the %s %s: %w", what, g.cmd.Args[0], err)
	}
	go func() {
		g.waitErr = g.cmd.Wait()
		close(g.exited)
	}()
	if err := g.waitHealthy(ctx); err != nil {
		_ = g.stop()
		return nil, err
	}
	return g, nil
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

// waitHealthy polls /healthz until it answers 200.
func (g *gateway) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	for {
		res, err := g.http.Get(g.base + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the gateway did not become healthy within %s\n%s", startTimeout, g.out)
		}
		select {
		case <-g.exited:
			return fmt.Errorf("the gateway exited at start-up: %v\n%s", g.waitErr, g.out)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// configure sets the gateway up through the admin REST API as a user
// would: a tenant, a gateway with request and body logging, an OpenAI key
// whose base URL is upstream, and a gateway token, whose secret it
// returns once an inference call with it succeeds.
func (g *gateway) configure(ctx context.Context, upstream string) (string, error) {
	if err := g.admin(ctx, "/admin/v1/tenants", map[string]any{"id": tenantID, "name": "Benchmark"}, nil); err != nil {
		return "", err
	}
	var gw struct {
		ID string `json:"id"`
	}
	err := g.admin(ctx, "/admin/v1/tenants/"+tenantID+"/gateways",
		map[string]any{"slug": gatewaySlug, "name": "Benchmark", "log_bodies": true}, &gw)
	if err != nil {
		return "", err
	}
	err = g.admin(ctx, "/admin/v1/gateways/"+gw.ID+"/keys",
		map[string]any{"provider": "openai", "alias": "mock", "key": upstreamKey, "base_url": upstream}, nil)
	if err != nil {
		return "", err
	}
	var tok struct {
		Secret string `json:"secret"`
	}
	if err := g.admin(ctx, "/admin/v1/gateways/"+gw.ID+"/tokens", map[string]any{"name": "bench"}, &tok); err != nil {
		return "", err
	}
	// The proxy's configuration snapshot refreshes after each admin write,
	// asynchronously: wait until it serves the new gateway.
	t := gatewayTargets(g.base, tok.Secret).plain
	c, err := t.client(1)
	if err != nil {
		return "", err
	}
	defer c.CloseIdleConnections()
	x := newExchange(t, c)
	deadline := time.Now().Add(configureTimeout)
	for {
		_, err := x.do()
		if err == nil {
			// The gateway's start-up work (the tokenizer's encodings) must
			// not fall into the first phase measured on it: the ClickHouse
			// gateway's throughput phase starts right after this.
			_, err := settle(ctx, g.cpuSeconds, settleWindow, settleShare, settleTimeout)
			return tok.Secret, err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the gateway did not serve its new configuration within %s: %w\n%s", configureTimeout, err, g.out)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// How a process is let settle: a freshly configured gateway until it
// spends less than a tenth of a CPU over 300 ms (its start-up work done);
// after a closed-loop phase until it spends less than 2 % over a second,
// longer than the pipeline's flush interval (500 ms), so that the records
// of the phase are written. /proc counts CPU time in clock ticks of 10 ms.
const (
	settleWindow, settleShare = 300 * time.Millisecond, 0.1
	drainWindow, drainShare   = time.Second, 0.02
	settleTimeout             = 15 * time.Second
)

// settle waits until cpu (a process's CPU seconds so far) grows by less
// than share of window over a whole window, or timeout passed (a process
// kept busy by something else is measured anyway), and returns its last
// reading.
func settle(ctx context.Context, cpu func() (float64, error), window time.Duration, share float64, timeout time.Duration) (float64, error) {
	deadline := time.Now().Add(timeout)
	prev, err := cpu()
	if err != nil {
		return 0, err
	}
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(window):
		}
		now, err := cpu()
		if err != nil {
			return 0, err
		}
		if now-prev < window.Seconds()*share {
			return now, nil
		}
		prev = now
	}
	return prev, nil
}

// admin POSTs body to an admin path, expects 201 Created and decodes the
// answer into out when it is not nil.
func (g *gateway) admin(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.adminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := g.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("POST %s: read the answer: %w", path, err)
	}
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: status %d: %s", path, res.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("POST %s: decode the answer: %w", path, err)
	}
	return nil
}

// stop ends the gateway with SIGTERM (SIGKILL after stopTimeout), waits
// for it and removes its data dir. It may be called more than once; an
// unclean exit after SIGTERM is an error.
func (g *gateway) stop() error {
	g.stopOnce.Do(func() {
		defer os.RemoveAll(g.dataDir)
		select {
		case <-g.exited:
			g.stopErr = fmt.Errorf("the gateway exited during the benchmark: %v\n%s", g.waitErr, g.out)
			return
		default:
		}
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.exited:
			if g.waitErr != nil {
				g.stopErr = fmt.Errorf("the gateway's shutdown: %w\n%s", g.waitErr, g.out)
			}
		case <-time.After(stopTimeout):
			_ = g.cmd.Process.Kill()
			<-g.exited
			g.stopErr = fmt.Errorf("the gateway did not stop within %s of SIGTERM\n%s", stopTimeout, g.out)
		}
	})
	return g.stopErr
}

// cpuSeconds is the gateway's CPU time so far, user and system.
func (g *gateway) cpuSeconds() (float64, error) { return cpuSeconds(g.pid()) }

// cpuMeter returns a meter of the gateway's CPU time over a window.
func (g *gateway) cpuMeter() *cpuMeter { return &cpuMeter{pid: g.pid()} }

// cpuMeter reads a process's CPU time at the two edges of a window.
type cpuMeter struct {
	pid           int
	before, after float64
}

// start reads the CPU time at from and at to in a goroutine; the returned
// function waits for it. A nil meter measures nothing.
func (m *cpuMeter) start(ctx context.Context, from, to time.Time) (wait func() error) {
	if m == nil {
		return func() error { return nil }
	}
	done := make(chan error, 1) // the one result; buffered so the goroutine never blocks
	go func() { done <- m.measure(ctx, from, to) }()
	return func() error { return <-done }
}

func (m *cpuMeter) measure(ctx context.Context, from, to time.Time) error {
	var err error
	if !sleepCtx(ctx, from) {
		return nil
	}
	if m.before, err = cpuSeconds(m.pid); err != nil {
		return err
	}
	if !sleepCtx(ctx, to) {
		return nil
	}
	m.after, err = cpuSeconds(m.pid)
	return err
}

// drain extends the window until the process settles after the phase's
// load: what it does for the phase's requests afterwards — the embedded
// store's writes, at the lowest priority, wait for a CPU on a busy machine —
// counts too. Call it after the phase, once start's wait returned.
func (m *cpuMeter) drain(ctx context.Context) error {
	if m == nil {
		return nil
	}
	after, err := settle(ctx, func() (float64, error) { return cpuSeconds(m.pid) }, drainWindow, drainShare, settleTimeout)
	if err != nil {
		return err
	}
	m.after = max(m.after, after)
	return nil
}

// seconds is the CPU time spent in the window.
func (m *cpuMeter) seconds() float64 { return m.after - m.before }

// sleepCtx sleeps until t; false means ctx ended first.
func sleepCtx(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tail keeps the last max bytes written to it; safe for concurrent use
// (the child's stdout and stderr are copied by two goroutines).
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// String returns the kept output, indented, for an error message.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) == 0 {
		return "  (the gateway printed nothing)"
	}
	return "  gateway output:\n    " + string(bytes.ReplaceAll(bytes.TrimSpace(t.b), []byte("\n"), []byte("\n    ")))
}
