package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
	"github.com/sluicehq/sluice/analytics/embedded"
)

func open(tb testing.TB) *embedded.Store {
	tb.Helper()
	s, err := embedded.Open(context.Background(), filepath.Join(tb.TempDir(), "data", "analytics.db"))
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	analyticstest.Run(t, func(t *testing.T) analytics.Backend { return open(t) })
}

func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "analytics.db")
	ctx := t.Context()
	s, err := embedded.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	recs := analyticstest.Generate(3, 10)
	if err := s.Write(ctx, &analytics.Batch{ID: "b", Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("file mode: got %v, want 0600", got)
	}
	// Reopening keeps the schema and the rows.
	s, err = embedded.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if n, err := s.Count(ctx); err != nil || n != 10 {
		t.Errorf("Count after reopening: got %d, %v; want 10", n, err)
	}
}

// TestConcurrency writes and reads at once (run it with -race).
func TestConcurrency(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	const writers, perWriter = 4, 300
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, writers+8) // one error per goroutine at most
	for w := range writers {
		recs := analyticstest.Generate(uint64(100+w), perWriter)
		wg.Go(func() {
			for i, b := range analyticstest.Batches(recs, 50, fmt.Sprintf("w%d", w)) {
				if err := s.Write(ctx, b); err != nil {
					errs <- err
					return
				}
				if i%2 == 0 { // a retried batch
					if err := s.Write(ctx, b); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	var readers sync.WaitGroup
	q := analytics.Query{From: analyticstest.Base, To: analyticstest.Base.Add(72 * time.Hour)}
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, err := s.Stats(ctx, q)
				if err == nil {
					var sp *analytics.Spend
					if sp, err = s.Spend(ctx, q); err == nil && sp.TotalUSD < 0 {
						err = fmt.Errorf("negative spend %v", sp.TotalUSD)
					}
				}
				if err == nil {
					_, _, err = s.Logs(ctx, analytics.LogFilter{Query: q, Limit: 20})
				}
				if err == nil && st.Requests > writers*perWriter {
					err = fmt.Errorf("%d requests, more than written", st.Requests)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, err := s.Count(ctx); err != nil || n != writers*perWriter {
		t.Errorf("Count: got %d, %v; want %d", n, err, writers*perWriter)
	}
}

// BenchmarkWrite measures writes of batches of 250, 1,000 and 5,000
// records (with their spans and events; the pipeline's batches at 500
// requests/s, and its largest) in records per second, and the process's CPU
// time (user and system, every thread: the writer's included) per record
// while Write runs, the figure that stays put on a loaded machine.
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{250, 1000, 5000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			benchWrite(b, size, func(i int) []*analytics.Record { return analyticstest.Generate(uint64(1000+i), size) })
		})
	}
}

// benchWrite writes b.N batches of size records, recs(i) the i-th, to a
// fresh store, and reports records per second and the process's CPU time
// per record while Write runs.
func benchWrite(b *testing.B, size int, recs func(i int) []*analytics.Record) {
	s := open(b)
	ctx := context.Background()
	b.ReportAllocs()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch := &analytics.Batch{ID: fmt.Sprintf("bench-%d", i), Records: recs(i)}
		b.StartTimer()
		before := cpuTime(b)
		if err := s.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - before
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*size), "cpu-µs/record")
}

// BenchmarkWriteGatewayRecords writes records shaped like those of
// `sluice bench` (one tenant and gateway, a token without a user, a root
// and one attempt span, no rule hits, the bench's 185-byte request body
// and a chat answer) in batches of 1,000, and reports the process's CPU
// time per record while Write runs: the writer's share of the embedded
// gateway's CPU per request, measurable where the gateway's own figure
// is not (docs/performance.md).
func BenchmarkWriteGatewayRecords(b *testing.B) {
	reqBody := `{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"` + strings.Repeat("x", 90) + `"}],"max_tokens":16}`
	benchWrite(b, 1000, func(i int) []*analytics.Record {
		recs := analyticstest.Generate(uint64(1000+i), 1000)
		for _, r := range recs {
			r.TenantID, r.GatewayID, r.UserID, r.TokenID = "bench", "gw-bench", "", "tok-bench"
			r.Status, r.ErrorCode, r.ErrorMessage, r.Attempts, r.Cache = 200, "", "", 1, "MISS"
			r.RuleHits, r.Events, r.Metadata, r.Flags = nil, nil, nil, nil
			r.RequestBody = reqBody
			r.ResponseBody = `{"id":"chatcmpl-` + r.ID + `","object":"chat.completion","model":"gpt-4o-mini",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":24,"completion_tokens":3,"total_tokens":27}}`
			if n := len(r.Spans); n > 2 {
				r.Spans = r.Spans[n-2:] // the last attempt and the root
			}
		}
		return recs
	})
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestInvalidUTF8RecordIsStored (checklist 6): the record of a request the
// proxy refused for invalid UTF-8 is stored and read back as written.
func TestInvalidUTF8RecordIsStored(t *testing.T) {
	s := open(t)
	recs := analyticstest.Generate(6, 1)
	r := recs[0]
	body := "{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe \\ud800\"}]}"
	r.Status, r.ErrorCode, r.RequestBody, r.UserAgent = 400, "invalid_request", body, "agent\xff/1.0"
	if err := s.Write(t.Context(), &analytics.Batch{ID: "utf8", Records: recs}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := s.Log(t.Context(), r.ID)
	if err != nil || got == nil {
		t.Fatalf("Log(%s): %v, %v; want the row", r.ID, got, err)
	}
	if got.Status != 400 || got.RequestBody != body || got.UserAgent != r.UserAgent {
		t.Errorf("row: status %d body %q agent %q; want the record as written", got.Status, got.RequestBody, got.UserAgent)
	}
}

// TestWriteBatchSizes: batches of every size around the rows of one INSERT
// (a full statement, the remainder's smaller ones, a record twice in one
// batch) store each record once, with its spans.
func TestWriteBatchSizes(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	recs := analyticstest.Generate(11, 200)
	sizes := []int{1, 31, 32, 33, 63, 40}
	var total int64
	for i, n := range sizes {
		batch := recs[:n]
		recs = recs[n:]
		if i == len(sizes)-1 {
			batch = append(batch[:n:n], batch[0], batch[n-1]) // the same record twice in one batch
		}
		if err := s.Write(ctx, &analytics.Batch{ID: fmt.Sprintf("size-%d", n), Records: batch}); err != nil {
			t.Fatalf("batch of %d: %v", len(batch), err)
		}
		total += int64(n)
		if got, err := s.Count(ctx); err != nil || got != total {
			t.Errorf("after a batch of %d: Count %d, %v; want %d", len(batch), got, err, total)
		}
		for _, r := range batch {
			if r.TraceID == "" {
				continue
			}
			tr, err := s.Trace(ctx, r.TraceID, r.TenantID)
			if err != nil || tr == nil || tr.RequestID != r.ID {
				t.Errorf("Trace(%s) of record %s: %+v, %v", r.TraceID, r.ID, tr, err)
			}
		}
	}
}
