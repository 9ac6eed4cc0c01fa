package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/internal/redisguard"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of RedisConfig.
const (
	DefaultPrefix        = "sluice:rl:"
	DefaultTimeout       = 50 * time.Millisecond
	DefaultRetryInterval = time.Second
)

// RedisConfig configures a Redis limiter.
type RedisConfig struct {
	// Client runs the scripts: a *redis.Client (standalone or Sentinel).
	Client redis.Scripter
	// Prefix namespaces every key; default "sluice:rl:".
	Prefix string
	// Timeout bounds one call to Redis; default 50 ms. A call that takes
	// longer is answered by the fallback.
	Timeout time.Duration
	// FallbackReplicas is the number of proxy replicas expected to share
	// the limits; while Redis is unreachable each process enforces
	// limit/FallbackReplicas (at least 1) on its own. Default 1.
	FallbackReplicas int
	// RetryInterval is how long the limiter answers from the fallback
	// after a failed call before trying Redis again; default 1 s.
	RetryInterval time.Duration
	// Logger receives the fallback's warnings (at most one a minute).
	Logger *slog.Logger
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *RedisConfig) Validate() error {
	if c.Client == nil {
		return errors.New("ratelimit: a Redis client is required")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("ratelimit: timeout %s is negative", c.Timeout)
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.FallbackReplicas < 0:
		return fmt.Errorf("ratelimit: fallback replicas %d is negative", c.FallbackReplicas)
	case c.FallbackReplicas == 0:
		c.FallbackReplicas = 1
	}
	switch {
	case c.RetryInterval < 0:
		return fmt.Errorf("ratelimit: retry interval %s is negative", c.RetryInterval)
	case c.RetryInterval == 0:
		c.RetryInterval = DefaultRetryInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Redis is a Limiter shared by every process using the same Redis and
// prefix. Each call is one Lua script that reads the window, drops its
// expired buckets and counts, atomically; every key carries a TTL of a
// window and a second, renewed on each count. The caller's now is passed
// into the script (replicas' clocks are assumed in sync, as with NTP).
//
// When Redis fails or answers later than Timeout, the call is answered by
// a per-process Local limiter with limit/FallbackReplicas, and so are the
// calls of the next RetryInterval; then Redis is tried again. Nothing is
// refused because Redis is down.
type Redis struct {
	cfg      RedisConfig
	fallback *Local
	guard    *redisguard.Guard
}

var _ Limiter = (*Redis)(nil)

// NewRedis validates cfg and returns the limiter.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Redis{cfg: cfg, fallback: NewLocal(), guard: redisguard.New(cfg.Logger, cfg.RetryInterval,
		"rate limits are counted per process at limit/"+strconv.Itoa(cfg.FallbackReplicas), "rate limits")}, nil
}

// Fallbacks returns how many calls the fallback answered.
func (r *Redis) Fallbacks() int64 { return r.guard.Fallbacks() }

// windowScript is Allow and Add in one: KEYS[1] is the window, a hash of
// unix second → count. ARGV: limit, cost, now (ms), window (s), TTL (ms),
// mode ("allow" or "add"). It returns {allowed, remaining, reset ms,
// retry ms}, the same rule as decide. A negative add lowers only the
// bucket of its own second, when it is there, and drops it at zero.
var windowScript = redis.NewScript(`
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local now_ms = tonumber(ARGV[3])
local win = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local now = math.floor(now_ms / 1000)
if ARGV[6] == 'add' then
  if cost > 0 then
    redis.call('HINCRBY', key, now, cost)
    redis.call('PEXPIRE', key, ttl)
  elseif cost < 0 and redis.call('HEXISTS', key, now) == 1 then
    if redis.call('HINCRBY', key, now, cost) <= 0 then
      redis.call('HDEL', key, now)
    end
  end
  return {1, 0, 0, 0}
end
local oldest = now - win + 1
local flat = redis.call('HGETALL', key)
local live, stale, used = {}, {}, 0
for i = 1, #flat, 2 do
  local s, n = tonumber(flat[i]), tonumber(flat[i + 1])
  if s < oldest then
    stale[#stale + 1] = flat[i]
  elseif n ~= 0 then
    live[#live + 1] = {s, n}
    used = used + n
  end
end
if #stale > 0 then
  redis.call('HDEL', key, unpack(stale))
end
local allowed = 0
if used < limit and used + cost <= limit then
  allowed = 1
  if cost ~= 0 then
    redis.call('HINCRBY', key, now, cost)
    used = used + cost
    live[#live + 1] = {now, cost}
  end
end
if #flat > 0 or (allowed == 1 and cost ~= 0) then
  redis.call('PEXPIRE', key, ttl)
end
table.sort(live, function(a, b) return a[1] < b[1] end)
local remaining = limit - used
if remaining < 0 then remaining = 0 end
local reset = 0
if used > 0 and #live > 0 then
  reset = (live[#live][1] + win) * 1000 - now_ms
end
local retry = 0
if allowed == 0 then
  retry = win * 1000
  local u = used
  for i = 1, #live do
    u = u - live[i][2]
    if u < limit and u + cost <= limit then
      retry = (live[i][1] + win) * 1000 - now_ms
      break
    end
  end
end
return {allowed, remaining, reset, retry}
`)

// ttlMS is the TTL of every window key: a window and one second, so that
// a key outlives its newest bucket.
var ttlMS = strconv.FormatInt((Window + time.Second).Milliseconds(), 10)

// Allow implements Limiter. It never returns an error: a Redis failure is
// answered by the fallback.
func (r *Redis) Allow(ctx context.Context, key string, limit int, cost int, now time.Time) (Decision, error) {
	if r.guard.Skip() {
		return r.fallback.Allow(ctx, key, r.fallbackLimit(limit), cost, now)
	}
	d, err := r.run(ctx, key, limit, cost, now, "allow")
	if err != nil {
		r.guard.Failed(err)
		return r.fallback.Allow(ctx, key, r.fallbackLimit(limit), cost, now)
	}
	r.guard.OK()
	return d, nil
}

// Add implements Limiter. A Redis failure counts the cost in the fallback.
func (r *Redis) Add(ctx context.Context, key string, cost int, now time.Time) error {
	if cost == 0 {
		return nil
	}
	if r.guard.Skip() {
		return r.fallback.Add(ctx, key, cost, now)
	}
	if _, err := r.run(ctx, key, 0, cost, now, "add"); err != nil {
		r.guard.Failed(err)
		return r.fallback.Add(ctx, key, cost, now)
	}
	r.guard.OK()
	return nil
}

func (r *Redis) run(ctx context.Context, key string, limit, cost int, now time.Time, mode string) (Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	res, err := windowScript.Run(ctx, r.cfg.Client, []string{r.cfg.Prefix + key},
		limit, cost, now.UnixMilli(), windowSeconds, ttlMS, mode).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit script on %s: %w", key, err)
	}
	if len(res) != 4 {
		return Decision{}, fmt.Errorf("rate limit script on %s answered %d values", key, len(res))
	}
	return Decision{Allowed: res[0] == 1, Remaining: int(res[1]),
		ResetAfter: msDuration(res[2]), RetryAfter: msDuration(res[3])}, nil
}

func (r *Redis) fallbackLimit(limit int) int {
	return max(limit/r.cfg.FallbackReplicas, 1)
}
