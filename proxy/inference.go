package proxy

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/lastuse"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/ratelimit"
	"github.com/sluicehq/sluice/proxy/respcache"
	"github.com/sluicehq/sluice/proxy/snapshot"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// SnapshotSource gives the current configuration snapshot.
type SnapshotSource interface {
	Load() *snapshot.Snapshot
}

// ProviderSource gives the adapter of a provider id.
type ProviderSource interface {
	Get(id string) (providers.Provider, bool)
}

// InferenceConfig wires the inference handler.
type InferenceConfig struct {
	Snapshots SnapshotSource
	Providers ProviderSource
	Breakers  *breaker.Set
	Sink      Sink
	Logger    *slog.Logger
	Now       func() time.Time
	// Cache stores the answers of gateways with the response cache on;
	// nil means an in-process store of respcache.DefaultLocalMaxBytes.
	Cache respcache.Store
	// Limiter counts the rate limits (proxy/limits.go); nil means a
	// per-process limiter.
	Limiter ratelimit.Limiter
	// Budgets enforces the budgets; nil means per-process counters that
	// start from zero.
	Budgets *budget.Manager
	// Tokenizer counts tokens when a provider reports no usage
	// (proxy/estimate.go); nil means tokenize.New().
	Tokenizer Tokenizer
	// RuleBudget is the matching time the content rules may spend on one
	// request (proxy/rules.go); 0 means rules.DefaultBudget, a negative
	// value no limit.
	RuleBudget time.Duration
	// TenantMaxInFlight is the in-flight limit of a tenant whose settings
	// set none; 0 means DefaultTenantMaxInFlight (proxy/inflight.go).
	TenantMaxInFlight int
	// UpstreamShare is how many calls one tenant may have in flight to
	// one upstream host; 0 means DefaultUpstreamShare.
	UpstreamShare int
	// StreamWriteTimeout is how long a stream waits for its client to
	// take a write; 0 means DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// Observers are told of every recorded request (proxy/observe.go):
	// the OTLP exporter and the access log, when they are on. None costs
	// a request nothing.
	Observers []Observer
	// Metrics configures the traffic series of CONTRACT §13
	// (proxy/metrics.go).
	Metrics MetricsConfig
	// LastUse is told of every authenticated request's token, in memory;
	// its flusher writes last_used_at and last_seen_at (proxy/lastuse).
	// nil records no use.
	LastUse *lastuse.Marks
}

// Inference serves the five inference paths. It reads configuration only
// from the snapshot: no database call on the hot path.
type Inference struct {
	cfg     InferenceConfig
	log     *slog.Logger
	parsers fastjson.ParserPool
	// hardStop is cancelled when the shutdown grace period is over: open
	// streams then end with an error event.
	hardStop context.Context
	stopNow  context.CancelFunc
	// upctxs are the contexts of non-streamed requests' upstream calls.
	upctxs  upCancels
	streams sync.WaitGroup
	// ruleSets holds the compiled content rules of the current snapshot.
	ruleSets ruleSets
	// metrics are the traffic series finish counts.
	metrics *trafficMetrics
}

// NewInference returns the handler.
func NewInference(cfg InferenceConfig) *Inference {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sink == nil {
		cfg.Sink = &MemorySink{}
	}
	if cfg.Breakers == nil {
		cfg.Breakers = breaker.NewSet(cfg.Now)
	}
	if cfg.Cache == nil {
		cfg.Cache = newLocalCache(cfg.Now)
	}
	if cfg.Limiter == nil {
		cfg.Limiter = ratelimit.NewLocal()
	}
	if cfg.Budgets == nil {
		cfg.Budgets = budget.NewLocal(nil)
	}
	if cfg.Tokenizer == nil {
		cfg.Tokenizer = tokenize.New()
	}
	cfg.fillInFlightDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Inference{cfg: cfg, log: cfg.Logger, hardStop: ctx, stopNow: cancel, upctxs: upCancels{hardStop: ctx},
		metrics: newTrafficMetrics(cfg.Metrics)}
}

// EndStreams ends every open stream with an error event and waits for them
// to finish writing it. The server calls it when the grace period is over.
func (h *Inference) EndStreams() {
	h.stopNow()
	h.streams.Wait()
}

func truncate(b []byte, limit int) string {
	return string(clip(b, limit))
}

// truncateBoth is truncate of a and of b in one allocation: both strings
// share one backing array (they live in the same record).
func truncateBoth(a, b []byte, limit int) (string, string) {
	a, b = clip(a, limit), clip(b, limit)
	var sb strings.Builder
	sb.Grow(len(a) + len(b))
	sb.Write(a)
	sb.Write(b)
	s := sb.String()
	return s[:len(a)], s[len(a):]
}

// clip is b cut to limit bytes, or nothing when limit is not positive.
func clip(b []byte, limit int) []byte {
	if limit <= 0 {
		return nil
	}
	return b[:min(len(b), limit)]
}

func since(t time.Time) int64 { return time.Since(t).Milliseconds() }
