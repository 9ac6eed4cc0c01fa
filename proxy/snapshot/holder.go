package snapshot

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

const (
	// buildTimeout bounds one build, so that a store that hangs cannot
	// stall the run loop (and with it every later refresh) for good.
	buildTimeout = 30 * time.Second
	// checkTimeout bounds one read of the configuration version.
	checkTimeout = 5 * time.Second
	// minBackoff and maxBackoff bound the waits between attempts to build
	// the first snapshot and to reconnect the LISTEN connection.
	minBackoff = 200 * time.Millisecond
	maxBackoff = 15 * time.Second
	// errLogEvery rate-limits the logging of store errors: while the store
	// is unreachable every poll fails, and one line per poll would drown
	// the log.
	errLogEvery = 30 * time.Second
)

// HolderConfig configures a Holder.
type HolderConfig struct {
	Store *store.Store
	// Box opens the provider keys the store holds sealed.
	Box Opener
	// Poll is the period of the configuration-version check (default 500 ms,
	// so that a change reaches every proxy well within the 2 s the contract
	// promises; the check reads one row).
	// With PostgreSQL, LISTEN/NOTIFY usually delivers a change sooner; the
	// check is the fallback.
	Poll   time.Duration
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxRows bounds the configuration rows a snapshot loads (default
	// DefaultMaxRows): a larger configuration is refused and the snapshot
	// in service stays.
	MaxRows int
}

// Holder holds the current snapshot and keeps it fresh. Load is safe for
// any number of goroutines and takes no lock; Run does the work.
type Holder struct {
	cfg HolderConfig
	log *slog.Logger
	cur atomic.Pointer[Snapshot]
	// counters keeps the in-flight counters from one snapshot to the next.
	counters *Counters

	// refresh asks the run loop for a rebuild. Size 1: a request made while
	// one is pending is dropped, since the pending rebuild will read the
	// newer state too. This coalesces bursts: one rebuild in flight and at
	// most one more queued behind it.
	refresh chan struct{}
	// check asks the run loop to compare the store's configuration version
	// with the snapshot's (sent by the LISTEN connection). Size 1, dropped
	// when full, for the same reason.
	check chan struct{}

	running   atomic.Bool
	listening atomic.Bool

	mu       sync.Mutex // guards the fields below; never taken on the hot path
	rebuilds int64
	// startSeq numbers rebuilds as they start; doneSeq is the number of the
	// last one put in service. Sync waits on them.
	startSeq, doneSeq int64
	failures          int64
	lastErr           string
	lastErrAt         time.Time
	lastLogged        time.Time
	suppressed        int
	failing           bool
}

// HolderStats describe a Holder for /healthz.
type HolderStats struct {
	Ready bool `json:"ready"`
	// Version and BuiltAt describe the snapshot in service.
	Version int64      `json:"version"`
	BuiltAt *time.Time `json:"built_at"`
	// LastError is the latest failure to check or rebuild, cleared by the
	// next success; LastErrorAt is when it happened.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	// Rebuilds counts successful builds, the first included; Failures
	// counts failed version checks and builds (LISTEN connection failures
	// show as Listening false and are logged).
	Rebuilds int64 `json:"rebuilds"`
	Failures int64 `json:"failures"`
	// Listening reports that a PostgreSQL LISTEN connection is up.
	Listening bool `json:"listening"`
}

// NewHolder returns a Holder; Run must be called for it to load anything.
func NewHolder(cfg HolderConfig) *Holder {
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Holder{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "snapshot"),
		refresh:  make(chan struct{}, 1),
		check:    make(chan struct{}, 1),
		counters: NewCounters(),
	}
}

// Counters returns the in-flight counters of the snapshots the Holder
// builds, for tests and diagnostics.
func (h *Holder) Counters() *Counters { return h.counters }

// Load returns the snapshot in service, or nil before the first successful
// build. It is one atomic load.
func (h *Holder) Load() *Snapshot { return h.cur.Load() }

