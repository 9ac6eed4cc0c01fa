package otlp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/proxy"
)

// BenchmarkObserve measures what OTLP export costs a request with one
// attempt: building its two spans, and (in the same process, on the
// batch processor's goroutine) encoding and posting them to a receiver
// that discards them. cpu-ns/op is the process's CPU time per request,
// the export included; run it with -cpu 1 to match a gateway on one core.
func BenchmarkObserve(b *testing.B) {
	var spans atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		spans.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	set := metrics.NewSet()
	e, err := New(Config{Endpoint: srv.URL, SamplingRatio: 1, Metrics: set, BatchTimeout: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	rec := &analytics.Record{ID: "01JDXREQUEST0000000000000", TS: start, TenantID: "acme", GatewayID: "gw_1", Provider: "openai",
		Model: "gpt-4o-mini", Status: 200, LatencyMS: 400, TokensIn: 24, TokensOut: 9, Attempts: 1, Cache: "BYPASS",
		Operation: analytics.OpChat, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
		Spans: []analytics.Span{
			{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b8", ParentID: "00f067aa0ba902b7", Name: "upstream openai",
				Start: start, DurationMS: 390, Status: "ok", Attributes: map[string]string{"provider": "openai", "model": "gpt-4o-mini",
					"key_alias": "main", "attempt": "1", "upstream_status": "200"}},
			{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7", Name: "POST chat", Start: start, DurationMS: 400, Status: "ok"},
		}}
	f := &proxy.Finished{Record: rec, Gateway: "acme/prod", RequestModel: "openai/gpt-4o-mini"}
	before := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	// A loop of Observe calls outruns any exporter, and a dropped span
	// would not be paid for: every 256 requests (512 spans, one batch)
	// the loop waits for the export, as a gateway's queue keeps up.
	for i := 0; b.Loop(); i++ {
		e.Observe(f)
		if i%256 == 255 {
			if err := e.tp.ForceFlush(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := e.Shutdown(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(set.GetOrCreateCounter("sluice_otlp_dropped_spans_total").Get())/float64(b.N), "dropped/op")
	if spans.Load() == 0 {
		b.Fatal("nothing was exported")
	}
}

// cpuTime is the process's user and system CPU time, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
