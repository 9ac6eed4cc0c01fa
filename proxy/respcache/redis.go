package respcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of RedisConfig.
const (
	DefaultRedisPrefix  = "sluice:cache:"
	DefaultRedisTimeout = 100 * time.Millisecond
	// errorLogEvery bounds the store's warnings to one a minute.
	errorLogEvery = time.Minute
)

// RedisClient is what the store needs of a go-redis client;
// *redis.Client (standalone or Sentinel) and *redis.ClusterClient have it.
type RedisClient interface {
	Get(ctx context.Context, key string) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// RedisConfig configures a Redis store.
type RedisConfig struct {
	Client RedisClient
	// Prefix namespaces the keys: "<prefix><hex key>"; default
	// "sluice:cache:".
	Prefix string
	// Timeout bounds one call; default 100 ms. A slower call is a miss
	// (or a dropped write).
	Timeout time.Duration
	// MaxEntryBytes is the largest encoded entry stored; default 1 MiB.
	MaxEntryBytes int
	// Logger receives the store's failures, at most one line a minute.
	Logger *slog.Logger
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *RedisConfig) Validate() error {
	if c.Client == nil {
		return errors.New("cache: a Redis client is required")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultRedisPrefix
	}
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("cache: timeout %s is negative", c.Timeout)
	case c.Timeout == 0:
		c.Timeout = DefaultRedisTimeout
	}
	switch {
	case c.MaxEntryBytes < 0:
		return fmt.Errorf("cache: max entry bytes %d is negative", c.MaxEntryBytes)
	case c.MaxEntryBytes == 0:
		c.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Redis is a store shared by every process using the same Redis and
// prefix: GET, and SET with a PX expiry. Redis evicts by its own
// maxmemory policy. Any failure is a miss: the cache never fails a
// request.
type Redis struct {
	cfg     RedisConfig
	lastLog atomic.Int64 // unix nanoseconds of the last warning
}

var _ Store = (*Redis)(nil)

// NewRedis validates cfg and returns the store.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Redis{cfg: cfg}, nil
}

func (r *Redis) key(k Key) string { return r.cfg.Prefix + k.String() }

// Get returns the entry of k; a Redis error or a damaged entry is a miss.
func (r *Redis) Get(ctx context.Context, k Key) (*Entry, bool) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	b, err := r.cfg.Client.Get(ctx, r.key(k)).Bytes()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			r.warn("read", err)
		}
		return nil, false
	}
	e, err := decode(b)
	if err != nil {
		r.warn("decode", err)
		return nil, false
	}
	return e, true
}

// Set stores e for ttl, unless its encoding is larger than MaxEntryBytes.
func (r *Redis) Set(ctx context.Context, k Key, e *Entry, ttl time.Duration) {
	ms := ttl.Milliseconds()
	if ms <= 0 {
		return
	}
	b := encode(e)
	if len(b) > r.cfg.MaxEntryBytes {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.cfg.Client.Do(ctx, "SET", r.key(k), b, "PX", strconv.FormatInt(ms, 10)).Err(); err != nil {
		r.warn("write", err)
	}
}

// warn logs a failure, at most once per errorLogEvery.
func (r *Redis) warn(op string, err error) {
	now := time.Now().UnixNano()
	last := r.lastLog.Load()
	if now-last < int64(errorLogEvery) || !r.lastLog.CompareAndSwap(last, now) {
		return
	}
	r.cfg.Logger.Warn("response cache: Redis "+op+" failed; answering as a miss", "err", err)
}
