// Package otlp exports the spans of inference requests to an OpenTelemetry
// collector over OTLP/HTTP (protobuf), with the official OpenTelemetry Go
// SDK (CONTRACT §13, docs/observability.md "Traces").
//
// The proxy records each request's spans for the admin trace view
// (analytics.Record.Spans); the exporter builds OpenTelemetry spans from
// the same record when the request finishes (a proxy.Observer), so a
// request pays nothing when export is off and, when it is on, the cost of
// starting and ending its spans and a non-blocking hand-off to the batch
// span processor. Spans the processor's queue cannot take, or an export
// that fails, are dropped and counted in sluice_otlp_dropped_spans_total:
// export never waits for the collector.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/proxy"
)

// Defaults of Config.
const (
	// DefaultQueueSize is the spans waiting for export: about a second of
	// a busy proxy's requests (two or three spans each).
	DefaultQueueSize = 8192
	// DefaultBatchSize is the most spans one export carries.
	DefaultBatchSize = 512
	// DefaultBatchTimeout is how long a span waits for its batch to fill.
	DefaultBatchTimeout = 2 * time.Second
	// DefaultExportTimeout bounds one export, retries included.
	DefaultExportTimeout = 10 * time.Second
)

// Config sets up an Exporter.
type Config struct {
	// Endpoint is the collector's base URL (http or https): spans are
	// POSTed to Endpoint/v1/traces. Credentials do not belong in it: the
	// standard OTEL_EXPORTER_OTLP_HEADERS variable carries them.
	Endpoint string
	// SamplingRatio is the share of new traces exported, 0 to 1; a trace
	// continued from a client's traceparent follows the client's sampled
	// flag (ParentBased(TraceIDRatioBased)).
	SamplingRatio float64
	// QueueSize, BatchSize, BatchTimeout and ExportTimeout tune the batch
	// span processor; zero picks the defaults above.
	QueueSize     int
	BatchSize     int
	BatchTimeout  time.Duration
	ExportTimeout time.Duration
	// Metrics receives sluice_otlp_dropped_spans_total and
	// sluice_otlp_exported_spans_total.
	Metrics *metrics.Set
	Logger  *slog.Logger
	// Version is the service.version of the exported resource.
	Version string
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	u, err := url.Parse(c.Endpoint)
	switch {
	case err != nil:
		return fmt.Errorf("otlp endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("otlp endpoint must be an http or https URL, got %q", u.Redacted())
	case u.User != nil:
		return errors.New("otlp endpoint must not hold credentials: set OTEL_EXPORTER_OTLP_HEADERS")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("otlp endpoint is a base URL without query or fragment, got %q", u.Redacted())
	case c.SamplingRatio < 0 || c.SamplingRatio > 1:
		return fmt.Errorf("otlp sampling ratio must be between 0 and 1, got %g", c.SamplingRatio)
	case c.QueueSize < 0 || c.BatchSize < 0:
		return errors.New("otlp queue and batch sizes must not be negative")
	}
	return nil
}

func (c *Config) fillDefaults() {
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.BatchSize == 0 {
		c.BatchSize = min(DefaultBatchSize, c.QueueSize)
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = DefaultBatchTimeout
	}
	if c.ExportTimeout == 0 {
		c.ExportTimeout = DefaultExportTimeout
	}
	if c.Metrics == nil {
		c.Metrics = metrics.NewSet()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Exporter turns finished requests into spans and exports them.
type Exporter struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

var _ proxy.Observer = (*Exporter)(nil)

// New returns an exporter to cfg.Endpoint. Its batch span processor runs
// until Shutdown.
func New(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.fillDefaults()
	client, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(strings.TrimSuffix(cfg.Endpoint, "/")+"/v1/traces"),
		otlptracehttp.WithTimeout(cfg.ExportTimeout),
		// A collector that is down is retried within the export timeout;
		// meanwhile the queue fills and new spans are dropped (counted).
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
			MaxInterval: 2 * time.Second, MaxElapsedTime: cfg.ExportTimeout}))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	d := &drops{limit: int64(cfg.QueueSize), log: cfg.Logger,
		dropped:  cfg.Metrics.NewCounter("sluice_otlp_dropped_spans_total"),
		exported: cfg.Metrics.NewCounter("sluice_otlp_exported_spans_total")}
	bsp := sdktrace.NewBatchSpanProcessor(&countingExporter{SpanExporter: client, d: d},
		sdktrace.WithMaxQueueSize(cfg.QueueSize), sdktrace.WithMaxExportBatchSize(cfg.BatchSize),
		sdktrace.WithBatchTimeout(cfg.BatchTimeout), sdktrace.WithExportTimeout(cfg.ExportTimeout))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(&countingProcessor{SpanProcessor: bsp, d: d}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SamplingRatio))),
		sdktrace.WithIDGenerator(recordIDs{}),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "sluice"), attribute.String("service.version", cfg.Version))),
	)
	return &Exporter{tp: tp, tracer: tp.Tracer("github.com/sluicehq/sluice/proxy")}, nil
}

// Shutdown exports what the queue holds, within ctx, and stops.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if err := e.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("otlp shutdown: %w", err)
	}
	return nil
}

// drops counts what the batch span processor holds and what is dropped:
// the SDK's processor drops silently when its queue is full, so the
// countingProcessor refuses a span before the processor would (pending
// counts the spans queued or in an export, never fewer than the queue
// holds), and the countingExporter counts the spans of a failed export.
type drops struct {
	pending           atomic.Int64
	limit             int64
	dropped, exported *metrics.Counter
	log               *slog.Logger
	// lastWarn is the Unix second of the last export failure logged: one
	// warning a minute at most, whatever the rate of spans.
	lastWarn atomic.Int64
}

// countingProcessor is the batch span processor with the drops counted.
type countingProcessor struct {
	sdktrace.SpanProcessor
	d *drops
}

// OnEnd hands s to the batch span processor unless its queue may be full.
func (p *countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the processor exports sampled spans only
	}
	if p.d.pending.Add(1) > p.d.limit {
		p.d.pending.Add(-1)
		p.d.dropped.Inc()
		return
	}
	p.SpanProcessor.OnEnd(s)
}

// countingExporter is the OTLP exporter with failed exports counted.
type countingExporter struct {
	sdktrace.SpanExporter
	d *drops
}

// ExportSpans exports spans; on failure it counts them dropped and logs
// (at most once a minute) instead of handing the error to the SDK's
// global error handler.
func (x *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := x.SpanExporter.ExportSpans(ctx, spans)
	x.d.pending.Add(-int64(len(spans)))
	if err == nil {
		x.d.exported.Add(len(spans))
		return nil
	}
	x.d.dropped.Add(len(spans))
	now := time.Now().Unix()
	if last := x.d.lastWarn.Load(); now-last >= 60 && x.d.lastWarn.CompareAndSwap(last, now) {
		x.d.log.Warn("otlp export failed; spans dropped", "spans", len(spans), "err", err)
	}
	return nil
}
