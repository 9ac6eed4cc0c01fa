package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/clickhouse"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy"
)

const (
	// migrateTimeout bounds the ClickHouse migration at start-up; when
	// ClickHouse does not answer in time the process serves anyway, records
	// spill, and the migration is retried before the first write.
	migrateTimeout = 15 * time.Second
	// retentionEvery is how often log retention runs.
	retentionEvery = time.Hour
)

// openAnalytics opens the analytics backend: ClickHouse with
// --clickhouse-url, else the embedded store in the data dir. The writer it
// returns is the one the pipeline uses: for ClickHouse it makes sure the
// schema is migrated before the first write, so a proxy starts (and
// spills) while ClickHouse is down.
func openAnalytics(ctx context.Context, c *config, log *slog.Logger) (analytics.Backend, analytics.Writer, error) {
	if c.ClickHouseURL == "" {
		st, err := embedded.Open(ctx, filepath.Join(c.DataDir, "analytics.db"))
		if err != nil {
			return nil, nil, err
		}
		// The embedded store writes on its own low-priority thread, which
		// needs a P of its own: with GOMAXPROCS=1 its inserts would hold
		// the requests' only P again (docs/performance.md). One more P
		// does not raise the CPU the process may use on a pinned core.
		if n := runtime.GOMAXPROCS(0); n < 2 {
			runtime.GOMAXPROCS(2)
			log.Info("GOMAXPROCS raised to 2 for the embedded analytics writer's thread", "was", n)
		}
		return st, st, nil
	}
	st, err := clickhouse.Open(ctx, clickhouse.Config{URL: c.ClickHouseURL})
	if err != nil {
		return nil, nil, err
	}
	w := &migratingWriter{Writer: st, migrate: st.Migrate}
	mctx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	if err := w.ensure(mctx); err != nil {
		log.Warn("ClickHouse is not ready; serving anyway, analytics records spill to the data dir until it is",
			"err", err)
	}
	return st, w, nil
}

// migrateClickHouse applies the pending ClickHouse migrations (sluice
// migrate) and returns their names.
func migrateClickHouse(ctx context.Context, url string) ([]string, error) {
	st, err := clickhouse.Open(ctx, clickhouse.Config{URL: url})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate clickhouse: %w", err)
	}
	return applied, nil
}

// migratingWriter applies the ClickHouse migrations before its first
// write. Only the pipeline's writer goroutine calls Write.
type migratingWriter struct {
	analytics.Writer
	migrate func(ctx context.Context) ([]string, error)
	done    atomic.Bool
}

func (w *migratingWriter) ensure(ctx context.Context) error {
	if w.done.Load() {
		return nil
	}
	if _, err := w.migrate(ctx); err != nil {
		return fmt.Errorf("migrate clickhouse: %w", err)
	}
	w.done.Store(true)
	return nil
}

// Write migrates when that has not succeeded yet, then writes b.
func (w *migratingWriter) Write(ctx context.Context, b *analytics.Batch) error {
	if err := w.ensure(ctx); err != nil {
		return err
	}
	return w.Writer.Write(ctx, b)
}

// maxAnalyticsBatch bounds --analytics-batch-size: a batch is held in
// memory (and retried) whole.
const maxAnalyticsBatch = 1_000_000

// analyticsBatchSize is the pipeline's batch size: --analytics-batch-size,
// or when that is 0 the backend's default, ClickHouse's large batches (its
// parts are cheaper the larger they are, and a large batch goes as
// concurrent INSERTs) or the embedded store's small ones (each write runs
// inside the gateway process and holds its CPU while it lasts).
func analyticsBatchSize(c *config) (int, error) {
	switch n := c.AnalyticsBatchSize; {
	case n == 0 && c.ClickHouseURL != "":
		return clickhouse.DefaultBatchSize, nil
	case n == 0:
		return analytics.DefaultBatchSize, nil
	case n < 1 || n > maxAnalyticsBatch:
		return 0, fmt.Errorf("--analytics-batch-size must be between 1 and %d (or 0 for the backend's default), got %d", maxAnalyticsBatch, n)
	default:
		return n, nil
	}
}

// newPipeline is the proxy's analytics pipeline, spilling to
// <data-dir>/spool. The directory belongs to one process: two proxies must
// not share a data dir. Its queue holds at least two batches, so that the
// next one gathers in memory while one is written.
func newPipeline(c *config, w analytics.Writer, log *slog.Logger, set *metrics.Set) (*analytics.Pipeline, error) {
	batch, err := analyticsBatchSize(c)
	if err != nil {
		return nil, err
	}
	return analytics.NewPipeline(analytics.PipelineConfig{
		Writer:    w,
		Dir:       filepath.Join(c.DataDir, "spool"),
		BatchSize: batch,
		Queue:     max(analytics.DefaultPipelineQueue, 2*batch),
		Logger:    log,
		Metrics:   set,
	})
}

// runRetention enforces each tenant's log_retention_days once an hour (and
// once at start) until ctx ends.
func runRetention(ctx context.Context, st *store.Store, b analytics.Backend, log *slog.Logger) error {
	t := time.NewTicker(retentionEvery)
	defer t.Stop()
	for {
		retainOnce(ctx, st, b, log)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func retainOnce(ctx context.Context, st *store.Store, b analytics.Backend, log *slog.Logger) {
	tenants, err := store.All[store.Tenant](ctx, st.DB, "id")
	if err != nil {
		if ctx.Err() == nil {
			log.Error("log retention: list tenants", "err", err)
		}
		return
	}
	now := time.Now().UTC()
	for _, tn := range tenants {
		days := tn.Settings.LogRetentionDays
		if days <= 0 {
			days = 30
		}
		if err := b.Retain(ctx, tn.ID, now.AddDate(0, 0, -days)); err != nil {
			// One line per round, not per tenant: the next round retries.
			if ctx.Err() == nil {
				log.Error("log retention stopped for this round", "tenant", tn.ID, "err", err)
			}
			return
		}
	}
}

// analyticsCheck reports the pipeline in /healthz: degraded (still 200)
// while the analytics store refuses writes or records wait on disk. The
// detail gives counts only: the writer's error may name hosts, and
// /healthz needs no credential; the error is in the log.
func analyticsCheck(p *analytics.Pipeline) proxy.Check {
	st := p.Stats()
	var chk proxy.Check
	switch {
	case !st.WriterHealthy:
		chk = proxy.Check{Status: proxy.StatusDegraded, Detail: fmt.Sprintf(
			"the analytics store refuses writes; %d records buffered in memory, %d bytes spilled to disk",
			st.Queued, st.SpilledBytes)}
	case st.SpilledBytes > 0:
		chk = proxy.Check{Status: proxy.StatusDegraded, Detail: fmt.Sprintf(
			"replaying %d bytes of spilled records; %d records in memory", st.SpilledBytes, st.Queued)}
	default:
		chk = proxy.Check{Status: proxy.StatusOK, Detail: fmt.Sprintf("%d records in memory", st.Queued)}
	}
	if st.DroppedRecords > 0 {
		chk.Detail += fmt.Sprintf("; %d records lost since start (sluice_pipeline_dropped_total)", st.DroppedRecords)
	}
	return chk
}
