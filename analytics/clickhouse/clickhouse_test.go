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
	"github.com/sluicehq/sluice/analytics/clickhouse/migrations"
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
	want := []string{"0001_request_logs", "0002_trace_spans", "0003_guardrail_events", "0004_request_spans", "0005_request_operation", "0006_request_cache_writes",
		"0007_request_error_message"}
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
	if d := cmp.Diff([]uint32{1, 2, 3, 4, 5, 6, 7}, versions); d != "" {
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
		table string // what to count, from which table
		dst   *uint64
	}{{"count() FROM request_logs", &c.logs}, {"toUInt64(sum(span_count)) FROM request_logs", &c.spans}, {"count() FROM guardrail_events", &c.events}} {
		if err := s.QueryRow(t.Context(), "SELECT "+q.table).Scan(q.dst); err != nil {
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
	// partitions, or the logs but not the guardrail events). A log and its
	// spans are one row: they land together.
	var part []*analytics.Record
	for i, r := range recs {
		if i%3 == 0 {
			cp := *r
			if i%2 == 0 {
				cp.Events = nil
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

// TestLargeBatch writes a batch big enough to go as concurrent INSERTs of
// several blocks each (the writer's buffers reused from block to block):
// every row lands once, whole, and each INSERT makes one part.
func TestLargeBatch(t *testing.T) {
	s := open(t)
	recs := fresh(60_000, "large")
	if err := s.Write(t.Context(), &analytics.Batch{ID: "b-large", Records: slices.Clone(recs)}); err != nil {
		t.Fatal(err)
	}
	if got, want := countRows(t, s), expected(recs); got != want {
		t.Errorf("rows: got %+v, want %+v", got, want)
	}
	var inserted uint64
	if err := s.QueryRow(t.Context(), `SELECT count() FROM system.parts
WHERE database = currentDatabase() AND table = 'request_logs' AND level = 0`).Scan(&inserted); err != nil {
		t.Fatal(err)
	}
	if inserted != 2 {
		t.Errorf("request_logs parts made by the write: %d, want 2 (one per INSERT, whatever its blocks)", inserted)
	}
	// Rows from every block of both INSERTs read back as written.
	for _, i := range []int{0, 8191, 8192, 20_000, 29_999, 30_000, 45_000, 59_999} {
		r := recs[i]
		got, err := s.Log(t.Context(), r.ID)
		if err != nil || got == nil {
			t.Fatalf("Log(%s): %v, %v", r.ID, got, err)
		}
		if got.TenantID != r.TenantID || got.RequestBody != r.RequestBody || got.Model != r.Model ||
			len(got.Metadata) != len(r.Metadata) || !got.TS.Equal(r.TS) {
			t.Errorf("record %d read back as %+v, want %+v", i, got, r)
		}
		for k, v := range r.Metadata {
			if got.Metadata[k] != v {
				t.Errorf("record %d: metadata %s = %q, want %q", i, k, got.Metadata[k], v)
			}
		}
		if r.TraceID == "" {
			continue
		}
		tr, err := s.Trace(t.Context(), r.TraceID, r.TenantID)
		if err != nil || tr == nil {
			t.Fatalf("Trace(%s): %v, %v", r.TraceID, tr, err)
		}
		spans := map[string]*analytics.Span{}
		var walk func(sp *analytics.Span)
		walk = func(sp *analytics.Span) {
			spans[sp.SpanID] = sp
			for _, c := range sp.Children {
				walk(c)
			}
		}
		walk(tr.Root)
		if len(spans) != len(r.Spans) {
			t.Errorf("record %d: %d spans read back, want %d", i, len(spans), len(r.Spans))
		}
		for _, want := range r.Spans {
			got := spans[want.SpanID]
			wantAttrs := want.AttributeMap() // attempt spans carry theirs in Fixed; a store gives them back in the map
			if got == nil || got.Name != want.Name || !got.Start.Equal(want.Start) || len(got.Attributes) != len(wantAttrs) ||
				got.Attributes["model"] != wantAttrs["model"] || got.Attributes["request_id"] != wantAttrs["request_id"] {
				t.Errorf("record %d: span %s read back as %+v, want %+v", i, want.SpanID, got, want)
			}
		}
	}
}

// TestFailedInsertStoresNothing: an INSERT that fails after some of its
// blocks went to the server stores none of them. (With the driver of
// today a broken block also spoils the connection, so this holds even if
// the writer ended the INSERT with Close; the writer aborts it, which does
// not depend on that.)
func TestFailedInsertStoresNothing(t *testing.T) {
	s := open(t)
	recs := fresh(20_000, "failed")                       // three blocks
	err := s.InsertLogsFailingAt(t.Context(), recs, 8192) // the second block
	if err == nil {
		t.Fatal("the insert did not fail")
	}
	if got := countRows(t, s); got.logs != 0 {
		t.Errorf("rows stored by the failed insert: %+v, want none", got)
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

// TestMigrateKeepsEarlierRows upgrades a database written before the
// spans moved onto the request row (schema 3): its logs stay readable and
// new records carry their traces. It then repeats 0004 as if the process
// had stopped before recording it: Migrate takes the existing columns as
// applied.
func TestMigrateKeepsEarlierRows(t *testing.T) {
	ctx := t.Context()
	s, err := clickhouse.Open(ctx, clickhouse.Config{URL: testenv.ClickHouseDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:3] {
		for _, stmt := range m.Statements {
			if err := s.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
		}
	}
	old := fresh(1, "old")[0]
	err = s.Exec(ctx, `INSERT INTO request_logs (tenant_id, ts, ts_ms, id, gateway_id, status, model, trace_id)
SELECT ?, toDateTime(?), toUInt16(?), ?, ?, toInt32(200), 'gpt-4o', ?`,
		old.TenantID, old.TS.Unix(), old.TS.Nanosecond()/1e6, old.ID, old.GatewayID, old.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "CREATE TABLE schema_migrations (version UInt32, applied DateTime) ENGINE = ReplacingMergeTree ORDER BY version"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "INSERT INTO schema_migrations (version, applied) SELECT arrayJoin([1, 2, 3]), now()"); err != nil {
		t.Fatal(err)
	}
	applied, err := s.Migrate(ctx)
	if err != nil || len(applied) != 4 || applied[0] != "0004_request_spans" || applied[1] != "0005_request_operation" ||
		applied[2] != "0006_request_cache_writes" || applied[3] != "0007_request_error_message" {
		t.Fatalf("Migrate: applied %v, %v; want 0004_request_spans, 0005_request_operation, 0006_request_cache_writes and 0007_request_error_message", applied, err)
	}
	got, err := s.Log(ctx, old.ID)
	if err != nil || got == nil || got.Model != "gpt-4o" || got.Operation != "" || got.CacheWriteTokens != 0 || got.ReasoningTokens != 0 || got.ErrorMessage != "" {
		t.Fatalf("Log of a row from before 0004 (and 0005: no operation, 0006: no cache writes or reasoning, 0007: no error message): %+v, %v", got, err)
	}
	q := analytics.Query{TenantID: old.TenantID, GatewayID: old.GatewayID, From: old.TS.Add(-time.Hour), To: old.TS.Add(time.Hour)}
	if trs, _, err := s.Traces(ctx, q, 10, ""); err != nil || len(trs) != 0 {
		t.Errorf("Traces over a row from before 0004: %v, %v; want none (its spans were in trace_spans)", trs, err)
	}
	rec := fresh(1, "new")[0]
	rec.TenantID, rec.GatewayID = old.TenantID, old.GatewayID
	if err := s.Write(ctx, &analytics.Batch{ID: "after-0004", Records: []*analytics.Record{rec}}); err != nil {
		t.Fatal(err)
	}
	if tr, err := s.Trace(ctx, rec.TraceID, ""); err != nil || tr == nil || tr.RequestID != rec.ID {
		t.Errorf("Trace of a record written after 0004: %+v, %v", tr, err)
	}

	// 0004 ran but was not recorded.
	if err := s.Exec(ctx, "ALTER TABLE schema_migrations DELETE WHERE version = 4"); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		var n uint64
		if err := s.QueryRow(ctx, "SELECT count() FROM schema_migrations WHERE version = 4").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	applied, err = s.Migrate(ctx)
	if err != nil || len(applied) != 1 {
		t.Fatalf("Migrate after an unrecorded 0004: applied %v, %v; want it taken as applied", applied, err)
	}
	if again, err := s.Migrate(ctx); err != nil || len(again) != 0 {
		t.Errorf("Migrate again: %v, %v; want nothing", again, err)
	}
}

// TestInvalidUTF8RecordIsStored (checklist 6): the proxy refuses a body
// with invalid UTF-8 or a lone surrogate (400) and still logs the request,
// with the body as sent when the gateway logs bodies; the row is written
// and read back.
func TestInvalidUTF8RecordIsStored(t *testing.T) {
	s := open(t)
	recs := fresh(2, "utf8")
	bodies := []string{
		"{\"model\":\"openai/gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xc0\xaf\"}]}",
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"\ud800"}]}`,
	}
	for i, r := range recs {
		r.Status, r.ErrorCode, r.RequestBody, r.UserAgent = 400, "invalid_request", bodies[i], "agent\xff/1.0"
		r.Metadata = map[string]string{"team": "se\xffarch"}
	}
	if err := s.Write(t.Context(), &analytics.Batch{ID: "utf8", Records: recs}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	for i, r := range recs {
		got, err := s.Log(t.Context(), r.ID)
		if err != nil || got == nil {
			t.Fatalf("Log(%s): %v, %v; want the row", r.ID, got, err)
		}
		if got.Status != 400 || got.ErrorCode != "invalid_request" || got.RequestBody != bodies[i] || got.UserAgent != r.UserAgent ||
			got.Metadata["team"] != r.Metadata["team"] {
			t.Errorf("row %d: status %d code %q body %q agent %q metadata %q; want the record as written",
				i, got.Status, got.ErrorCode, got.RequestBody, got.UserAgent, got.Metadata)
		}
	}
}
