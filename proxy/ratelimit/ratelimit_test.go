package ratelimit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/sluicehq/sluice/internal/testenv"
)

// base is an injected clock's origin, on a second boundary.
var base = time.Unix(1_800_000_000, 0)

// impls returns the implementations under test: Local always, Redis when
// the test Redis is configured (each with a fresh key prefix).
func impls(t *testing.T) map[string]func(t *testing.T) Limiter {
	return map[string]func(t *testing.T) Limiter{
		"local": func(*testing.T) Limiter { return NewLocal() },
		"redis": func(t *testing.T) Limiter { return newRedis(t, 1) },
	}
}

func newRedis(t *testing.T, replicas int) *Redis {
	t.Helper()
	c, prefix := testenv.Redis(t)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: prefix, Timeout: 5 * time.Second,
		FallbackReplicas: replicas, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n := r.Fallbacks(); n != 0 {
			t.Errorf("%d calls fell back: the test Redis must answer every call", n)
		}
	})
	return r
}

func allow(t *testing.T, l Limiter, key string, limit, cost int, now time.Time) Decision {
	t.Helper()
	d, err := l.Allow(context.Background(), key, limit, cost, now)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return d
}

// TestExactCount: N allowed of M calls in one window, remaining counting
// down, and the refusals' RetryAfter pointing at the end of the window.
func TestExactCount(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			now := base.Add(250 * time.Millisecond)
			var got []Decision
			for range 13 {
				got = append(got, allow(t, l, "gw:1:rpm", 10, 1, now))
			}
			var want []Decision
			for i := range 10 {
				want = append(want, Decision{Allowed: true, Remaining: 9 - i, ResetAfter: 59750 * time.Millisecond})
			}
			for range 3 {
				want = append(want, Decision{Remaining: 0, ResetAfter: 59750 * time.Millisecond, RetryAfter: 59750 * time.Millisecond})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			// Another key is counted apart.
			if d := allow(t, l, "gw:2:rpm", 10, 1, now); !d.Allowed || d.Remaining != 9 {
				t.Errorf("other key: %+v", d)
			}
		})
	}
}

// TestSliding: counts leave the window one second at a time, 60 s after
// the second they were made in.
func TestSliding(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
			count := func(s float64, n int) int {
				ok := 0
				for range n {
					if allow(t, l, "k", 10, 1, at(s)).Allowed {
						ok++
					}
				}
				return ok
			}
			if got := count(0, 4); got != 4 {
				t.Fatalf("t=0: %d allowed, want 4", got)
			}
			if got := count(10.5, 3); got != 3 {
				t.Fatalf("t=10.5: %d allowed, want 3", got)
			}
			if got := count(30, 5); got != 3 {
				t.Fatalf("t=30: %d allowed, want 3 (limit 10)", got)
			}
			d := allow(t, l, "k", 10, 1, at(31))
			want := Decision{Remaining: 0, ResetAfter: 59 * time.Second, RetryAfter: 29 * time.Second}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("t=31 (-want +got):\n%s", diff)
			}
			if got := count(59.999, 1); got != 0 {
				t.Errorf("t=59.999: %d allowed, want 0 (second 0 still in the window)", got)
			}
			if got := count(60, 5); got != 4 {
				t.Errorf("t=60: %d allowed, want 4 (second 0 left the window)", got)
			}
			if got := count(70, 5); got != 3 {
				t.Errorf("t=70: %d allowed, want 3 (second 10 left the window)", got)
			}
			if got := count(200, 12); got != 10 {
				t.Errorf("t=200: %d allowed, want 10 (window empty)", got)
			}
		})
	}
}

// TestTokens: a cost-0 check refuses once the window reached the limit;
// Add counts unconditionally; a cost above the limit waits a whole window.
func TestTokens(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			ctx := context.Background()
			if d := allow(t, l, "tpm", 100, 0, base); !d.Allowed || d.Remaining != 100 || d.ResetAfter != 0 {
				t.Errorf("empty window: %+v", d)
			}
			if err := l.Add(ctx, "tpm", 60, base); err != nil {
				t.Fatal(err)
			}
			if d := allow(t, l, "tpm", 100, 0, base.Add(time.Second)); !d.Allowed || d.Remaining != 40 {
				t.Errorf("60 of 100 used: %+v", d)
			}
			if err := l.Add(ctx, "tpm", 45, base.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			d := allow(t, l, "tpm", 100, 0, base.Add(3*time.Second))
			want := Decision{Remaining: 0, ResetAfter: 59 * time.Second, RetryAfter: 57 * time.Second}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("105 of 100 used (-want +got):\n%s", diff)
			}
			d = allow(t, l, "big", 10, 11, base)
			if d.Allowed || d.RetryAfter != Window {
				t.Errorf("cost above the limit: %+v, want refused with RetryAfter %s", d, Window)
			}
		})
	}
}

