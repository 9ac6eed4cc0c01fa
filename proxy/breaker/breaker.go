// Package breaker keeps one circuit breaker per gateway × provider key, and one retry budget
// per gateway × provider (retrybudget.go).
//
// A breaker counts consecutive retryable failures of a key. At the configured threshold it opens
// for a cooldown; a failure reported while it is open (an attempt that was already in flight)
// extends the cooldown from that failure on. When the cooldown has passed it becomes half-open
// and admits exactly one probe request at a time. A probe success closes it again; a probe
// failure reopens it with twice the previous cooldown, capped at MaxCooldown.
//
// Breakers live on the proxy hot path. Lookups go through sync.Map (no global lock), and the
// common case — a closed breaker and a successful attempt — reads two atomics and takes no lock.
// State changes take the breaker's own mutex, which only requests for the same key share.
package breaker

import (
	"sync"
	"sync/atomic"
	"time"
)

// MaxCooldown caps the cooldown, however often probes fail in a row.
const MaxCooldown = 10 * time.Minute

// probeLease bounds how long an unreported probe blocks further probes. Every caller must
// report a probe through Success, Failure or Release; the lease only keeps a lost report (a bug)
// from pinning a key in half-open forever. It is the longest cooldown, so a slow but live probe
// is never overtaken in practice.
const probeLease = MaxCooldown

// Settings configure a breaker; they come from the gateway's store.BreakerSettings.
type Settings struct {
	// FailureThreshold is the number of consecutive retryable failures that opens the breaker.
	// Zero or less disables the breaker: it never opens.
	FailureThreshold int
	// Cooldown is how long the breaker stays open before the first probe. It doubles with each
	// failed probe and is capped at MaxCooldown.
	Cooldown time.Duration
}

// State is the state of a breaker, as shown by the admin API.
type State string

// The states of a breaker.
const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half_open"
)

// Internal state codes, kept in an atomic so that Allow on a closed breaker takes no lock.
const (
	stClosed uint32 = iota
	stOpen
	stHalfOpen
)

var stateNames = [...]State{stClosed: Closed, stOpen: Open, stHalfOpen: HalfOpen}

// Status is a point-in-time view of one breaker.
type Status struct {
	State               State
	ConsecutiveFailures int
	// OpenedAt is when the breaker last opened; nil while closed.
	OpenedAt *time.Time
	// NextProbeAt is when the breaker admits (or admitted) its next probe; nil while closed.
	NextProbeAt *time.Time
	// LastError is the last retryable failure reported (FailureWith), "" when none was;
	// LastErrorAt is when it was reported. They stay after the breaker closes: the key
	// list shows what went wrong last.
	LastError   string
	LastErrorAt *time.Time
}

// Set holds all breakers of the process, keyed by gateway and then by provider key, and the
// retry budgets, keyed by gateway and then by provider.
type Set struct {
	now      func() time.Time
	gateways sync.Map // gatewayID → *gatewayBreakers
}

// gatewayBreakers are the breakers and retry budgets of one gateway, so that Forget and Statuses
// touch only it.
type gatewayBreakers struct {
	keys    sync.Map // keyID → *Breaker
	budgets sync.Map // provider → *RetryBudget
}

// NewSet returns an empty set whose breakers read time from now (time.Now in production; a fake
// clock in tests).
func NewSet(now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	return &Set{now: now}
}

// Get returns the breaker of keyID in gatewayID, creating it on first use. st is the gateway's
// current configuration: a changed threshold applies to the next failure, a changed cooldown to
// the next time the breaker opens (a running cooldown keeps its deadline).
func (s *Set) Get(gatewayID, keyID string, st Settings) *Breaker {
	g, ok := s.gateways.Load(gatewayID)
	if !ok {
		g, _ = s.gateways.LoadOrStore(gatewayID, &gatewayBreakers{})
	}
	gb := g.(*gatewayBreakers)
	b, ok := gb.keys.Load(keyID)
	if !ok {
		b, _ = gb.keys.LoadOrStore(keyID, &Breaker{now: s.now})
	}
	br := b.(*Breaker)
	br.apply(st)
	return br
}

// Statuses returns the status of every breaker of gatewayID, keyed by provider key id.
func (s *Set) Statuses(gatewayID string) map[string]Status {
	out := map[string]Status{}
	g, ok := s.gateways.Load(gatewayID)
	if !ok {
		return out
	}
	g.(*gatewayBreakers).keys.Range(func(k, b any) bool {
		out[k.(string)] = b.(*Breaker).Snapshot()
		return true
	})
	return out
}

// Forget drops the breakers and retry budgets of a deleted gateway.
func (s *Set) Forget(gatewayID string) {
	s.gateways.Delete(gatewayID)
}

// Breaker is the circuit breaker of one provider key of one gateway. It is safe for concurrent
// use. Every admitted attempt must end in exactly one of Success, Failure or Release, passing the
// probe flag that Allow returned.
type Breaker struct {
	now func() time.Time

	// Settings, updated by Set.Get without taking mu and read under mu.
	threshold atomic.Int64
	cooldown  atomic.Int64 // time.Duration

	// state and failures mirror the fields below for lock-free fast paths; written under mu.
	state    atomic.Uint32
	failures atomic.Int64

	mu          sync.Mutex
	doublings   int       // failed probes since the breaker last closed
	openedAt    time.Time // last transition to open
	nextProbeAt time.Time // open until then
	probing     bool      // a probe is in flight (half-open only)
	probeSince  time.Time // when the probe in flight was admitted
	lastError   string    // the last failure reported by FailureWith
	lastErrorAt time.Time
}

