package admin

import (
	"sync"
	"time"
)

// loginLimiter is a small fixed-window counter per key (e.g. email + IP for
// sign-ins, user for client-error reports). It lives in the admin process
// only: the admin API is not on the hot path and sessions are rare.
type loginLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	counts map[string]*windowCount
}

type windowCount struct {
	start time.Time
	n     int
}

func newLoginLimiter(limit int, window time.Duration) *loginLimiter {
	return &loginLimiter{limit: limit, window: window, counts: make(map[string]*windowCount)}
}

// allow counts one event for key and reports whether it is within the limit.
func (l *loginLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.counts) > 10000 { // bound memory: drop expired windows
		for k, c := range l.counts {
			if now.Sub(c.start) >= l.window {
				delete(l.counts, k)
			}
		}
	}
	c, ok := l.counts[key]
	if !ok || now.Sub(c.start) >= l.window {
		l.counts[key] = &windowCount{start: now, n: 1}
		return true
	}
	c.n++
	return c.n <= l.limit
}
