package snapshot

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

// quiet drops the holder's logs in tests that do not read them.
var quiet = slog.New(slog.DiscardHandler)

// propagation is the contract's bound: a change is served within 2 s.
const propagation = 2 * time.Second

// start runs h until the test ends and checks that Run then returns nil.
// It returns a channel that is closed when Run returns.
func start(t *testing.T, h *Holder) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = h.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return done
}

// waitFor polls cond until it holds or within passes, and returns how long
// it took; it fails the test on timeout.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	begin := time.Now()
	for !cond() {
		if time.Since(begin) > within {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(begin)
}

func ready(t *testing.T, h *Holder) *Snapshot {
	t.Helper()
	waitFor(t, 10*time.Second, "first snapshot", h.Ready)
	return h.Load()
}

// hasGateway reports whether the snapshot in service serves tenant/slug.
func hasGateway(h *Holder, tenant, slug string) func() bool {
	return func() bool {
		s := h.Load()
		if s == nil {
			return false
		}
		_, ok := s.Gateway(tenant, slug)
		return ok
	}
}

// propagates makes changes through the admin service and checks that each
// is served within the contract's bound.
func propagates(t *testing.T, e *env, h *Holder) {
	t.Helper()
	ctx := context.Background()
	begin := time.Now()
	g := e.gateway(t, "platform", "fresh")
	took := waitFor(t, propagation, "new gateway served", hasGateway(h, "platform", "fresh"))
	t.Logf("new gateway served after %v", took)

	tok := e.gatewayToken(t, g.ID, admin.TokenInput{Name: "app"})
	waitFor(t, propagation, "new token served", func() bool { _, ok := h.Load().Token(hashOf(tok.Secret)); return ok })
	revoke := true
	if _, err := e.svc.UpdateGatewayToken(ctx, e.admin, g.ID, tok.ID, admin.TokenPatch{Revoked: &revoke}); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, propagation, "revocation served", func() bool { _, ok := h.Load().Token(hashOf(tok.Secret)); return !ok })
	t.Logf("revocation served after %v", took)

	if err := e.svc.DeleteGateway(ctx, e.admin, g.ID); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, propagation, "gateway deletion served", func() bool { return !hasGateway(h, "platform", "fresh")() })
	t.Logf("gateway deletion served after %v (all changes: %v)", took, time.Since(begin))
	if v := h.Stats().Version; v != h.Load().Version || v == 0 {
		t.Errorf("Stats().Version = %d, snapshot version %d", v, h.Load().Version)
	}
}

func TestHolderPollsVersion(t *testing.T) {
	e := newEnv(t, testenv.SQLite, nil)
	h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Logger: quiet}) // Poll defaults to 1 s
	start(t, h)
	ready(t, h)
	propagates(t, e, h)
}

func TestHolderListensOnPostgres(t *testing.T) {
	e := newEnv(t, testenv.Postgres, nil)
	// With a one-minute poll, only the notification can deliver in time.
	h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Poll: time.Minute, Logger: quiet})
	start(t, h)
	ready(t, h)
	waitFor(t, 10*time.Second, "LISTEN connection", func() bool { return h.Stats().Listening })
	propagates(t, e, h)
}

func TestHolderRefreshIsImmediate(t *testing.T) {
	var h *Holder
	// The service exists before the holder (as in `sluice serve`): writes
	// made before the holder, the bootstrap's, have no one to tell.
	e := newEnv(t, testenv.SQLite, func() {
		if h != nil {
			h.Refresh()
		}
	})
	h = NewHolder(HolderConfig{Store: e.st, Box: e.box, Poll: time.Minute, Logger: quiet})
	start(t, h)
	ready(t, h)
	e.gateway(t, "platform", "now")
	took := waitFor(t, time.Second, "gateway served after Refresh", hasGateway(h, "platform", "now"))
	t.Logf("served %v after the write", took)
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) count(s string) int { return strings.Count(b.String(), s) }

