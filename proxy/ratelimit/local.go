package ratelimit

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// localShards is the number of lock stripes of a Local limiter: requests
// for different keys rarely wait on the same mutex.
const localShards = 64

// sweepEvery is how often a shard drops its idle windows.
const sweepEvery = windowSeconds

// Local is a per-process Limiter. Its memory is bounded by the keys used
// in the last two minutes: a shard drops the windows idle for a whole
// window at most once a minute, on its next use. It needs no goroutine.
type Local struct {
	seed   maphash.Seed
	shards [localShards]shard
}

var _ Limiter = (*Local)(nil)

type shard struct {
	mu        sync.Mutex
	windows   map[string]*window
	nextSweep int64 // unix second of the next sweep
}

// window is a ring of one-second buckets; slot i holds second s with
// s mod 60 = i.
type window struct {
	b      [windowSeconds]bucket
	newest int64 // the latest second counted
}

// NewLocal returns an empty per-process limiter.
func NewLocal() *Local {
	l := &Local{seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].windows = map[string]*window{}
	}
	return l
}

func (l *Local) shard(key string) *shard {
	return &l.shards[maphash.String(l.seed, key)%localShards]
}

// Allow implements Limiter; it never fails.
func (l *Local) Allow(_ context.Context, key string, limit int, cost int, now time.Time) (Decision, error) {
	sh := l.shard(key)
	nowSec := floorDiv(now.UnixMilli(), 1000)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(nowSec)
	w := sh.windows[key]
	var live [windowSeconds]bucket
	n, used := 0, int64(0)
	if w != nil {
		for _, b := range w.b {
			if b.n != 0 && b.sec > nowSec-windowSeconds {
				live[n] = b
				n++
				used += b.n
			}
		}
	}
	slices.SortFunc(live[:n], func(a, b bucket) int { return int(a.sec - b.sec) })
	d := decide(live[:n], used, int64(limit), int64(cost), now)
	if d.Allowed && cost != 0 {
		if w == nil {
			w = &window{}
			sh.windows[key] = w
		}
		w.add(nowSec, int64(cost))
	}
	return d, nil
}

// Add implements Limiter; it never fails.
func (l *Local) Add(_ context.Context, key string, cost int, now time.Time) error {
	if cost == 0 {
		return nil
	}
	sh := l.shard(key)
	nowSec := floorDiv(now.UnixMilli(), 1000)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(nowSec)
	w := sh.windows[key]
	if w == nil {
		w = &window{}
		sh.windows[key] = w
	}
	w.add(nowSec, int64(cost))
	return nil
}

// Len returns the number of windows held, for tests of the memory bound.
func (l *Local) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.windows)
		sh.mu.Unlock()
	}
	return n
}

func (w *window) add(sec, n int64) {
	slot := &w.b[((sec%windowSeconds)+windowSeconds)%windowSeconds]
	if n < 0 {
		// A take-back lowers only its own second's bucket, and never
		// below zero: another second's counts are not its to take.
		if slot.sec == sec {
			slot.n = max(slot.n+n, 0)
		}
		return
	}
	if slot.sec != sec {
		if slot.sec > sec {
			// A count from a clock behind this slot's second (a reordered
			// call): it joins the newer bucket rather than erasing it.
			slot.n += n
			return
		}
		*slot = bucket{sec: sec}
	}
	slot.n += n
	w.newest = max(w.newest, sec)
}

// sweep drops the windows with no count in the last window, at most once
// per sweepEvery. The caller holds sh.mu.
func (sh *shard) sweep(nowSec int64) {
	if nowSec < sh.nextSweep {
		return
	}
	sh.nextSweep = nowSec + sweepEvery
	for k, w := range sh.windows {
		if w.newest <= nowSec-windowSeconds {
			delete(sh.windows, k)
		}
	}
}
