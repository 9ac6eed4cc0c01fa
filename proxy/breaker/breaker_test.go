package breaker

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock is a fake time source safe for concurrent reads.
type clock struct{ ns atomic.Int64 }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newClock() *clock { c := &clock{}; c.ns.Store(epoch.UnixNano()); return c }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func ptr(t time.Time) *time.Time         { return &t }
func newBreaker(st Settings) (*Breaker, *clock) {
	c := newClock()
	return NewSet(c.now).Get("gw_1", "key_1", st), c
}

func fail(b *Breaker, n int) {
	for range n {
		b.Failure(false)
	}
}

func TestOpensAtThreshold(t *testing.T) {
	for _, threshold := range []int{1, 2, 5} {
		t.Run("", func(t *testing.T) {
			b, c := newBreaker(Settings{FailureThreshold: threshold, Cooldown: 30 * time.Second})
			for i := 1; i < threshold; i++ {
				b.Failure(false)
				if ok, probe := b.Allow(); !ok || probe {
					t.Fatalf("after %d of %d failures: Allow() = %v, %v; want true, false", i, threshold, ok, probe)
				}
			}
			b.Failure(false)
			if ok, _ := b.Allow(); ok {
				t.Fatalf("after %d failures: Allow() = true; want false", threshold)
			}
			want := Status{State: Open, ConsecutiveFailures: threshold, OpenedAt: ptr(c.now()), NextProbeAt: ptr(c.now().Add(30 * time.Second))}
			if diff := cmp.Diff(want, b.Snapshot()); diff != "" {
				t.Errorf("Snapshot() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuccessResetsConsecutiveFailures(t *testing.T) {
	b, _ := newBreaker(Settings{FailureThreshold: 3, Cooldown: time.Second})
	fail(b, 2)
	b.Success(false)
	fail(b, 2)
	if got := b.Snapshot(); got.State != Closed || got.ConsecutiveFailures != 2 {
		t.Fatalf("Snapshot() = %+v; want closed with 2 failures", got)
	}
	b.Failure(false)
	if got := b.Snapshot().State; got != Open {
		t.Fatalf("state after 3 consecutive failures = %s; want open", got)
	}
}

func TestDisabled(t *testing.T) {
	b, _ := newBreaker(Settings{FailureThreshold: 0, Cooldown: time.Second})
	fail(b, 1000)
	if ok, probe := b.Allow(); !ok || probe {
		t.Fatalf("Allow() = %v, %v; want true, false for a disabled breaker", ok, probe)
	}
}

func TestOpenUntilCooldown(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: 30 * time.Second})
	b.Failure(false)
	c.advance(30*time.Second - time.Nanosecond)
	if ok, _ := b.Allow(); ok {
		t.Fatal("Allow() before the cooldown = true; want false")
	}
	c.advance(time.Nanosecond)
	if ok, probe := b.Allow(); !ok || !probe {
		t.Fatalf("Allow() at the deadline = %v, %v; want true, true", ok, probe)
	}
	if got := b.Snapshot().State; got != HalfOpen {
		t.Fatalf("state = %s; want half_open", got)
	}
}

func TestHalfOpenAdmitsOneProbe(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: time.Second})
	b.Failure(false)
	c.advance(time.Second)

	var admitted, probes atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			ok, probe := b.Allow()
			if ok {
				admitted.Add(1)
			}
			if probe {
				probes.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if admitted.Load() != 1 || probes.Load() != 1 {
		t.Fatalf("admitted %d, probes %d; want exactly 1 of each", admitted.Load(), probes.Load())
	}
}

func TestProbeFailureDoublesCooldown(t *testing.T) {
	tests := []struct {
		base time.Duration
		want []time.Duration // cooldown after the first opening, then after each failed probe
	}{
		{30 * time.Second, []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}},
		{3 * time.Minute, []time.Duration{3 * time.Minute, 6 * time.Minute, 10 * time.Minute, 10 * time.Minute}},
		{time.Hour, []time.Duration{10 * time.Minute, 10 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.base.String(), func(t *testing.T) {
			b, c := newBreaker(Settings{FailureThreshold: 2, Cooldown: tt.base})
			fail(b, 2)
			var got []time.Duration
			for i := range tt.want {
				s := b.Snapshot()
				got = append(got, s.NextProbeAt.Sub(c.now()))
				if i == len(tt.want)-1 {
					break
				}
				c.set(*s.NextProbeAt)
				if ok, probe := b.Allow(); !ok || !probe {
					t.Fatalf("Allow() at next_probe_at = %v, %v; want a probe", ok, probe)
				}
				b.Failure(true)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cooldowns mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeSuccessClosesAndResets(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: 10 * time.Second})
	b.Failure(false)
	for range 3 { // cooldown 10 s → 20 s → 40 s → 80 s
		c.set(*b.Snapshot().NextProbeAt)
		b.Allow()
		b.Failure(true)
	}
	c.set(*b.Snapshot().NextProbeAt)
	if _, probe := b.Allow(); !probe {
		t.Fatal("Allow() gave no probe")
	}
	b.Success(true)
	if diff := cmp.Diff(Status{State: Closed}, b.Snapshot()); diff != "" {
		t.Fatalf("Snapshot() after probe success (-want +got):\n%s", diff)
	}
	if ok, probe := b.Allow(); !ok || probe {
		t.Fatalf("Allow() after close = %v, %v; want true, false", ok, probe)
	}
	b.Failure(false)
	if got := b.Snapshot().NextProbeAt.Sub(c.now()); got != 10*time.Second {
		t.Fatalf("cooldown after reopening = %v; want the base 10s", got)
	}
}

func TestReleaseFreesProbe(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: time.Second})
	b.Failure(false)
	c.advance(time.Second)
	if _, probe := b.Allow(); !probe {
		t.Fatal("first Allow() gave no probe")
	}
	if ok, _ := b.Allow(); ok {
		t.Fatal("second Allow() while the probe is in flight = true")
	}
	b.Release(false) // a straggler's release must not free the probe slot
	if ok, _ := b.Allow(); ok {
		t.Fatal("Allow() after a non-probe Release = true")
	}
	b.Release(true)
	if ok, probe := b.Allow(); !ok || !probe {
		t.Fatalf("Allow() after Release(true) = %v, %v; want true, true", ok, probe)
	}
	if got := b.Snapshot().State; got != HalfOpen {
		t.Fatalf("state = %s; want half_open", got)
	}
}

// A re-failure while open — an attempt admitted before the breaker opened, failing after it —
// extends the cooldown from that failure on, and never shortens it (LiteLLM #40130 kept the first,
// shorter deadline). Stragglers decide nothing else: a success does not close, a failure does
// not double.
func TestRefailureWhileOpenExtendsCooldown(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: 30 * time.Second})
	b.Failure(false) // open until t0+30 s
	opened := c.now()
	c.advance(10 * time.Second)
	b.Failure(false)
	want := Status{State: Open, ConsecutiveFailures: 2, OpenedAt: ptr(opened), NextProbeAt: ptr(c.now().Add(30 * time.Second))}
	if diff := cmp.Diff(want, b.Snapshot()); diff != "" {
		t.Fatalf("after a re-failure 10 s into the cooldown (-want +got):\n%s", diff)
	}
	// A shorter cooldown configured meanwhile never moves the deadline earlier.
	b.apply(Settings{FailureThreshold: 1, Cooldown: 5 * time.Second})
	c.advance(time.Second)
	b.Failure(false)
	if got := *b.Snapshot().NextProbeAt; !got.Equal(*want.NextProbeAt) {
		t.Fatalf("next_probe_at after a re-failure with a shorter cooldown = %v; want %v kept", got, *want.NextProbeAt)
	}
	// After a failed probe the cooldown in force is the doubled one: a re-failure extends by it.
	b.apply(Settings{FailureThreshold: 1, Cooldown: 30 * time.Second})
	c.set(*b.Snapshot().NextProbeAt)
	if _, probe := b.Allow(); !probe {
		t.Fatal("Allow() at the deadline gave no probe")
	}
	b.Failure(true) // open for 60 s
	c.advance(7 * time.Second)
	b.Failure(false)
	if got := b.Snapshot().NextProbeAt.Sub(c.now()); got != time.Minute {
		t.Fatalf("re-failure after a failed probe: next probe in %v; want 1m", got)
	}
}

// Stragglers — attempts admitted before the breaker opened — decide nothing: a success neither
// closes an open breaker nor ends a half-open one, and a failure while half-open neither reopens
// it nor frees the probe slot.
func TestStragglersDoNotShortenOrDecide(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: 30 * time.Second})
	b.Failure(false)
	c.advance(30 * time.Second)
	b.Allow()
	b.Failure(true) // open for 60 s
	deadline := *b.Snapshot().NextProbeAt

	c.advance(time.Second)
	b.Success(false)
	if got := *b.Snapshot().NextProbeAt; !got.Equal(deadline) {
		t.Fatalf("next_probe_at after a straggler success = %v; want %v", got, deadline)
	}
	if got := b.Snapshot().State; got != Open {
		t.Fatalf("state after a straggler success = %s; want open", got)
	}
	c.set(deadline.Add(-time.Nanosecond))
	if ok, _ := b.Allow(); ok {
		t.Fatal("Allow() before the deadline = true")
	}

	c.set(deadline)
	if _, probe := b.Allow(); !probe {
		t.Fatal("Allow() at the deadline gave no probe")
	}
	b.Failure(false) // straggler while half-open: neither reopens nor frees the probe slot
	b.Success(false)
	if got := b.Snapshot().State; got != HalfOpen {
		t.Fatalf("state = %s; want half_open", got)
	}
	if ok, _ := b.Allow(); ok {
		t.Fatal("Allow() while the probe is in flight = true")
	}
}

