package analytics_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/clickhouse"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The pipeline's tests use analytics.FakeWriter (spill_test.go), a test
// double of the Writer interface, and the real embedded backend.

func newPipeline(t testing.TB, cfg analytics.PipelineConfig) *analytics.Pipeline {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = analytics.QuietLogger()
	}
	p, err := analytics.NewPipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func enqueueRange(p *analytics.Pipeline, from, to int) {
	for i := from; i < to; i++ {
		p.Enqueue(analytics.NewTestRecord(i))
	}
}

// checkExactlyOnce checks that records [0, n) were each acknowledged in
// exactly one successful write and that nothing else was.
func checkExactlyOnce(t *testing.T, w *analytics.FakeWriter, n int) {
	t.Helper()
	acks := w.Acks()
	for i := range n {
		id := analytics.NewTestRecord(i).ID
		if acks[id] != 1 {
			t.Errorf("record %s acknowledged in %d writes, want 1", id, acks[id])
		}
	}
	if len(acks) != n {
		t.Errorf("%d records acknowledged, want %d", len(acks), n)
	}
	if got := w.StoredCount(); got != n {
		t.Errorf("%d records stored, want %d", got, n)
	}
}

// spillDrained reports whether the pipeline holds nothing: no queue, no
// spill on disk.
func spillDrained(t *testing.T, p *analytics.Pipeline, dir string) func() bool {
	return func() bool {
		st := p.Stats()
		return st.Queued == 0 && st.SpilledBytes == 0 && len(analytics.SegmentFiles(t, dir)) == 0
	}
}

func TestPipelineFlushesOnSizeAndOnTime(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		w := analytics.NewFakeWriter()
		p := newPipeline(t, analytics.PipelineConfig{Writer: w, BatchSize: 10, FlushInterval: time.Hour})
		analytics.StartPipeline(t, p)
		enqueueRange(p, 0, 25)
		analytics.WaitUntil(t, "two full batches are written", func() bool { return w.StoredCount() == 20 })
		for _, a := range w.Attempts() {
			if len(a.IDs) != 10 {
				t.Errorf("batch of %d records, want 10 (full batches only before the flush interval)", len(a.IDs))
			}
		}
		if q := p.Stats().Queued; q != 5 {
			t.Errorf("queued = %d, want 5 waiting for the flush interval", q)
		}
	})
	t.Run("time", func(t *testing.T) {
		w := analytics.NewFakeWriter()
		p := newPipeline(t, analytics.PipelineConfig{Writer: w, BatchSize: 1000, FlushInterval: 10 * time.Millisecond})
		analytics.StartPipeline(t, p)
		enqueueRange(p, 0, 3)
		analytics.WaitUntil(t, "the partial batch is written", func() bool { return w.StoredCount() == 3 })
		checkExactlyOnce(t, w, 3)
	})
}

// (a) The writer goes down for a while and comes back: every record is
// written exactly once, the spill replays in order and is removed.
func TestPipelineWriterOutage(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	set := metrics.NewSet()
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 100, BatchSize: 20,
		FlushInterval: 5 * time.Millisecond, FsyncInterval: 10 * time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Metrics: set})
	analytics.StartPipeline(t, p)

	enqueueRange(p, 0, 100)
	analytics.WaitUntil(t, "the first records are written", func() bool { return w.StoredCount() == 100 })

	w.SetDown(true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 100 + g*100; i < 200+g*100; i++ {
				p.Enqueue(analytics.NewTestRecord(i))
				if i%25 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	analytics.WaitUntil(t, "the outage shows in the stats", func() bool {
		st := p.Stats()
		return !st.WriterHealthy && st.SpilledRecords > 0 && st.LastError != ""
	})
	w.SetDown(false)
	enqueueRange(p, 900, 1000)

	analytics.WaitUntil(t, "everything is written and the spill is gone", func() bool {
		return w.StoredCount() == 1000 && spillDrained(t, p, dir)()
	})
	checkExactlyOnce(t, w, 1000)

	st := p.Stats()
	if !st.WriterHealthy || st.LastError != "" {
		t.Errorf("writer healthy = %v, last error %q after recovery", st.WriterHealthy, st.LastError)
	}
	if st.WrittenRecords != 1000 || st.ReplayedRecords == 0 || st.DroppedRecords != 0 {
		t.Errorf("stats %+v: want 1000 written, some replayed, none dropped", st)
	}
	// Replayed batches of one segment come in offset order.
	last := map[string]int{}
	for _, a := range w.Attempts() {
		if a.Err != nil || !strings.HasPrefix(a.Batch, "spill-") {
			continue
		}
		i := strings.LastIndexByte(a.Batch, '-')
		seg := a.Batch[:i]
		off, err := strconv.Atoi(a.Batch[i+1:])
		if err != nil {
			t.Fatalf("batch id %q", a.Batch)
		}
		if prev, ok := last[seg]; ok && off <= prev {
			t.Errorf("segment %s replayed offset %d after %d", seg, off, prev)
		}
		last[seg] = off
	}
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	for _, want := range []string{"sluice_pipeline_queue_depth 0", "sluice_pipeline_spill_bytes 0",
		"sluice_pipeline_written_total 1000", "sluice_pipeline_dropped_total 0", "sluice_pipeline_replayed_total ",
		"sluice_pipeline_write_errors_total "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, buf.String())
		}
	}
}

