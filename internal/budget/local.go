package budget

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// localShards is the number of lock stripes of the local counters.
const localShards = 32

// localCounters keep budget counters in the process: the counters of a
// process without Redis, or the fallback of one with Redis. Expired
// counters are dropped by a sweep of their shard, at most once a minute,
// on its next use: no goroutine.
type localCounters struct {
	seed maphash.Seed
	// replicas divides what remains of a budget among the processes that
	// each enforce it alone (the Redis fallback); 1 otherwise.
	replicas int64
	shards   [localShards]localShard
}

type localShard struct {
	mu        sync.Mutex
	m         map[string]*counter
	nextSweep int64 // unix ms
}

type counter struct {
	spent, reserved int64
	// base is the spend the counter started from.
	base   int64
	loaded bool
	leases map[string]lease
	// nextLeaseSweep is when expired leases are next looked for (unix ms).
	nextLeaseSweep int64
	// expireAt is when the counter may be dropped (unix ms).
	expireAt int64
}

type lease struct{ cost, untilMS int64 }

func newLocalCounters(replicas int) *localCounters {
	l := &localCounters{seed: maphash.MakeSeed(), replicas: int64(max(replicas, 1))}
	for i := range l.shards {
		l.shards[i].m = map[string]*counter{}
	}
	return l
}

func (l *localCounters) shard(name string) *localShard {
	return &l.shards[maphash.String(l.seed, name)%localShards]
}

func (l *localCounters) reserve(_ context.Context, k counterKey, r reserveReq) (reserveOut, error) {
	sh := l.shard(k.name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(r.nowMS)
	c := sh.m[k.name]
	if c == nil {
		if !r.haveInit {
			return reserveOut{needInit: true}, nil
		}
		c = &counter{spent: r.init, base: r.init, loaded: r.initLoaded, leases: map[string]lease{}}
		sh.m[k.name] = c
	}
	c.touch(k, r.nowMS)
	c.expireLeases(r.nowMS)
	amount := r.amount
	if l.replicas > 1 && amount > c.base {
		amount = c.base + (amount-c.base)/l.replicas
	}
	out := reserveOut{loaded: c.loaded}
	out.fits = c.spent < amount && c.spent+c.reserved+r.cost <= amount
	out.admitted = out.fits || !r.hard
	if out.admitted && r.lease != "" {
		c.leases[r.lease] = lease{cost: r.cost, untilMS: r.leaseUntilMS}
		c.reserved += r.cost
	}
	out.spent, out.reserved = c.spent, c.reserved
	return out, nil
}

func (l *localCounters) settle(_ context.Context, k counterKey, r settleReq) (settleOut, error) {
	sh := l.shard(k.name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := sh.m[k.name]
	if c == nil {
		return settleOut{}, nil
	}
	if ls, ok := c.leases[r.lease]; ok && r.lease != "" {
		delete(c.leases, r.lease)
		c.reserved -= ls.cost
	}
	c.spent += r.actual
	return settleOut{found: true, spent: c.spent}, nil
}

func (l *localCounters) merge(_ context.Context, k counterKey, persisted int64) error {
	sh := l.shard(k.name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c := sh.m[k.name]; c != nil && !c.loaded {
		c.spent = max(c.spent, persisted)
		c.loaded = true
	}
	return nil
}

// state returns a counter's spend and open reservations, if it exists.
func (l *localCounters) state(k counterKey, nowMS int64) (spent, reserved int64, found bool) {
	sh := l.shard(k.name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := sh.m[k.name]
	if c == nil {
		return 0, 0, false
	}
	c.expireLeases(nowMS)
	return c.spent, c.reserved, true
}

// len returns the number of counters, for tests of the memory bound.
func (l *localCounters) len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// touch renews the counter's expiry: a day after its period's end, or an
// idle TTL for a total budget.
func (c *counter) touch(k counterKey, nowMS int64) {
	if k.expireAt.IsZero() {
		c.expireAt = nowMS + totalTTL.Milliseconds()
	} else {
		c.expireAt = k.expireAt.UnixMilli()
	}
}

// expireLeases drops the leases past their end, at most once a second.
func (c *counter) expireLeases(nowMS int64) {
	if nowMS < c.nextLeaseSweep {
		return
	}
	c.nextLeaseSweep = nowMS + time.Second.Milliseconds()
	for id, ls := range c.leases {
		if ls.untilMS < nowMS {
			delete(c.leases, id)
			c.reserved -= ls.cost
		}
	}
}

// sweep drops expired counters without open leases, at most once a
// minute. The caller holds sh.mu.
func (sh *localShard) sweep(nowMS int64) {
	if nowMS < sh.nextSweep {
		return
	}
	sh.nextSweep = nowMS + time.Minute.Milliseconds()
	for name, c := range sh.m {
		if c.expireAt < nowMS && len(c.leases) == 0 {
			delete(sh.m, name)
		}
	}
}
