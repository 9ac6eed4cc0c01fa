// Package accesslog writes one JSON line per inference request with
// log/slog (--access-log; docs/observability.md, "Access log"): who asked
// which gateway for what, and how it ended. It holds no secret and no
// body: the line is built from the request's record field by field, never
// from the request or the answer.
package accesslog

import (
	"context"
	"io"
	"log/slog"

	"github.com/sluicehq/sluice/proxy"
)

// Log is the access log, a proxy.Observer.
type Log struct {
	log *slog.Logger
}

var _ proxy.Observer = (*Log)(nil)

// New returns an access log writing JSON lines to w. slog's JSON handler
// writes each line with one Write, under its lock.
func New(w io.Writer) *Log {
	return &Log{log: slog.New(slog.NewJSONHandler(w, nil))}
}

// Observe writes the line of the finished request f.
func (l *Log) Observe(f *proxy.Finished) {
	r := f.Record
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("request_id", r.ID),
		slog.String("tenant", r.TenantID),
		slog.String("gateway", f.Gateway),
		slog.String("gateway_id", r.GatewayID),
		slog.String("operation", r.Operation),
		slog.String("provider", r.Provider),
		slog.String("model", r.Model),
		slog.String("requested_model", f.RequestModel),
		slog.Int("status", r.Status),
		slog.String("error_code", r.ErrorCode),
		slog.Int64("latency_ms", r.LatencyMS),
		slog.Int64("ttfb_ms", r.TTFBMS),
		slog.Int64("tokens_in", r.TokensIn),
		slog.Int64("tokens_out", r.TokensOut),
		slog.Int64("cached_tokens", r.CachedTokens),
		slog.Int64("cache_write_tokens", r.CacheWriteTokens),
		slog.Int64("reasoning_tokens", r.ReasoningTokens),
		slog.Float64("cost_usd", r.CostUSD.Float()),
		slog.String("cache", r.Cache),
		slog.Int("attempts", r.Attempts),
		slog.String("trace_id", r.TraceID),
	)
}