// TestRefund: Add with a negative cost at the same instant takes back a
// count of Allow.
func TestRefund(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			now := base.Add(1500 * time.Millisecond)
			for range 3 {
				allow(t, l, "rpm", 3, 1, now)
			}
			if err := l.Add(context.Background(), "rpm", -1, now); err != nil {
				t.Fatal(err)
			}
			if d := allow(t, l, "rpm", 3, 1, now); !d.Allowed || d.Remaining != 0 {
				t.Errorf("after a refund: %+v, want allowed with 0 remaining", d)
			}
		})
	}
}

// TestTakeBackOnlyItsBucket: a negative Add lowers only the bucket of its
// own second, never below zero, and does nothing when that bucket is not
// there (it left the window, or nothing was counted then): it cannot take
// away the counts of other requests.
func TestTakeBackOnlyItsBucket(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			ctx := context.Background()
			allow(t, l, "tpm", 100, 30, base)
			allow(t, l, "tpm", 100, 20, base.Add(2*time.Second))
			for _, at := range []time.Time{base.Add(time.Second), base.Add(-time.Minute), base.Add(3 * time.Second)} {
				if err := l.Add(ctx, "tpm", -15, at); err != nil {
					t.Fatal(err)
				}
			}
			if d := allow(t, l, "tpm", 100, 0, base.Add(5*time.Second)); d.Remaining != 50 {
				t.Errorf("remaining %d after take-backs at seconds without counts, want 50", d.Remaining)
			}
			if err := l.Add(ctx, "tpm", -45, base); err != nil { // more than second 0 holds
				t.Fatal(err)
			}
			if d := allow(t, l, "tpm", 100, 0, base.Add(5*time.Second)); d.Remaining != 80 {
				t.Errorf("remaining %d after taking back 45 of second 0's 30, want 80 (second 2's 20 stay)", d.Remaining)
			}
		})
	}
}