// (b) A full queue spills to disk instead of blocking or dropping, and the
// spill replays when the writer catches up.
func TestPipelineQueueOverflowSpillsAndReplays(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	w.Block()
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 50, BatchSize: 10,
		FlushInterval: time.Millisecond, FsyncInterval: 10 * time.Millisecond})
	analytics.StartPipeline(t, p)
	enqueueRange(p, 0, 1000)

	st := p.Stats()
	// In memory: the queue, the batch in hand, and possibly a queue's worth
	// being moved to the spill because the write is stuck.
	if st.Queued > 50+10+50 || st.Queued+st.SpilledRecords < 1000 || st.SpilledBytes == 0 {
		t.Errorf("stats %+v: want at most queue + batch in memory, the rest spilled", st)
	}
	if len(analytics.SegmentFiles(t, dir)) == 0 {
		t.Error("no spill segment on disk")
	}
	w.Unblock()
	analytics.WaitUntil(t, "everything is written and the spill is gone", func() bool {
		return w.StoredCount() == 1000 && spillDrained(t, p, dir)()
	})
	checkExactlyOnce(t, w, 1000)
	if st := p.Stats(); st.ReplayedRecords < 940 || st.DroppedRecords != 0 {
		t.Errorf("stats %+v: want the spilled records replayed, none dropped", st)
	}
}

// bigRecord is test record i with a request and a response body of size
// bytes each.
func bigRecord(i, size int) *analytics.Record {
	r := analytics.NewTestRecord(i)
	r.RequestBody, r.ResponseBody = strings.Repeat("q", size), strings.Repeat("a", size)
	return r
}

// The queue is bounded in bytes as well as in records: records with large
// bodies that would pass QueueBytes go to the spill (Enqueue does not
// wait), and nothing is lost: once the writer is back, each is written
// exactly once.
func TestPipelineQueueBytesSpillsAndReplays(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	w.Block()
	const queueBytes = 256 << 10
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 1000, QueueBytes: queueBytes, BatchSize: 10,
		FlushInterval: time.Millisecond, FsyncInterval: 10 * time.Millisecond})
	analytics.StartPipeline(t, p)
	for i := range 100 {
		p.Enqueue(bigRecord(i, 16<<10)) // about 33 KiB each: 7 fit in the queue
	}
	st := p.Stats()
	if st.QueuedBytes > queueBytes || st.SpilledRecords < 100-7-10 || st.Queued+st.SpilledRecords < 100 {
		t.Errorf("stats %+v: want at most %d bytes queued (7 records) besides the batch in hand, the rest spilled", st, queueBytes)
	}
	w.Unblock()
	analytics.WaitUntil(t, "everything is written and the spill is gone", func() bool {
		return w.StoredCount() == 100 && spillDrained(t, p, dir)()
	})
	checkExactlyOnce(t, w, 100)
	if st := p.Stats(); st.DroppedRecords != 0 || st.QueuedBytes != 0 {
		t.Errorf("stats %+v: want nothing dropped and nothing left queued", st)
	}
}