// Sync asks for a rebuild and waits until a snapshot whose build started
// after the call is in service, or ctx ends. The in-process admin calls it
// after each write, so that what an admin request just wrote (a playground
// token, a key) is served by the next inference request: read-your-writes
// within one process. Other processes learn of it within 2 s. A holder
// that is not running returns at once: its first build, when Run starts,
// reads everything committed before it (cmd/sluice bootstraps the store
// before the holder runs).
func (h *Holder) Sync(ctx context.Context) error {
	if !h.running.Load() {
		return nil
	}
	h.mu.Lock()
	after := h.startSeq
	h.mu.Unlock()
	h.Refresh()
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		h.mu.Lock()
		done := h.doneSeq > after
		h.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Ready reports whether a snapshot is in service.
func (h *Holder) Ready() bool { return h.cur.Load() != nil }

// Refresh asks for a rebuild now and returns at once. The in-process admin
// calls it after each configuration write.
func (h *Holder) Refresh() { signal(h.refresh) }

// signal sends on a channel of size 1 without blocking; a full channel
// already holds the same request.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Stats returns the holder's state.
func (h *Holder) Stats() HolderStats {
	st := HolderStats{Listening: h.listening.Load()}
	if s := h.cur.Load(); s != nil {
		st.Ready, st.Version = true, s.Version
		at := s.BuiltAt
		st.BuiltAt = &at
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	st.Rebuilds, st.Failures, st.LastError = h.rebuilds, h.failures, h.lastErr
	if h.lastErr != "" {
		at := h.lastErrAt
		st.LastErrorAt = &at
	}
	return st
}

// Run builds the first snapshot, retrying with backoff, then keeps it fresh
// until ctx ends: every Poll it reads the configuration version and
// rebuilds when it changed; it rebuilds at once on Refresh; with PostgreSQL
// it also listens on store.NotifyChannel and checks at once on each
// notification. While the store is unreachable the last snapshot stays in
// service, the error is logged (rate-limited) and Run keeps trying. Run
// returns nil when ctx ends; it returns an error only for a configuration
// it cannot run with.
func (h *Holder) Run(ctx context.Context) error {
	if h.cfg.Store == nil || h.cfg.Box == nil {
		return errors.New("snapshot: a store and a box are required")
	}
	if !h.running.CompareAndSwap(false, true) {
		return errors.New("snapshot: the holder is already running")
	}
	defer h.running.Store(false)
	if !h.buildFirst(ctx) {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if h.cfg.Store.Postgres() {
		wg.Go(func() { h.listen(ctx) })
	}
	h.watch(ctx)
	return nil
}

// buildFirst builds until a snapshot is in service or ctx ends, and reports
// which. A Refresh cuts a backoff short.
func (h *Holder) buildFirst(ctx context.Context) bool {
	delay := minBackoff
	for {
		if h.rebuild(ctx) == nil {
			return true
		}
		if !sleep(ctx, jitter(delay), h.refresh) {
			return false
		}
		delay = min(delay*2, maxBackoff)
	}
}

// watch runs the loop that owns every rebuild after the first, so that no
// two rebuilds ever run at once.
func (h *Holder) watch(ctx context.Context) {
	tick := time.NewTicker(h.cfg.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.refresh:
			_ = h.rebuild(ctx) // recorded and logged by rebuild
		case <-tick.C:
			h.checkVersion(ctx)
		case <-h.check:
			h.checkVersion(ctx)
		}
	}
}

// checkVersion rebuilds when the store's configuration version differs
// from the snapshot's. Different, not greater: a store restored from a
// backup goes back in version and must still be picked up.
func (h *Holder) checkVersion(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	v, err := h.cfg.Store.ConfigVersion(cctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			h.fail("read configuration version", err)
		}
		return
	}
	if s := h.cur.Load(); s != nil && s.Version == v {
		h.recovered()
		return
	}
	_ = h.rebuild(ctx) // recorded and logged by rebuild
}

// rebuild builds a snapshot and puts it in service. On failure the
// snapshot in service stays.
func (h *Holder) rebuild(ctx context.Context) error {
	h.mu.Lock()
	h.startSeq++
	seq := h.startSeq
	h.mu.Unlock()
	if err := h.checkSize(ctx); err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	s, err := BuildWith(bctx, h.cfg.Store, h.cfg.Box, h.cfg.Now(), h.counters)
	if err != nil {
		if ctx.Err() == nil {
			h.fail("build configuration snapshot", err)
		}
		return err
	}
	for _, k := range s.Unopened() {
		h.log.ErrorContext(ctx, "provider key does not open; left out of the snapshot",
			"key_id", k.ID, "gateway_id", k.GatewayID, "provider", k.Provider, "alias", k.Alias, "err", k.Err)
	}
	prev := h.cur.Swap(s)
	h.mu.Lock()
	h.rebuilds++
	h.doneSeq = max(h.doneSeq, seq)
	h.mu.Unlock()
	h.recovered()
	if prev == nil {
		h.log.Info("configuration snapshot loaded", "version", s.Version, "counts", s.Counts())
	} else {
		h.log.Debug("configuration snapshot rebuilt", "version", s.Version, "previous", prev.Version)
	}
	return nil
}

// checkSize refuses a configuration larger than MaxRows before it is
// built (CheckSize); the failure is recorded and logged like a failed
// build.
func (h *Holder) checkSize(ctx context.Context) error {
	maxRows := h.cfg.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	cctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	err := CheckSize(cctx, h.cfg.Store, maxRows)
	if err != nil && ctx.Err() == nil {
		h.fail("check configuration size", err)
	}
	return err
}

// fail records a failure and logs it, at most once per errLogEvery.
func (h *Holder) fail(what string, err error) {
	now := h.cfg.Now()
	h.mu.Lock()
	h.failures++
	h.lastErr, h.lastErrAt, h.failing = what+": "+err.Error(), now, true
	logNow := h.lastLogged.IsZero() || now.Sub(h.lastLogged) >= errLogEvery
	suppressed := h.suppressed
	if logNow {
		h.lastLogged, h.suppressed = now, 0
	} else {
		h.suppressed++
	}
	h.mu.Unlock()
	if !logNow {
		return
	}
	// Either the store does not answer or what it holds cannot be loaded
	// (refused as too large, a row that does not decode): the error says
	// which. Both keep the last good snapshot in service.
	attrs := []any{"op", what, "err", err, "suppressed_since_last_log", suppressed}
	if s := h.cur.Load(); s != nil {
		h.log.Error("configuration not loaded; serving the last good snapshot", append(attrs, "version", s.Version)...)
	} else {
		h.log.Error("configuration not loaded; no snapshot loaded yet", attrs...)
	}
}

// recovered clears the failure state after a success and says so once.
func (h *Holder) recovered() {
	h.mu.Lock()
	was := h.failing
	h.failing, h.lastErr, h.lastLogged, h.suppressed = false, "", time.Time{}, 0
	h.mu.Unlock()
	if was {
		h.log.Info("configuration loads again")
	}
}

// sleep waits for d, ctx's end or a signal on wake, and reports whether ctx
// is still live.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return ctx.Err() == nil
}

// jitter spreads d over [d/2, d), so that proxies restarted together do not
// retry in step.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}
