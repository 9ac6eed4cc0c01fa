package clickhouse_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
	"github.com/sluicehq/sluice/analytics/clickhouse"
	"github.com/sluicehq/sluice/internal/testenv"
)

// open returns a migrated store on a fresh database, closed at cleanup.
func open(tb testing.TB) *clickhouse.Store {
	tb.Helper()
	u := testenv.ClickHouseDatabase(tb)
	s, err := clickhouse.Open(context.Background(), clickhouse.Config{URL: u})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	analyticstest.Run(t, func(t *testing.T) analytics.Backend { return open(t) })
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg clickhouse.Config
		ok  bool
	}{
		{clickhouse.Config{URL: "clickhouse://127.0.0.1:9000/default"}, true},
		{clickhouse.Config{URL: "clickhouse://u:p@h:9000/db", MaxOpenConns: 4, DialTimeout: time.Second}, true},
		{clickhouse.Config{}, false},
		{clickhouse.Config{URL: "http://127.0.0.1:8123/"}, false},
		{clickhouse.Config{URL: "clickhouse://h:9000/db", MaxOpenConns: -1}, false},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("Validate(%+v): got %v, want ok=%v", c.cfg, err, c.ok)
		}
	}
}

func TestMigrate(t *testing.T) {
	ctx := t.Context()
	// A database that does not exist yet: Migrate creates it.
	base := testenv.ClickHouseDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path += "_new"
	s, err := clickhouse.Open(ctx, clickhouse.Config{URL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Cleanup(func() { _ = dropDatabase(s, u.Path[1:]) })
	applied, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	want := []string{"0001_request_logs", "0002_trace_spans", "0003_guardrail_events"}
	if d := cmp.Diff(want, applied); d != "" {
		t.Errorf("first Migrate applied (-want +got):\n%s", d)
	}
	for range 2 {
		again, err := s.Migrate(ctx)
		if err != nil || len(again) != 0 {
			t.Errorf("Migrate again: applied %v, %v; want nothing", again, err)
		}
	}
	var versions []uint32
	if err := s.QueryRow(ctx, "SELECT groupArray(version) FROM (SELECT version FROM schema_migrations ORDER BY version)").Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{1, 2, 3}, versions); d != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", d)
	}
}