// A queue holding half its bytes wakes the writer at once, as a full
// batch does, instead of waiting for FlushInterval (an hour here).
func TestPipelineQueueBytesWakeTheWriter(t *testing.T) {
	w := analytics.NewFakeWriter()
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Queue: 1000, QueueBytes: 64 << 10, BatchSize: 1000,
		FlushInterval: time.Hour})
	analytics.StartPipeline(t, p)
	for i := range 5 {
		p.Enqueue(bigRecord(i, 20<<10)) // about 41 KiB: more than half the bound
		analytics.WaitUntil(t, "the record is written", func() bool { return w.StoredCount() == i+1 })
	}
	if st := p.Stats(); st.SpilledRecords != 0 {
		t.Errorf("stats %+v: want nothing spilled", st)
	}
}

// A write that runs longer than the fsync interval but not StallTimeout is
// slow, not stalled: the queue stays in memory (a large batch on a loaded
// ClickHouse takes a second or more). Past StallTimeout every fsync tick
// moves the queue to the spill, as during an outage.
func TestPipelineSlowWriteIsNotAStall(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	w.Block()
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 1000, BatchSize: 10,
		FlushInterval: time.Millisecond, FsyncInterval: 10 * time.Millisecond, StallTimeout: 500 * time.Millisecond})
	analytics.StartPipeline(t, p)
	enqueueRange(p, 0, 60)             // a batch of 10 being written (blocked), 50 queued
	time.Sleep(100 * time.Millisecond) // ten fsync ticks, well inside StallTimeout
	if st := p.Stats(); st.SpilledRecords != 0 || st.Queued != 60 {
		t.Errorf("stats %+v after 100 ms of a write: want all 60 in memory, nothing spilled", st)
	}
	analytics.WaitUntil(t, "the queue moves to disk once the write runs past StallTimeout", func() bool {
		return p.Stats().SpilledRecords >= 50
	})
	w.Unblock()
	analytics.WaitUntil(t, "everything is written and the spill is gone", func() bool {
		return w.StoredCount() == 60 && spillDrained(t, p, dir)()
	})
	checkExactlyOnce(t, w, 60)
}

// (c) A graceful shutdown while the writer is down spills everything, and
// a new pipeline on the same directory replays it all, the batch that was
// being retried under its own id.
func TestPipelineGracefulShutdownSpillsAndNextRunReplays(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	w.SetDown(true)
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 1000, BatchSize: 50,
		FlushInterval: time.Millisecond, FsyncInterval: time.Hour, MaxBackoff: time.Millisecond,
		ShutdownTimeout: 100 * time.Millisecond})
	stop := analytics.StartPipeline(t, p)
	enqueueRange(p, 0, 500)
	analytics.WaitUntil(t, "the first batch is retried", func() bool { return len(w.Attempts()) >= 2 })
	if q := p.Stats().Queued; q != 500 {
		t.Fatalf("queued = %d, want all 500 in memory before the shutdown", q)
	}
	stop()
	st := p.Stats()
	if st.Queued != 0 || st.SpilledRecords != 500 || st.DroppedRecords != 0 {
		t.Fatalf("stats after shutdown %+v: want all 500 spilled", st)
	}
	// A record enqueued after Run returned is spilled (and fsync'd) too.
	p.Enqueue(analytics.NewTestRecord(500))
	retried := w.Attempts()[0]

	w2 := analytics.NewFakeWriter()
	p2 := newPipeline(t, analytics.PipelineConfig{Writer: w2, Dir: dir, BatchSize: 50})
	analytics.StartPipeline(t, p2)
	analytics.WaitUntil(t, "the next run replays everything", func() bool {
		return w2.StoredCount() == 501 && spillDrained(t, p2, dir)()
	})
	checkExactlyOnce(t, w2, 501)
	found := false
	for _, a := range w2.Attempts() {
		if a.Batch == retried.Batch {
			found = true
			if diff := cmp.Diff(retried.IDs, a.IDs); diff != "" {
				t.Errorf("batch %s replayed with other records (-before +after):\n%s", a.Batch, diff)
			}
		}
	}
	if !found {
		t.Errorf("batch %s, retried before the shutdown, was not replayed under its id", retried.Batch)
	}
	if got := p2.Stats().ReplayedRecords; got != 501 {
		t.Errorf("replayed = %d, want 501", got)
	}
}

