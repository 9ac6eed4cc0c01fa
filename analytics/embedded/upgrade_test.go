package embedded

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
)

// TestUpgradeFromVersion1: a file of schema version 1 (before the record's
// operation) opens upgraded; its rows read with an empty operation, and new
// rows keep theirs.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := t.Context()
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := openUpgraded(t, 1, append(schema, "PRAGMA user_version = 1"), `INSERT INTO request_logs (id, ts, tenant_id, gateway_id, token_id, user_id,
		provider, model, route, status, error_code, latency_ms, ttfb_ms, tokens_in, tokens_out,
		cached_tokens, cost_usd, cache, attempts, rule_hits, metadata, trace_id, client_ip, user_agent,
		request_body, response_body, flags, cache_saved_usd, batch_id)
		VALUES ('old', ?, 'acme', 'gw', 'tok', '', 'openai', 'gpt-4o', 'chat/completions', 200, '', 1, 1, 1, 1,
		0, 0, 'MISS', 1, '[]', '{}', '', '', '', '', '', '[]', 0, 'b0')`, ts,
		&analytics.Record{ID: "new", TS: ts.Add(time.Second), TenantID: "acme", GatewayID: "gw", Operation: "embeddings"})
	for id, want := range map[string]string{"old": "", "new": "embeddings"} {
		got, err := s.Log(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Operation != want {
			t.Errorf("record %s: operation %q, want %q", id, got.Operation, want)
		}
	}
	logs, _, err := s.Logs(ctx, analytics.LogFilter{Query: analytics.Query{TenantID: "acme",
		From: ts.Add(-time.Hour), To: ts.Add(time.Hour)}, Operation: "embeddings"})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].ID != "new" {
		t.Errorf("operation filter: got %d logs, want only the new one", len(logs))
	}
}