func TestSettingsChangeApplies(t *testing.T) {
	c := newClock()
	s := NewSet(c.now)
	b := s.Get("gw", "k", Settings{FailureThreshold: 5, Cooldown: 30 * time.Second})
	fail(b, 2)
	if s.Get("gw", "k", Settings{FailureThreshold: 3, Cooldown: 5 * time.Second}) != b {
		t.Fatal("Get returned a different breaker for the same key")
	}
	b.Failure(false)
	want := Status{State: Open, ConsecutiveFailures: 3, OpenedAt: ptr(c.now()), NextProbeAt: ptr(c.now().Add(5 * time.Second))}
	if diff := cmp.Diff(want, b.Snapshot()); diff != "" {
		t.Fatalf("Snapshot() after lowering the threshold (-want +got):\n%s", diff)
	}

	// A longer cooldown applies from the next opening on.
	s.Get("gw", "k", Settings{FailureThreshold: 3, Cooldown: time.Minute})
	c.advance(5 * time.Second)
	b.Allow()
	b.Failure(true)
	if got := b.Snapshot().NextProbeAt.Sub(c.now()); got != 2*time.Minute {
		t.Fatalf("cooldown after a failed probe = %v; want 2m (new base doubled)", got)
	}
}

func TestProbeLease(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 1, Cooldown: time.Second})
	b.Failure(false)
	c.advance(time.Second)
	b.Allow() // a probe whose report gets lost
	c.advance(probeLease - time.Nanosecond)
	if ok, _ := b.Allow(); ok {
		t.Fatal("Allow() within the probe lease = true")
	}
	c.advance(time.Nanosecond)
	if ok, probe := b.Allow(); !ok || !probe {
		t.Fatalf("Allow() after the probe lease = %v, %v; want a new probe", ok, probe)
	}
}

