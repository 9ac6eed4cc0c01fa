package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
	"github.com/sluicehq/sluice/analytics/clickhouse"
	"github.com/sluicehq/sluice/internal/ids"
)

// BenchmarkIngest writes batches of clickhouse.DefaultBatchSize records
// (with their spans and guardrail events, about 2.5 spans and 0.2 events
// per record) through Store.Write and reports requests/s (request logs)
// and records/s (request logs, spans and guardrail events: the proxy's
// records, as the pipeline counts them). SLUICE_BENCH_BATCH sets the batch
// size.
func BenchmarkIngest(b *testing.B) {
	s := open(b)
	size := benchBatch(clickhouse.DefaultBatchSize)
	var (
		n, records int
		elapsed    time.Duration
	)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		recs := fresh(size, fmt.Sprintf("bench%d", i))
		batch := &analytics.Batch{ID: fmt.Sprintf("bench-%d", i), Records: recs}
		b.StartTimer()
		start := time.Now()
		if err := s.Write(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		n += size
		records += countRecords(recs)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(records)/elapsed.Seconds(), "records/s")
}

// BenchmarkPipelineIngest is the sustained rate of the analytics pipeline
// into ClickHouse. SLUICE_BENCH_REQUESTS requests (default 1,000,000) are
// made before the clock starts, as the proxy would make them: copies of
// 20,000 generated requests (analyticstest.Generate: bodies, metadata, a
// root span and 1–3 attempt spans, guardrail events), each with a fresh
// UUIDv7 id and the current time. They are then enqueued as fast as the
// queue takes them (never into the spill), and the clock stops when the
// pipeline has written the last one.
// Batches of SLUICE_BENCH_BATCH records (default the ClickHouse default,
// clickhouse.DefaultBatchSize), the pipeline's other settings as sluice
// serve sets them.
//
// Besides requests/s and records/s it reports the CPU time per request of
// this process (producer, pipeline and client) and, when
// SLUICE_TEST_CLICKHOUSE_PIDFILE names the server's pid file (the test
// command's private server), of the ClickHouse server, merges included.
func BenchmarkPipelineIngest(b *testing.B) {
	s := open(b)
	size := benchBatch(clickhouse.DefaultBatchSize)
	total := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_REQUESTS")); err == nil && v > 0 {
		total = v
	}
	templates := analyticstest.Generate(42, 20_000)
	server := serverPID()
	var (
		n, records           int
		elapsed              time.Duration
		clientCPU, serverCPU time.Duration
		serverMeasured       = server > 0
	)
	// The pipeline as sluice serve makes it (cmd/sluice newPipeline): its
	// defaults, a queue of two batches.
	queue := max(analytics.DefaultPipelineQueue, 2*size)
	b.StopTimer() // the clock is elapsed: from the first Enqueue to the last record written
	for i := range b.N {
		p, err := analytics.NewPipeline(analytics.PipelineConfig{Writer: s, Dir: b.TempDir(), BatchSize: size, Queue: queue})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		recs := make([]*analytics.Record, total)
		for j := range recs {
			recs[j] = copyRequest(templates[j%len(templates)], time.Now())
			records += 1 + len(recs[j].Spans) + len(recs[j].Events)
		}
		runtime.GC() // making them is not the pipeline's work
		c0, s0 := processCPU(os.Getpid()), processCPU(server)
		start := time.Now()
		for j, r := range recs {
			for j%256 == 0 && p.Stats().Queued >= int64(queue-256) {
				time.Sleep(100 * time.Microsecond)
			}
			recs[j] = nil // the pipeline owns it now, as it owns the proxy's
			p.Enqueue(r)
		}
		for p.Stats().WrittenRecords < int64(total) {
			time.Sleep(time.Millisecond)
		}
		elapsed += time.Since(start)
		clientCPU += processCPU(os.Getpid()) - c0
		if sc := processCPU(server); sc > 0 {
			serverCPU += sc - s0
		} else {
			serverMeasured = false
		}
		st := p.Stats()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		if st.SpilledRecords != 0 || st.DroppedRecords != 0 {
			b.Fatalf("run %d: records went to the spill (the producer outran the queue, or a write was deemed stalled): %+v", i, st)
		}
		n += total
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(records)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(clientCPU.Microseconds())/float64(n), "client-µs/req")
	if serverMeasured {
		b.ReportMetric(float64(serverCPU.Microseconds())/float64(n), "server-µs/req")
	}
}

