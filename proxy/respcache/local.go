package respcache

import (
	"context"
	"fmt"
	"time"

	"github.com/maypok86/otter/v2"
)

// Defaults of LocalConfig.
const (
	DefaultLocalMaxBytes = 256 << 20 // 256 MiB
	DefaultMaxEntryBytes = 1 << 20   // 1 MiB
)

// LocalConfig configures an in-process store.
type LocalConfig struct {
	// MaxBytes bounds the memory of the stored answers (bodies plus a
	// small overhead each); the least valuable entries are evicted past
	// it. Default 256 MiB.
	MaxBytes int64
	// MaxEntryBytes is the largest answer stored; larger ones are not
	// cached. Default 1 MiB.
	MaxEntryBytes int
	// Now is the clock of expiry; default time.Now. Tests move it.
	Now func() time.Time
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *LocalConfig) Validate() error {
	switch {
	case c.MaxBytes < 0:
		return fmt.Errorf("cache: max bytes %d is negative", c.MaxBytes)
	case c.MaxBytes == 0:
		c.MaxBytes = DefaultLocalMaxBytes
	}
	switch {
	case c.MaxEntryBytes < 0:
		return fmt.Errorf("cache: max entry bytes %d is negative", c.MaxEntryBytes)
	case c.MaxEntryBytes == 0:
		c.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if int64(c.MaxEntryBytes) > c.MaxBytes {
		c.MaxEntryBytes = int(c.MaxBytes)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Local is an in-process store on otter (W-TinyLFU eviction), bounded by
// the bytes of its entries, each with its own TTL.
type Local struct {
	c        *otter.Cache[Key, localEntry]
	maxEntry int
}

var _ Store = (*Local)(nil)

type localEntry struct {
	e   *Entry
	ttl time.Duration
}

// NewLocal returns an in-process store.
func NewLocal(cfg LocalConfig) (*Local, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := otter.New(&otter.Options[Key, localEntry]{
		MaximumWeight: uint64(cfg.MaxBytes),
		Weigher:       func(_ Key, v localEntry) uint32 { return uint32(v.e.size()) },
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[Key, localEntry]) time.Duration {
			return e.Value.ttl
		}),
		// A clock without ticks: expired entries are never returned, and
		// are removed by the maintenance that reads and writes run, so the
		// store starts no goroutine that would outlive its owner.
		Clock: clock{cfg.Now},
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Local{c: c, maxEntry: cfg.MaxEntryBytes}, nil
}

// Get returns the entry of k.
func (l *Local) Get(_ context.Context, k Key) (*Entry, bool) {
	v, ok := l.c.GetIfPresent(k)
	if !ok {
		return nil, false
	}
	return v.e, true
}

// Set stores e for ttl, unless it is larger than MaxEntryBytes.
func (l *Local) Set(_ context.Context, k Key, e *Entry, ttl time.Duration) {
	if ttl <= 0 || e.size() > l.maxEntry {
		return
	}
	l.c.Set(k, localEntry{e: e, ttl: ttl})
}

// Len returns the number of entries, for tests and metrics (expired ones
// not yet removed may be counted).
func (l *Local) Len() int { return l.c.EstimatedSize() }

// clock is otter's time source on a func, without periodic ticks.
type clock struct{ now func() time.Time }

func (c clock) NowNano() int64 { return c.now().UnixNano() }

func (c clock) Tick(time.Duration) <-chan time.Time { return nil }