func TestStatusesAndForget(t *testing.T) {
	c := newClock()
	s := NewSet(c.now)
	st := Settings{FailureThreshold: 1, Cooldown: time.Minute}
	s.Get("gw_a", "k1", st).Failure(false)
	s.Get("gw_a", "k2", st)
	s.Get("gw_b", "k1", st)

	want := map[string]Status{
		"k1": {State: Open, ConsecutiveFailures: 1, OpenedAt: ptr(c.now()), NextProbeAt: ptr(c.now().Add(time.Minute))},
		"k2": {State: Closed},
	}
	if diff := cmp.Diff(want, s.Statuses("gw_a")); diff != "" {
		t.Errorf("Statuses(gw_a) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]Status{"k1": {State: Closed}}, s.Statuses("gw_b")); diff != "" {
		t.Errorf("Statuses(gw_b) mismatch (-want +got):\n%s", diff)
	}
	s.Forget("gw_a")
	if got := s.Statuses("gw_a"); len(got) != 0 {
		t.Errorf("Statuses after Forget = %v; want empty", got)
	}
	if got := s.Get("gw_a", "k1", st).Snapshot().State; got != Closed {
		t.Errorf("a forgotten gateway's breaker came back %s; want a fresh closed one", got)
	}
	if got := len(s.Statuses("gw_b")); got != 1 {
		t.Errorf("Forget(gw_a) touched gw_b: %d breakers left; want 1", got)
	}
}

// TestConcurrentUse exercises every method at once for the race detector and checks that the
// breaker ends in a consistent state.
func TestConcurrentUse(t *testing.T) {
	c := newClock()
	s := NewSet(c.now)
	st := Settings{FailureThreshold: 3, Cooldown: time.Millisecond}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				b := s.Get("gw", "k", st)
				ok, probe := b.Allow()
				if !ok {
					c.advance(time.Millisecond)
					continue
				}
				switch (g + i) % 3 {
				case 0:
					b.Success(probe)
				case 1:
					b.Failure(probe)
				default:
					b.Release(probe)
				}
				if i%100 == 0 {
					s.Statuses("gw")
				}
			}
		})
	}
	wg.Wait()
	got := s.Get("gw", "k", st).Snapshot()
	if got.State == Closed && (got.OpenedAt != nil || got.NextProbeAt != nil) {
		t.Fatalf("closed breaker carries open times: %+v", got)
	}
}