// TestTrueUp: a reservation counted by Allow is replaced by the real cost:
// lowered or raised in its own second while that is in the window, and
// counted at the end once the reservation has left the window.
func TestTrueUp(t *testing.T) {
	for name, mk := range impls(t) {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			ctx := context.Background()
			remaining := func(now time.Time) int {
				t.Helper()
				return allow(t, l, "tpm", 1000, 0, now).Remaining
			}
			if d := allow(t, l, "tpm", 1000, 400, base); !d.Allowed || d.Remaining != 600 {
				t.Fatalf("reservation of 400: %+v", d)
			}
			must(t, TrueUp(ctx, l, "tpm", 400, 120, base, base.Add(20*time.Second)))
			if r := remaining(base.Add(20 * time.Second)); r != 880 {
				t.Errorf("remaining %d after 400 reserved trued up to 120, want 880", r)
			}
			allow(t, l, "tpm", 1000, 100, base.Add(30*time.Second))
			must(t, TrueUp(ctx, l, "tpm", 100, 250, base.Add(30*time.Second), base.Add(40*time.Second)))
			if r := remaining(base.Add(40 * time.Second)); r != 630 {
				t.Errorf("remaining %d after 100 reserved trued up to 250, want 630", r)
			}
			// Second 0 leaves the window at +60 s; a reservation made at +45 s
			// and settled at +110 s has left it: its real cost counts at +110 s.
			allow(t, l, "tpm", 1000, 300, base.Add(45*time.Second))
			must(t, TrueUp(ctx, l, "tpm", 300, 70, base.Add(45*time.Second), base.Add(110*time.Second)))
			if r := remaining(base.Add(110 * time.Second)); r != 930 {
				t.Errorf("remaining %d at +110 s, want 930 (only the 70 counted then)", r)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRedisTTL: every key carries a TTL of at least the window, and a
// check of an empty window creates no key.
func TestRedisTTL(t *testing.T) {
	c, prefix := testenv.Redis(t)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: prefix, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	allow(t, r, "a:rpm", 10, 1, now)
	allow(t, r, "b:tpm", 10, 0, now)
	if err := r.Add(ctx, "c:tpm", 7, now); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("keys %v, want the two that were counted", keys)
	}
	for _, k := range keys {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < Window || ttl > Window+time.Second {
			t.Errorf("TTL of %s is %s, want between %s and %s", k, ttl, Window, Window+time.Second)
		}
	}
}

// TestRedisAcrossReplicas: two limiters on separate connections, one
// Redis, 300 concurrent calls against 100 → exactly 100 allowed.
func TestRedisAcrossReplicas(t *testing.T) {
	c, prefix := testenv.Redis(t)
	opts := *c.Options()
	c2 := redis.NewClient(&opts)
	t.Cleanup(func() { _ = c2.Close() })
	var lims []*Redis
	for _, cl := range []*redis.Client{c, c2} {
		r, err := NewRedis(RedisConfig{Client: cl, Prefix: prefix, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		lims = append(lims, r)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			d, err := lims[i%2].Allow(context.Background(), "shared:rpm", 100, 1, time.Now())
			if err != nil {
				t.Error(err)
			}
			if d.Allowed {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 100 {
		t.Errorf("%d allowed, want exactly 100", ok.Load())
	}
	for i, l := range lims {
		if l.Fallbacks() != 0 {
			t.Errorf("replica %d fell back %d times", i, l.Fallbacks())
		}
	}
}

// TestRedisFallback: with Redis cut off, calls are answered per process at
// limit/replicas without an error, and Redis is used again once it is back.
func TestRedisFallback(t *testing.T) {
	c, prefix := testenv.Redis(t)
	proxy := testenv.NewTCPProxy(t, c.Options().Addr)
	opts := *c.Options()
	opts.Addr = proxy.Addr()
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	pc := redis.NewClient(&opts)
	t.Cleanup(func() { _ = pc.Close() })
	r, err := NewRedis(RedisConfig{Client: pc, Prefix: prefix, FallbackReplicas: 4,
		RetryInterval: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for range 5 {
		if d := allow(t, r, "k", 20, 1, now); !d.Allowed {
			t.Fatal("refused while Redis is up")
		}
	}
	proxy.Break()
	start := time.Now()
	allowed := 0
	for range 10 {
		if allow(t, r, "k", 20, 1, now).Allowed {
			allowed++
		}
	}
	if allowed != 5 {
		t.Errorf("fallback allowed %d, want 5 (20 / 4 replicas)", allowed)
	}
	if r.Fallbacks() == 0 {
		t.Error("no call fell back")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("10 calls took %s with Redis down", d)
	}
	proxy.Restore()
	deadline := time.Now().Add(5 * time.Second)
	for {
		before := r.Fallbacks()
		d := allow(t, r, "k", 20, 1, now)
		if r.Fallbacks() == before {
			// Answered by Redis, which still holds the 5 counts made
			// before the cut.
			if !d.Allowed || d.Remaining != 14 {
				t.Errorf("after recovery: %+v, want allowed with 14 remaining", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Redis was not used again after it came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLocalExpiresIdleKeys: windows idle for a whole window are dropped.
func TestLocalExpiresIdleKeys(t *testing.T) {
	l := NewLocal()
	for i := range 1000 {
		allow(t, l, fmt.Sprintf("k%d", i), 10, 1, base)
	}
	if n := l.Len(); n != 1000 {
		t.Fatalf("%d windows, want 1000", n)
	}
	// Every shard sweeps on its next use after a window.
	for i := range 1000 {
		allow(t, l, fmt.Sprintf("other%d", i), 10, 0, base.Add(2*Window))
	}
	if n := l.Len(); n != 0 {
		t.Errorf("%d windows after two idle minutes, want 0 (checks of empty windows keep nothing)", n)
	}
}

func BenchmarkLocalAllow(b *testing.B) {
	l := NewLocal()
	now := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = l.Allow(context.Background(), "gw:bench:rpm", 1<<30, 1, now)
		}
	})
}