// copyRequest is a new request like t at now, as the proxy hands it over:
// its own id, spans and guardrail events, shifted to now.
func copyRequest(t *analytics.Record, now time.Time) *analytics.Record {
	r := *t
	r.ID = ids.UUIDv7()
	r.TS = now.UTC().Truncate(time.Millisecond)
	shift := r.TS.Sub(t.TS)
	r.Spans = slices.Clone(t.Spans)
	for i := range r.Spans {
		r.Spans[i].Start = r.Spans[i].Start.Add(shift)
		if r.Spans[i].ParentID == "" {
			r.Spans[i].Attributes = map[string]string{"request_id": r.ID, "status": strconv.Itoa(r.Status), "route": r.Route}
		}
	}
	r.Events = slices.Clone(t.Events)
	for i := range r.Events {
		r.Events[i].ID, r.Events[i].RequestID, r.Events[i].TS = ids.UUIDv7(), r.ID, r.TS
	}
	return &r
}

// serverPID is the pid of the test command's ClickHouse server, 0 when
// unknown.
func serverPID() int {
	b, err := os.ReadFile(os.Getenv("SLUICE_TEST_CLICKHOUSE_PIDFILE"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// processCPU is the user and system CPU time process pid has used (from
// /proc), 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after ')':
	// utime and stime are the 12th and 13th of them, in clock ticks.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick
}

func benchBatch(def int) int {
	if v, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_BATCH")); err == nil && v > 0 {
		return v
	}
	return def
}

// countRecords counts the proxy's records of requests: each request log,
// span and guardrail event.
func countRecords(recs []*analytics.Record) int {
	n := 0
	for _, r := range recs {
		n += 1 + len(r.Spans) + len(r.Events)
	}
	return n
}

// TestQueries10M loads 10 million synthetic request logs (90% of them one
// tenant's, over the last 30 days) and times the figures of /stats and
// /stats/timeseries (target ≤ 1 s each). Run with SLUICE_BENCH_10M=1.
func TestQueries10M(t *testing.T) {
	if os.Getenv("SLUICE_BENCH_10M") != "1" {
		t.Skip("set SLUICE_BENCH_10M=1 to load 10 M rows and time the queries")
	}
	s := open(t)
	ctx := t.Context()
	const rows = 10_000_000
	now := time.Now().UTC().Truncate(time.Second)
	span := int64(30 * 24 * 3600)
	start := time.Now()
	// INSERT … SELECT runs on the server; over Exec it is fine on 18.16
	// (only INSERT … VALUES hangs).
	err := s.Exec(ctx, fmt.Sprintf(`INSERT INTO request_logs (tenant_id, ts, ts_ms, id, gateway_id, token_id, user_id,
    provider, model, route, status, error_code, latency_ms, ttfb_ms, tokens_in, tokens_out, cached_tokens, cost_usd,
    cache, attempts, metadata_keys, metadata_values, trace_id, client_ip, user_agent, cache_saved_usd, batch_id)
SELECT if(number %% 10 = 0, 't-small', 't-big'),
    toDateTime(%d - intDiv(number * %d, %d)), toUInt16(number %% 1000), concat('req_', toString(number)),
    concat('gw-', toString(number %% 20)), concat('tok-', toString(number %% 500)), concat('u-', toString(number %% 500)),
    arrayElement(['openai', 'anthropic', 'gemini'], number %% 3 + 1),
    arrayElement(['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'gemini-1.5-pro', 'o3-mini'], number %% 5 + 1),
    'chat/completions', toInt32(if(number %% 20 = 0, 502, 200)), if(number %% 20 = 0, 'upstream_error', ''),
    toInt64((number * 7919) %% 8000 + 20), toInt64((number * 7919) %% 800 + 5),
    toInt64(number %% 4000 + 10), toInt64(number %% 1500 + 1), toInt64(0), toInt64((number %% 1000) * 1000),
    if(number %% 5 = 0, 'HIT', 'MISS'), toInt32(1), ['env'], ['prod'], hex(number), '10.0.0.1', 'bench/1.0',
    toInt64(0), 'bench'
FROM numbers(%d)`, now.Unix()-1, span, rows, rows))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	t.Logf("loaded %d rows in %v", rows, time.Since(start).Round(time.Millisecond))

	day := analytics.Query{TenantID: "t-big", From: now.Add(-24 * time.Hour), To: now}
	month := analytics.Query{TenantID: "t-big", From: now.Add(-30 * 24 * time.Hour), To: now}
	all := analytics.Query{From: now.Add(-30 * 24 * time.Hour), To: now}
	timeIt := func(name string, f func() error) {
		var ds []time.Duration
		for range 5 {
			st := time.Now()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ds = append(ds, time.Since(st))
		}
		first := ds[0]
		slices.Sort(ds)
		t.Logf("%-40s first %8v  median %8v  best %8v", name, first.Round(time.Millisecond),
			ds[len(ds)/2].Round(time.Millisecond), ds[0].Round(time.Millisecond))
	}
	var st *analytics.Stats
	timeIt("Stats, tenant, 24 h", func() (err error) { st, err = s.Stats(ctx, day); return })
	t.Logf("  24 h: %d requests, p50/p95/p99 %v/%v/%v ms", st.Requests, st.LatencyMS.P50, st.LatencyMS.P95, st.LatencyMS.P99)
	timeIt("Stats, tenant, 30 d", func() (err error) { st, err = s.Stats(ctx, month); return })
	t.Logf("  30 d: %d requests", st.Requests)
	timeIt("Stats, all tenants, 30 d", func() (err error) { st, err = s.Stats(ctx, all); return })
	if st.Requests != rows {
		t.Errorf("Stats over all: %d requests, want %d", st.Requests, rows)
	}
	timeIt("Timeseries hour, tenant, 24 h", func() error { _, err := s.Timeseries(ctx, day, "hour"); return err })
	timeIt("Timeseries hour, tenant, 30 d", func() error { _, err := s.Timeseries(ctx, month, "hour"); return err })
	timeIt("Timeseries day, all tenants, 30 d", func() error { _, err := s.Timeseries(ctx, all, "day"); return err })
	timeIt("Analysis by model, tenant, 30 d", func() error { _, err := s.Analysis(ctx, month, "model"); return err })
	timeIt("Analysis by user, tenant, 30 d", func() error { _, err := s.Analysis(ctx, month, "user"); return err })
	timeIt("TenantAnalysis, tenant, 30 d", func() error { _, err := s.TenantAnalysis(ctx, month); return err })
	timeIt("Spend, tenant, 30 d", func() error { _, err := s.Spend(ctx, month); return err })
	timeIt("Logs first page, tenant, 30 d", func() error {
		_, _, err := s.Logs(ctx, analytics.LogFilter{Query: month})
		return err
	})
	rec := fresh(1, "v7")[0]
	rec.ID, rec.TenantID = uuid.Must(uuid.NewV7()).String(), "t-big"
	if err := s.Write(ctx, &analytics.Batch{ID: "v7", Records: []*analytics.Record{rec}}); err != nil {
		t.Fatal(err)
	}
	timeIt("Log by id (UUIDv7)", func() error {
		r, err := s.Log(ctx, rec.ID)
		if err == nil && r == nil {
			err = fmt.Errorf("not found")
		}
		return err
	})
	timeIt("Log by id (not a UUIDv7)", func() error {
		r, err := s.Log(ctx, "req_123456")
		if err == nil && r == nil {
			err = fmt.Errorf("not found")
		}
		return err
	})
	timeIt("SpendSince gateway, 30 d", func() error {
		_, err := s.SpendSince(ctx, "gateway:gw-3", now.Add(-30*24*time.Hour))
		return err
	})
}