func TestHolderKeepsServingWhenStoreIsDown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		e := newEnv(t, b, nil)
		var logs syncBuffer
		h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Poll: 50 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		done := start(t, h)
		s := ready(t, h)
		if err := e.st.Close(); err != nil {
			t.Fatal(err)
		}
		h.Refresh()
		waitFor(t, 5*time.Second, "failures recorded", func() bool { return h.Stats().Failures >= 5 })
		if got := h.Load(); got != s {
			t.Errorf("Load() = %p after the store closed, want the last snapshot %p", got, s)
		}
		if _, ok := h.Load().Gateway("platform", "nope"); ok {
			t.Error("unexpected gateway")
		}
		st := h.Stats()
		if !st.Ready || st.LastError == "" || st.LastErrorAt == nil || st.Version != s.Version {
			t.Errorf("Stats() = %+v, want ready with the last version and an error", st)
		}
		if n := logs.count("level=ERROR"); n != 1 {
			t.Errorf("%d error lines for %d failures, want 1 (rate-limited):\n%s", n, st.Failures, logs.String())
		}
		select {
		case <-done:
			t.Fatal("Run returned while the store was down")
		default:
		}
	})
}

func TestHolderRetriesFirstBuild(t *testing.T) {
	e := newEnv(t, testenv.SQLite, nil)
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Logger: quiet})
	start(t, h)
	waitFor(t, 5*time.Second, "retries", func() bool { return h.Stats().Failures >= 3 })
	if h.Ready() || h.Load() != nil {
		t.Error("ready without a store")
	}
	if st := h.Stats(); st.LastError == "" || st.Rebuilds != 0 {
		t.Errorf("Stats() = %+v, want an error and no rebuild", st)
	}
}

// gatedBox blocks Open while armed, so that a test can hold a rebuild in
// flight (the store must hold a provider key for a rebuild to open one).
type gatedBox struct {
	Opener
	armed   atomic.Bool
	started chan struct{} // size 1: the test waits for one start at a time
	release chan struct{}
}

func (g *gatedBox) Open(sealed string) (secret.Value, error) {
	if g.armed.Load() {
		signal(g.started)
		<-g.release
	}
	return g.Opener.Open(sealed)
}

func TestHolderCoalescesRefreshes(t *testing.T) {
	e := newEnv(t, testenv.SQLite, nil)
	e.tenant(t, "acme")
	g := e.gateway(t, "acme", "prod")
	try(e.svc.CreateKey(context.Background(), e.admin, g.ID,
		admin.KeyInput{Provider: "openai", Alias: "main", Key: "sk-test-1234567890abcdef"})).must(t)
	keys := &gatedBox{Opener: e.box, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := NewHolder(HolderConfig{Store: e.st, Box: keys, Poll: time.Minute, Logger: quiet})
	start(t, h)
	ready(t, h)
	base := h.Stats().Rebuilds

	keys.armed.Store(true)
	h.Refresh()
	select {
	case <-keys.started:
	case <-time.After(5 * time.Second):
		t.Fatal("Refresh did not start a rebuild")
	}
	// One rebuild is in flight; 100 more requests must queue exactly one.
	for range 100 {
		h.Refresh()
	}
	keys.armed.Store(false)
	close(keys.release)
	waitFor(t, 5*time.Second, "two rebuilds", func() bool { return h.Stats().Rebuilds == base+2 })
	time.Sleep(300 * time.Millisecond)
	if got := h.Stats().Rebuilds - base; got != 2 {
		t.Errorf("%d rebuilds for 101 refreshes (one during a rebuild), want 2", got)
	}

	// A burst with no rebuild held: at most one in flight and one queued.
	base = h.Stats().Rebuilds
	for range 100 {
		h.Refresh()
	}
	waitFor(t, 5*time.Second, "a rebuild", func() bool { return h.Stats().Rebuilds > base })
	time.Sleep(300 * time.Millisecond)
	if got := h.Stats().Rebuilds - base; got > 2 {
		t.Errorf("%d rebuilds for a burst of 100 refreshes, want at most 2", got)
	}
}

func TestHolderRunTwice(t *testing.T) {
	e := newEnv(t, testenv.SQLite, nil)
	h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Logger: quiet})
	start(t, h)
	ready(t, h)
	if err := h.Run(context.Background()); err == nil {
		t.Error("second Run returned nil, want an error")
	}
	if err := NewHolder(HolderConfig{}).Run(context.Background()); err == nil {
		t.Error("Run without a store returned nil, want an error")
	}
}