func (b *Breaker) apply(st Settings) {
	if int64(st.FailureThreshold) != b.threshold.Load() {
		b.threshold.Store(int64(st.FailureThreshold))
	}
	if int64(st.Cooldown) != b.cooldown.Load() {
		b.cooldown.Store(int64(st.Cooldown))
	}
}

// Allow reports whether an attempt may use the key, and whether that attempt is the probe of a
// half-open breaker. Closed: (true, false). Open before its deadline: (false, false). Once the
// deadline has passed the breaker turns half-open and exactly one caller gets (true, true);
// everyone else gets (false, false) until that probe reports.
func (b *Breaker) Allow() (ok, probe bool) {
	if b.state.Load() == stClosed {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	switch b.state.Load() {
	case stClosed:
		return true, false
	case stOpen:
		if now.Before(b.nextProbeAt) {
			return false, false
		}
		b.state.Store(stHalfOpen)
	case stHalfOpen:
		if b.probing && now.Sub(b.probeSince) < probeLease {
			return false, false
		}
	}
	b.probing, b.probeSince = true, now
	return true, true
}

// Success reports a successful attempt. On a closed breaker it resets the consecutive failures;
// a probe success closes the breaker and resets the cooldown to the configured base. A
// non-probe success while open or half-open comes from an attempt admitted before the breaker
// opened and changes nothing.
func (b *Breaker) Success(probe bool) {
	if !probe && b.state.Load() == stClosed && b.failures.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state.Load() {
	case stClosed:
		b.failures.Store(0)
	case stHalfOpen:
		if probe {
			b.failures.Store(0)
			b.doublings = 0
			b.probing = false
			b.openedAt, b.nextProbeAt = time.Time{}, time.Time{}
			b.state.Store(stClosed)
		}
	}
}

// Failure reports a retryable failure. Closed: the failure is counted and the breaker opens for
// the base cooldown when the count reaches the threshold. A probe failure reopens the breaker
// with twice the previous cooldown, capped at MaxCooldown. A non-probe failure while open (an
// attempt admitted before the breaker opened, failing after it) is fresh evidence that the key
// still fails: it extends the deadline to the cooldown in force counted from now, and never
// moves it earlier (LiteLLM #40130 kept the first, shorter deadline). A non-probe failure while
// half-open is counted and leaves the verdict to the probe.
func (b *Breaker) Failure(probe bool) {
	b.FailureWith(probe, "")
}

// FailureWith is Failure that also records why the attempt failed (shown as the key's last
// error); an empty reason keeps the last one. The reason must hold no secret.
func (b *Breaker) FailureWith(probe bool, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if reason != "" {
		b.lastError, b.lastErrorAt = reason, b.now()
	}
	n := b.failures.Add(1)
	switch b.state.Load() {
	case stClosed:
		if t := b.threshold.Load(); t > 0 && n >= t {
			b.open(0)
		}
	case stOpen:
		if next := b.now().Add(cooldown(time.Duration(b.cooldown.Load()), b.doublings)); next.After(b.nextProbeAt) {
			b.nextProbeAt = next
		}
	case stHalfOpen:
		if probe {
			b.probing = false
			b.open(b.doublings + 1)
		}
	}
}

// Note records reason as the last error without counting a failure: an upstream that refused
// the key (401, 403) is not a retryable failure, yet it is what the key's health should show.
func (b *Breaker) Note(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastError, b.lastErrorAt = reason, b.now()
}

// Release ends an attempt without a verdict (the client went away, a non-retryable 4xx). A
// probe's slot is freed so that the next caller probes; a non-probe release changes nothing.
func (b *Breaker) Release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state.Load() == stHalfOpen {
		b.probing = false
	}
}

// open moves the breaker to open with the base cooldown doubled d times. Called with mu held.
func (b *Breaker) open(d int) {
	now := b.now()
	b.doublings = d
	next := now.Add(cooldown(time.Duration(b.cooldown.Load()), d))
	if next.After(b.nextProbeAt) {
		b.nextProbeAt = next
	}
	b.openedAt = now
	b.state.Store(stOpen)
}

// cooldown returns base·2^d, capped at MaxCooldown.
func cooldown(base time.Duration, d int) time.Duration {
	if base <= 0 {
		return 0
	}
	if base >= MaxCooldown {
		return MaxCooldown
	}
	for ; d > 0; d-- {
		base *= 2
		if base >= MaxCooldown {
			return MaxCooldown
		}
	}
	return base
}

// Snapshot returns the breaker's current status.
func (b *Breaker) Snapshot() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Status{
		State:               stateNames[b.state.Load()],
		ConsecutiveFailures: int(b.failures.Load()),
	}
	if st.State != Closed {
		opened, next := b.openedAt, b.nextProbeAt
		st.OpenedAt, st.NextProbeAt = &opened, &next
	}
	if b.lastError != "" {
		at := b.lastErrorAt
		st.LastError, st.LastErrorAt = b.lastError, &at
	}
	return st
}
