package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/proxy/ratelimit"
)

// openRedis connects to --redis-url, or returns nil without one. The
// client is tuned for a fallback, not for waiting: no retries (the
// limiter and the budgets answer a failed call from per-process counters
// and try Redis again a second later), context deadlines honoured (each
// call has 50 ms), one dial attempt per call. An unreachable Redis at
// start is a warning, not an error: the fallback serves until it answers.
func (c *config) openRedis(ctx context.Context, log *slog.Logger) (*redis.Client, error) {
	if c.RedisURL == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %w", err) // the parser never echoes a password
	}
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	opts.DialerRetries = 1
	// go-redis logs every failed dial; the limiter and the budgets log an
	// outage once a minute, so the library's lines go to debug.
	redis.SetLogger(redisLog{log})
	rc := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rc.Ping(pctx).Err(); err != nil {
		log.Warn("redis does not answer at start; rate limits and budgets are counted per process until it does",
			"addr", opts.Addr, "err", err)
	}
	return rc, nil
}

// limits returns the rate limiter and the budget manager: shared through
// rc when it is set, else per process. spend initialises budget counters
// from the persisted spend (the analytics backend). onSettle (nil for
// none) sees every budget after each settle: the alerts' hook.
func (c *config) limits(rc *redis.Client, spend budget.SpendSource, log *slog.Logger, onSettle func(context.Context, budget.Settlement)) (ratelimit.Limiter, *budget.Manager, error) {
	if c.RedisFallbackReplicas < 1 {
		return nil, nil, fmt.Errorf("--redis-fallback-replicas must be at least 1, got %d", c.RedisFallbackReplicas)
	}
	if rc == nil {
		b, err := budget.NewManager(budget.Config{Spend: spend, Logger: log, OnSettle: onSettle})
		return ratelimit.NewLocal(), b, err
	}
	lim, err := ratelimit.NewRedis(ratelimit.RedisConfig{Client: rc, FallbackReplicas: c.RedisFallbackReplicas, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	b, err := budget.NewManager(budget.Config{Redis: rc, Spend: spend, FallbackReplicas: c.RedisFallbackReplicas, Logger: log,
		OnSettle: onSettle})
	if err != nil {
		return nil, nil, err
	}
	return lim, b, nil
}

// redisLog sends go-redis's log lines to slog at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "redis")
}
