package admin

import (
	"sync"
	"time"
)

// windowLimiter counts events per key in fixed windows (sign-in attempts per
// client address, per email and per pair of both; client-error reports and
// audited denials per user). It lives in the admin process only: the admin
// API is not on the hot path.
//
// Its memory is bounded by time and by size, whatever the keys an attacker
// sends: windows older than one window length are swept out at most once
// per window, and the map never holds more than maxKeys keys — when it is
// full after a sweep, an arbitrary key is dropped for the new one (which
// resets that key's count; the hash gate, not the limiters, is what bounds
// the work of a flood from many addresses).
type windowLimiter struct {
	mu        sync.Mutex
	limit     int
	window    time.Duration
	maxKeys   int
	counts    map[string]windowCount
	lastSweep time.Time
}

type windowCount struct {
	start time.Time
	n     int
}

// defaultMaxKeys bounds each limiter: about 100 bytes a key, so about 1 MB
// per limiter at the bound.
const defaultMaxKeys = 10_000

func newWindowLimiter(limit int, window time.Duration, maxKeys int) *windowLimiter {
	if maxKeys <= 0 {
		maxKeys = defaultMaxKeys
	}
	return &windowLimiter{limit: limit, window: window, maxKeys: maxKeys, counts: make(map[string]windowCount)}
}

// add counts one event for key at now and returns the number of events of
// key's current window, this one included.
func (l *windowLimiter) add(key string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= l.window {
		l.sweep(now)
	}
	c, ok := l.counts[key]
	if ok && now.Sub(c.start) < l.window {
		c.n++
		l.counts[key] = c
		return c.n
	}
	if !ok && len(l.counts) >= l.maxKeys {
		l.sweep(now)
		for k := range l.counts { // still full: drop an arbitrary key
			if len(l.counts) < l.maxKeys {
				break
			}
			delete(l.counts, k)
		}
	}
	l.counts[key] = windowCount{start: now, n: 1}
	return 1
}

// allow counts one event for key and reports whether it is within the limit.
func (l *windowLimiter) allow(key string, now time.Time) bool { return l.add(key, now) <= l.limit }

// seen reports, without counting, whether key has an event in its current
// window.
func (l *windowLimiter) seen(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.counts[key]
	return ok && now.Sub(c.start) < l.window
}

// sweep drops the windows that have ended. l.mu is held.
func (l *windowLimiter) sweep(now time.Time) {
	for k, c := range l.counts {
		if now.Sub(c.start) >= l.window {
			delete(l.counts, k)
		}
	}
	l.lastSweep = now
}

// size returns the number of keys held.
func (l *windowLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.counts)
}