func BenchmarkAllowSuccess(b *testing.B) {
	s := NewSet(time.Now)
	br := s.Get("gw", "k", Settings{FailureThreshold: 5, Cooldown: 30 * time.Second})
	b.ReportAllocs()
	for b.Loop() {
		_, probe := br.Allow()
		br.Success(probe)
	}
}

func BenchmarkAllowSuccessParallel(b *testing.B) {
	s := NewSet(time.Now)
	br := s.Get("gw", "k", Settings{FailureThreshold: 5, Cooldown: 30 * time.Second})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, probe := br.Allow()
			br.Success(probe)
		}
	})
}

// BenchmarkGetAllowSuccess is one attempt's full breaker cost: lookup, admit, verdict.
func BenchmarkGetAllowSuccess(b *testing.B) {
	s := NewSet(time.Now)
	st := Settings{FailureThreshold: 5, Cooldown: 30 * time.Second}
	gw, key := "gw_01JABCDEFGHJKMNPQRSTVWXYZ0", "key_01JABCDEFGHJKMNPQRSTVWXYZ"
	s.Get(gw, key, st)
	b.ReportAllocs()
	for b.Loop() {
		br := s.Get(gw, key, st)
		_, probe := br.Allow()
		br.Success(probe)
	}
}

func BenchmarkAllowOpen(b *testing.B) {
	s := NewSet(time.Now)
	br := s.Get("gw", "k", Settings{FailureThreshold: 1, Cooldown: time.Hour})
	br.Failure(false)
	b.ReportAllocs()
	for b.Loop() {
		br.Allow()
	}
}

// TestLastError: a breaker keeps the last failure's reason and when it came
// (FailureWith, or Note for a refused key, which counts no failure), also
// once it has closed again; Failure without a reason keeps the last one.
func TestLastError(t *testing.T) {
	b, c := newBreaker(Settings{FailureThreshold: 2, Cooldown: time.Second})
	if st := b.Snapshot(); st.LastError != "" || st.LastErrorAt != nil {
		t.Fatalf("new breaker: last error %q at %v, want none", st.LastError, st.LastErrorAt)
	}
	b.FailureWith(false, "upstream answered 503: overloaded")
	at := c.now()
	c.advance(time.Second)
	b.Failure(false)
	st := b.Snapshot()
	want := Status{State: Open, ConsecutiveFailures: 2, OpenedAt: ptr(c.now()), NextProbeAt: ptr(c.now().Add(time.Second)),
		LastError: "upstream answered 503: overloaded", LastErrorAt: ptr(at)}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("open breaker (-want +got):\n%s", d)
	}
	c.advance(time.Second)
	if ok, probe := b.Allow(); !ok || !probe {
		t.Fatal("no probe after the cooldown")
	}
	b.Success(true)
	b.Note("upstream answered 401: invalid key")
	st = b.Snapshot()
	if st.State != Closed || st.ConsecutiveFailures != 0 || st.LastError != "upstream answered 401: invalid key" || !st.LastErrorAt.Equal(c.now()) {
		t.Errorf("closed breaker after a refused key: %+v", st)
	}
}