// (e) Enqueue never blocks: with the writer stuck, 100,000 records from
// many goroutines are all taken (into memory or the spill).
func TestPipelineEnqueueNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	w := analytics.NewFakeWriter()
	w.Block() // until the pipeline's shutdown cancels the write
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 1000, BatchSize: 100,
		FsyncInterval: 5 * time.Millisecond, ShutdownTimeout: 50 * time.Millisecond})
	stop := analytics.StartPipeline(t, p)

	const goroutines, each = 16, 100_000 / 16
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				p.Enqueue(&analytics.Record{ID: strconv.Itoa(g*each + i), TS: time.Now(), Status: 200})
				if i%1000 == 0 {
					_ = p.Stats()
				}
			}
		})
	}
	wg.Wait() // completes although no write ever finishes
	stop()
	st := p.Stats()
	if st.Queued != 0 || st.SpilledRecords != goroutines*each || st.DroppedRecords != 0 || st.WrittenRecords != 0 {
		t.Errorf("stats %+v: want all %d records on disk", st, goroutines*each)
	}
}

// (f) A write that stored the batch but reported an error (unknown
// outcome) is retried with the same batch: a writer that deduplicates
// stores nothing twice.
func TestPipelineRetriesTheSameBatchAfterUnknownOutcome(t *testing.T) {
	w := analytics.NewFakeWriter()
	w.FailAfterStore(2)
	set := metrics.NewSet()
	p := newPipeline(t, analytics.PipelineConfig{Writer: w, BatchSize: 50, FlushInterval: time.Millisecond,
		MaxBackoff: time.Millisecond, Metrics: set})
	analytics.StartPipeline(t, p)
	enqueueRange(p, 0, 50)
	analytics.WaitUntil(t, "the batch is acknowledged", func() bool { return p.Stats().WrittenRecords == 50 })
	att := w.Attempts()
	if len(att) < 3 {
		t.Fatalf("%d attempts, want 3", len(att))
	}
	for i, a := range att[:3] {
		if a.Batch != att[0].Batch || !cmp.Equal(a.IDs, att[0].IDs) {
			t.Errorf("attempt %d wrote batch %s (%d records), want the same batch %s again", i, a.Batch, len(a.IDs), att[0].Batch)
		}
		if wantErr := i < 2; (a.Err != nil) != wantErr {
			t.Errorf("attempt %d error %v", i, a.Err)
		}
	}
	if got := w.StoredCount(); got != 50 {
		t.Errorf("%d records stored, want 50", got)
	}
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	if !strings.Contains(buf.String(), "sluice_pipeline_write_errors_total 2") {
		t.Errorf("metrics:\n%s\nwant 2 write errors", buf.String())
	}
}

func TestPipelineConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  analytics.PipelineConfig
	}{
		{"no writer", analytics.PipelineConfig{Dir: "x"}},
		{"no dir", analytics.PipelineConfig{Writer: analytics.NewFakeWriter()}},
		{"negative queue", analytics.PipelineConfig{Writer: analytics.NewFakeWriter(), Dir: "x", Queue: -1}},
		{"negative queue bytes", analytics.PipelineConfig{Writer: analytics.NewFakeWriter(), Dir: "x", QueueBytes: -1}},
	} {
		if err := tc.cfg.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", tc.name, tc.cfg)
		}
	}
	cfg := analytics.PipelineConfig{Writer: analytics.NewFakeWriter(), Dir: "x"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Queue != 100_000 || cfg.QueueBytes != 100_000*4<<10 || cfg.BatchSize != 5_000 || cfg.FlushInterval != 500*time.Millisecond ||
		cfg.MaxSpillBytes != 1<<30 || cfg.FsyncInterval != time.Second || cfg.StallTimeout != 5*time.Second {
		t.Errorf("defaults: %+v", cfg)
	}
}

// flaky wraps a backend: down fails before writing; while unknown is
// positive, writes store and then fail (the outcome a timeout leaves),
// counting unknown down.
type flaky struct {
	analytics.Writer
	down    atomic.Bool
	unknown atomic.Int32
}

func (f *flaky) Write(ctx context.Context, b *analytics.Batch) error {
	if f.down.Load() {
		return errors.New("connection refused")
	}
	if err := f.Writer.Write(ctx, b); err != nil {
		return err
	}
	if f.unknown.Add(-1) >= 0 {
		return errors.New("read timeout")
	}
	f.unknown.Store(0)
	return nil
}

