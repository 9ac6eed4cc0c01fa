package snapshot

import (
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/internal/catalog"
)

// InFlight counts the inference requests of one scope (a tenant, a
// gateway, a user, a token, or a tenant's share of one upstream) that are
// in flight in this process. It is the one mutable part of a snapshot:
// counting is one atomic add, with no lock and no map lookup, and the same
// counter is handed to every snapshot built with the same Counters, so that
// a rebuild does not forget the requests in flight.
type InFlight struct {
	n atomic.Int64
}

// Acquire counts one more request unless that would exceed limit; limit 0
// or less means no limit. It reports whether the request was counted; a
// counted request must be released exactly once.
func (f *InFlight) Acquire(limit int64) bool {
	n := f.n.Add(1)
	if limit > 0 && n > limit {
		f.n.Add(-1)
		return false
	}
	return true
}

// Release takes back one request counted by Acquire.
func (f *InFlight) Release() { f.n.Add(-1) }

// Load returns the number of requests in flight.
func (f *InFlight) Load() int64 { return f.n.Load() }

// counterKey names one counter: its kind ("tenant", "gateway", "user",
// "token", "upstream") and the id of what it counts.
type counterKey struct{ kind, id string }

// Counters hands out the in-flight counters of the snapshots built with it
// and keeps them from one build to the next. A Holder owns one; its lock is
// taken by builds only, never on the request path (requests reach their
// counters through the snapshot's objects).
type Counters struct {
	mu sync.Mutex
	m  map[counterKey]*InFlight
}

// NewCounters returns an empty set of counters.
func NewCounters() *Counters {
	return &Counters{m: map[counterKey]*InFlight{}}
}

// Busy returns the number of counters with requests in flight, and their
// sum. After every request has ended both are 0 (tests assert it).
func (c *Counters) Busy() (counters int, requests int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.m {
		if n := f.Load(); n != 0 {
			counters++
			requests += n
		}
	}
	return counters, requests
}

// counterBuild is the view of Counters one assemble call uses: it records which
// counters the new snapshot refers to, so that done can drop the others.
type counterBuild struct {
	c    *Counters
	seen map[counterKey]bool
}

func (c *Counters) begin() *counterBuild {
	c.mu.Lock()
	return &counterBuild{c: c, seen: map[counterKey]bool{}}
}

// get returns the counter of kind and id, the same one as the previous
// build's when there was one.
func (b *counterBuild) get(kind, id string) *InFlight {
	k := counterKey{kind, id}
	b.seen[k] = true
	f := b.c.m[k]
	if f == nil {
		f = &InFlight{}
		b.c.m[k] = f
	}
	return f
}

// done forgets the counters the new snapshot does not refer to, unless
// requests are still counted on them: the requests hold their counters
// themselves, and keeping a busy one means that an object which comes
// back (a user re-enabled, a tenant restored) finds its count.
func (b *counterBuild) done() {
	for k, f := range b.c.m {
		if !b.seen[k] && f.Load() == 0 {
			delete(b.c.m, k)
		}
	}
	b.c.mu.Unlock()
}

// upstreamID names the upstream a key's calls go to, for the tenant's
// share of connections to it: the scheme and host of the key's base URL
// (or its provider's default), or for providers whose host follows from an
// option rather than a base URL (Bedrock's region, Azure's resource), the
// provider and that option. Keys of one tenant with the same upstream
// share a counter.
func upstreamID(k *Key) string {
	base := k.BaseURL
	if base == "" {
		if p, ok := catalog.LookupProvider(k.Provider); ok {
			base = p.DefaultBaseURL
		}
	}
	if base != "" {
		if u, err := url.Parse(base); err == nil && u.Host != "" {
			return strings.ToLower(u.Scheme + "://" + u.Host)
		}
		return base
	}
	return k.Provider + ":" + k.Options.Region + k.Options.Resource
}