func dropDatabase(s *clickhouse.Store, db string) error {
	return s.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`")
}

// fresh returns n generated records restamped into the 100 ms from now on
// (after the store opened, so a first write checks nothing), with ids unique
// to tag.
func fresh(n int, tag string) []*analytics.Record {
	recs := analyticstest.Generate(42, n)
	start := time.Now().UTC().Truncate(time.Millisecond).Add(time.Millisecond)
	restamp := func(t time.Time) time.Time {
		return start.Add(t.Sub(analyticstest.Base) / (72 * 36_000)).Truncate(time.Microsecond) // 72 h → 100 ms
	}
	for _, r := range recs {
		r.ID += "-" + tag
		if r.TraceID != "" {
			r.TraceID += "-" + tag
		}
		r.TS = restamp(r.TS).Truncate(time.Millisecond)
		for j := range r.Spans {
			r.Spans[j].Start = restamp(r.Spans[j].Start)
			r.Spans[j].TraceID = r.TraceID
		}
		for j := range r.Events {
			r.Events[j].TS, r.Events[j].RequestID = r.TS, r.ID
			r.Events[j].ID = fmt.Sprintf("%s-ev%d", r.ID, j)
		}
	}
	return recs
}

type counts struct{ logs, spans, events uint64 }

func countRows(t *testing.T, s *clickhouse.Store) counts {
	t.Helper()
	var c counts
	for _, q := range []struct {
		table string
		dst   *uint64
	}{{"request_logs", &c.logs}, {"trace_spans", &c.spans}, {"guardrail_events", &c.events}} {
		if err := s.QueryRow(t.Context(), "SELECT count() FROM "+q.table).Scan(q.dst); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func expected(recs []*analytics.Record) counts {
	var c counts
	for _, r := range recs {
		c.logs++
		c.spans += uint64(len(r.Spans))
		c.events += uint64(len(r.Events))
	}
	return c
}

func TestRetriedBatchStoresOnce(t *testing.T) {
	s := open(t)
	recs := fresh(600, "retry")
	b := &analytics.Batch{ID: "b-retry", Records: recs}
	for range 3 {
		if err := s.Write(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := countRows(t, s), expected(recs); got != want {
		t.Errorf("rows after writing a batch 3 times: got %+v, want %+v", got, want)
	}
}

func TestPartialBatchRetry(t *testing.T) {
	s := open(t)
	recs := fresh(500, "partial")
	// The first attempt stored only some rows (e.g. the parts of some
	// partitions, or the logs but not the spans).
	var part []*analytics.Record
	for i, r := range recs {
		if i%3 == 0 {
			cp := *r
			if i%2 == 0 {
				cp.Spans, cp.Events = nil, nil
			}
			part = append(part, &cp)
		}
	}
	if err := s.Write(t.Context(), &analytics.Batch{ID: "b-partial", Records: part}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), &analytics.Batch{ID: "b-partial", Records: recs}); err != nil {
		t.Fatal(err)
	}
	want := expected(recs)
	if got := countRows(t, s); got != want {
		t.Errorf("rows after the retry: got %+v, want %+v", got, want)
	}

	// A store opened later (after a restart) sees the same batch replayed
	// from a spill file: its records predate the store, so it checks too.
	time.Sleep(time.Until(recs[0].TS.Add(300 * time.Millisecond)))
	s2, err := clickhouse.Open(t.Context(), clickhouse.Config{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Write(t.Context(), &analytics.Batch{ID: "b-partial", Records: recs}); err != nil {
		t.Fatal(err)
	}
	if got := countRows(t, s); got != want {
		t.Errorf("rows after a replay by a new store: got %+v, want %+v", got, want)
	}
}

func TestDuplicateRecordInBatch(t *testing.T) {
	s := open(t)
	recs := fresh(10, "dup")
	b := &analytics.Batch{ID: "b-dup", Records: append(slices.Clone(recs), recs[3], recs[7])}
	if err := s.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if got, want := countRows(t, s), expected(recs); got != want {
		t.Errorf("rows: got %+v, want %+v", got, want)
	}
}

// TestRetainWithoutRowsStartsNoMutation: a mutation rewrites the parts it
// touches, so Retain and PurgeTenant start none when nothing matches.
func TestRetainWithoutRowsStartsNoMutation(t *testing.T) {
	s := open(t)
	recs := fresh(50, "retain")
	if err := s.Write(t.Context(), &analytics.Batch{ID: "b", Records: recs}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.Retain(ctx, recs[0].TenantID, recs[0].TS.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.PurgeTenant(ctx, "t-none"); err != nil {
		t.Fatal(err)
	}
	var n uint64
	if err := s.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = currentDatabase()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("mutations: got %d, want 0", n)
	}
	if got, want := countRows(t, s), expected(recs); got != want {
		t.Errorf("rows: got %+v, want %+v", got, want)
	}
	if err := s.Retain(ctx, "", time.Now()); err == nil {
		t.Error("Retain without a tenant: no error")
	}
	if err := s.PurgeTenant(ctx, ""); err == nil {
		t.Error("PurgeTenant without a tenant: no error")
	}
}

// TestLogByUUIDv7: a request id that is a UUIDv7 narrows the search to the
// partitions around its time; a log whose ts is far from it is still found.
func TestLogByUUIDv7(t *testing.T) {
	s := open(t)
	recs := fresh(3, "uuid")
	near, far := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	recs[0].ID, recs[1].ID = near, far
	recs[1].TS = recs[1].TS.Add(-72 * time.Hour)
	if err := s.Write(t.Context(), &analytics.Batch{ID: "b", Records: recs}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{near, far, recs[2].ID} {
		got, err := s.Log(t.Context(), id)
		if err != nil || got == nil || got.ID != id {
			t.Errorf("Log(%s): got %v, %v", id, got, err)
		}
	}
	if got, err := s.Log(t.Context(), uuid.Must(uuid.NewV7()).String()); err != nil || got != nil {
		t.Errorf("Log(unknown UUIDv7): got %v, %v; want nil, nil", got, err)
	}
}