// The pipeline with the real backends: an outage with spill and replay,
// writes of unknown outcome, and a restart in between; every record is
// stored once, with its spans and costs. ClickHouse runs when
// SLUICE_TEST_CLICKHOUSE_URL names a server (make test starts one).
func TestPipelineWithRealBackends(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		st, err := embedded.Open(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		testPipelineWithBackend(t, st)
	})
	t.Run("clickhouse", func(t *testing.T) {
		ctx := context.Background()
		st, err := clickhouse.Open(ctx, clickhouse.Config{URL: testenv.ClickHouseDatabase(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		testPipelineWithBackend(t, st)
	})
}

func testPipelineWithBackend(t *testing.T, st analytics.Backend) {
	ctx := context.Background()
	w := &flaky{Writer: st}
	dir := t.TempDir()
	cfg := analytics.PipelineConfig{Writer: w, Dir: dir, Queue: 50, BatchSize: 20,
		FlushInterval: 2 * time.Millisecond, FsyncInterval: 5 * time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		ShutdownTimeout: 5 * time.Second}
	all := analytics.Query{TenantID: "acme", From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	count := func() int64 {
		s, err := st.Stats(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		return s.Requests
	}

	p := newPipeline(t, cfg)
	stop := analytics.StartPipeline(t, p)
	enqueueRange(p, 0, 100)
	analytics.WaitUntil(t, "the first records are stored", func() bool { return count() == 100 })

	w.down.Store(true)
	enqueueRange(p, 100, 400)
	analytics.WaitUntil(t, "records spill", func() bool { return p.Stats().SpilledRecords > 0 })
	w.unknown.Store(3)
	w.down.Store(false)
	analytics.WaitUntil(t, "writes of unknown outcome happen and more succeed", func() bool {
		return w.unknown.Load() == 0 && p.Stats().WriterHealthy && count() > 100
	})
	w.down.Store(true)
	enqueueRange(p, 400, 450)
	stop() // the writer is down: everything left is spilled

	w.down.Store(false)
	p2 := newPipeline(t, cfg)
	analytics.StartPipeline(t, p2)
	enqueueRange(p2, 450, 500)
	analytics.WaitUntil(t, "every record is stored and the spill is gone", func() bool {
		return count() >= 500 && spillDrained(t, p2, dir)()
	})
	if n := count(); n != 500 {
		t.Errorf("%d request logs stored, want 500", n)
	}
	for _, i := range []int{0, 150, 399, 420, 499} {
		want := analytics.NewTestRecord(i)
		tr, err := st.Trace(ctx, want.TraceID, "")
		if err != nil {
			t.Fatal(err)
		}
		if tr == nil || tr.Root == nil || tr.Root.SpanID != want.Spans[0].SpanID {
			t.Errorf("trace of record %d: %+v, want its root span", i, tr)
		}
		got, err := st.Log(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.CostUSD != want.CostUSD {
			t.Errorf("record %d: %+v, want cost %v", i, got, want.CostUSD)
		}
	}
}

// discard acknowledges every batch at once.
type discard struct{}

func (discard) Write(context.Context, *analytics.Batch) error { return nil }

// BenchmarkEnqueue measures Enqueue. "queue": one producer and a writer
// that keeps up, so records stay in memory (the path of every request
// while the writer is healthy, and during an outage until the next fsync
// tick moves the queue to disk). "parallel": producers on every CPU, which
// on a small machine starve the writer, so the queue overflows now and
// then. "spill": a queue of one record, so that every record is encoded and
// appended to the spill (the worst case).
func BenchmarkEnqueue(b *testing.B) {
	for _, bc := range []struct {
		name     string
		queue    int
		parallel bool
	}{{"queue", 1 << 20, false}, {"parallel", 1 << 20, true}, {"spill", 1, true}} {
		b.Run(bc.name, func(b *testing.B) {
			p := newPipeline(b, analytics.PipelineConfig{Writer: discard{}, Queue: bc.queue})
			analytics.StartPipeline(b, p)
			rec := analytics.NewTestRecord(1)
			b.ReportAllocs()
			b.ResetTimer()
			if bc.parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						p.Enqueue(rec)
					}
				})
			} else {
				for range b.N {
					p.Enqueue(rec)
				}
			}
			b.StopTimer()
			st := p.Stats()
			if st.DroppedRecords != 0 {
				b.Fatalf("%d records dropped", st.DroppedRecords)
			}
			b.ReportMetric(float64(st.SpilledRecords)/float64(b.N), "spilled/op")
		})
	}
}