// TestUpgradeFromVersion2: a file of schema version 2 (before cache writes
// and reasoning tokens) opens upgraded; its rows read 0 for them, and new
// rows keep theirs.
func TestUpgradeFromVersion2(t *testing.T) {
	ctx := t.Context()
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stmts := append(append(append([]string{}, schema...), upgrades[0]...), "PRAGMA user_version = 2")
	s := openUpgraded(t, 2, stmts, insertV2+`('old', ?, 'acme', 'gw', 'tok', '', 'anthropic', 'claude-sonnet-4-5', 'messages', 200, '', 1, 1, 900, 10,
		100, 7, 'MISS', 1, '[]', '{}', '', '', '', '', '', '[]', 0, 'b0', 'messages')`, ts,
		&analytics.Record{ID: "new", TS: ts.Add(time.Second), TenantID: "acme", GatewayID: "gw", TokensIn: 5000,
			CachedTokens: 1000, CacheWriteTokens: 3000, CacheWrite1hTokens: 1000, TokensOut: 400, ReasoningTokens: 300})
	for id, want := range map[string][3]int64{"old": {0, 0, 0}, "new": {3000, 1000, 300}} {
		got, err := s.Log(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if g := [3]int64{got.CacheWriteTokens, got.CacheWrite1hTokens, got.ReasoningTokens}; g != want {
			t.Errorf("record %s: cache writes, 1h writes, reasoning %v, want %v", id, g, want)
		}
	}
}

// insertV2 inserts request_logs rows of schema versions 2 to 5.
const insertV2 = `INSERT INTO request_logs (id, ts, tenant_id, gateway_id, token_id, user_id,
	provider, model, route, status, error_code, latency_ms, ttfb_ms, tokens_in, tokens_out,
	cached_tokens, cost_usd, cache, attempts, rule_hits, metadata, trace_id, client_ip, user_agent,
	request_body, response_body, flags, cache_saved_usd, batch_id, operation) VALUES `

// openUpgraded makes a file of schema version with stmts and the row
// insert (ts its one argument), opens it (which upgrades it) until the
// test ends, and writes rec.
func openUpgraded(t *testing.T, version int, stmts []string, insert string, ts time.Time, rec *analytics.Record) *Store {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "analytics.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, insert, ts.UnixNano()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version %d file: %v", version, err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Write(ctx, &analytics.Batch{ID: "b1", Records: []*analytics.Record{rec}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUpgradeFromVersion5: a file of schema version 5 (one trace_spans row
// per span) opens upgraded with its spans on their requests' rows: the
// trace, its listing and a record written after read as before, and
// trace_spans is gone.
func TestUpgradeFromVersion5(t *testing.T) {
	ctx := t.Context()
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ns := strconv.FormatInt(ts.UnixNano(), 10)
	childNS := strconv.FormatInt(ts.Add(1500*time.Microsecond).UnixNano(), 10)
	stmts := append([]string{}, schema...)
	for _, u := range upgrades[:4] {
		stmts = append(stmts, u...)
	}
	stmts = append(stmts, "PRAGMA user_version = 5",
		`INSERT INTO trace_spans VALUES ('tr1', 'c1', 'r0', 'upstream openai', `+childNS+`, 10.25, 'ok',
			'{"attempt":"1","provider":"openai","zone":"eu"}', 'acme', 'gw', 'old', `+ns+`, 'b0')`,
		`INSERT INTO trace_spans VALUES ('tr1', 'r0', '', 'POST chat/completions', `+ns+`, 12.5, 'ok',
			'{"request_id":"old","route":"chat/completions","status":"200"}', 'acme', 'gw', 'old', `+ns+`, 'b0')`)
	newTS := ts.Add(time.Minute)
	s := openUpgraded(t, 5, stmts, insertV2+`('old', ?, 'acme', 'gw', 'tok', '', 'openai', 'gpt-4o', 'chat/completions', 200, '', 13, 1, 9, 1,
		0, 0, 'MISS', 1, '[]', '{}', 'tr1', '', '', '', '', '[]', 0, 'b0', 'chat')`, ts,
		&analytics.Record{ID: "new", TS: newTS, TenantID: "acme", GatewayID: "gw", Status: 200, TraceID: "tr2",
			Spans: []analytics.Span{{TraceID: "tr2", SpanID: "n0", Name: "POST chat/completions", Start: newTS, DurationMS: 3}}})
	root := &analytics.Span{TraceID: "tr1", SpanID: "r0", Name: "POST chat/completions", Start: ts, DurationMS: 12.5, Status: "ok",
		Attributes: map[string]string{"request_id": "old", "route": "chat/completions", "status": "200"}}
	root.Children = []*analytics.Span{{TraceID: "tr1", SpanID: "c1", ParentID: "r0", Name: "upstream openai",
		Start: ts.Add(1500 * time.Microsecond), DurationMS: 10.25, Status: "ok",
		Attributes: map[string]string{"attempt": "1", "provider": "openai", "zone": "eu"}}}
	want := &analytics.Trace{ID: "tr1", TenantID: "acme", GatewayID: "gw", RequestID: "old", Start: ts, DurationMS: 12.5, Root: root}
	got, err := s.Trace(ctx, "tr1", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Trace of the upgraded file (-want +got):\n%s", d)
	}
	list, _, err := s.Traces(ctx, analytics.Query{TenantID: "acme", From: ts, To: ts.Add(time.Hour)}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	wantList := []analytics.TraceSummary{
		{ID: "tr2", RequestID: "new", Start: newTS, DurationMS: 3, Status: 200, Spans: 1},
		{ID: "tr1", RequestID: "old", Start: ts, DurationMS: 12.5, Status: 200, Model: "gpt-4o", Spans: 2},
	}
	if d := cmp.Diff(wantList, list); d != "" {
		t.Errorf("Traces of the upgraded file (-want +got):\n%s", d)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'trace_spans'").Scan(&n); err != nil || n != 0 {
		t.Errorf("trace_spans after the upgrade: %d tables, %v; want none", n, err)
	}
}
