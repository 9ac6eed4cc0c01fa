// Package redisguard decides when a component that shares state through
// Redis should stop asking Redis and fall back to its per-process state,
// and logs the fallback at most once a minute. The rate limiter and the
// budget manager both use it.
package redisguard

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// logEvery bounds the fallback's log lines to one a minute.
const logEvery = time.Minute

// Guard tracks Redis's health for one component. A nil *Guard (no Redis
// configured) never skips and records nothing. It uses the wall clock:
// it is about Redis, not about the component's windows or periods.
type Guard struct {
	log *slog.Logger
	// retry is how long Redis is skipped after a failure.
	retry time.Duration
	// fallback says what happens while Redis is down ("rate limits are
	// counted per process"); shared says what resumes ("rate limits").
	fallback, shared string

	fallbacks atomic.Int64
	down      atomic.Int64 // unix ns until which Redis is skipped; 0 when up

	mu      sync.Mutex
	lastLog time.Time
	failing bool
}

// New returns a guard. fallback completes "redis unreachable; …" and
// shared completes "redis answers again; … are shared again".
func New(log *slog.Logger, retry time.Duration, fallback, shared string) *Guard {
	if log == nil {
		log = slog.Default()
	}
	return &Guard{log: log, retry: retry, fallback: fallback, shared: shared}
}

// Skip reports whether Redis should be skipped now (it failed less than
// retry ago); a skip counts as a fallback.
func (g *Guard) Skip() bool {
	if g == nil {
		return false
	}
	until := g.down.Load()
	if until == 0 || time.Now().UnixNano() >= until {
		return false
	}
	g.fallbacks.Add(1)
	return true
}

// Failed records a failed Redis call: Redis is skipped for retry.
func (g *Guard) Failed(err error) {
	if g == nil {
		return
	}
	g.fallbacks.Add(1)
	now := time.Now()
	g.down.Store(now.Add(g.retry).UnixNano())
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failing = true
	if now.Sub(g.lastLog) >= logEvery {
		g.lastLog = now
		g.log.Warn("redis unreachable; "+g.fallback+" until it answers again", "err", err)
	}
}

// OK records a successful Redis call.
func (g *Guard) OK() {
	if g == nil || g.down.Load() == 0 {
		return
	}
	g.down.Store(0)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failing {
		g.failing = false
		g.log.Info("redis answers again; " + g.shared + " are shared again")
	}
}

// Fallbacks counts the calls answered without Redis.
func (g *Guard) Fallbacks() int64 {
	if g == nil {
		return 0
	}
	return g.fallbacks.Load()
}
