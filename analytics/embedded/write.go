package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
)

// logColumns are the columns of a request_logs row in the order logArgs
// appends their values.
var logColumns = []string{"id", "ts", "tenant_id", "gateway_id", "token_id", "user_id",
	"provider", "model", "route", "status", "error_code", "latency_ms", "ttfb_ms", "tokens_in", "tokens_out",
	"cached_tokens", "cost_usd", "cache", "attempts", "rule_hits", "metadata", "trace_id", "client_ip", "user_agent",
	"request_body", "response_body", "flags", "cache_saved_usd", "batch_id", "operation",
	"cache_write_tokens", "cache_write_1h_tokens", "reasoning_tokens", "error_message",
	"trace_root", "root_start_us", "root_duration_us", "span_count", "spans"}

// rowsPerInsert is the most request_logs rows one INSERT statement
// carries. One statement of many rows costs SQLite and database/sql their
// per-statement work (argument conversion, locking, reset, the VDBE's
// start and halt) once instead of once per row; 32 rows are 1,248 bound
// values, far below SQLite's limit of 32,766 (docs/performance.md, "Embedded
// writer, third pass", has the measurements behind the size). A power of
// two: 1 << rowsPerInsertLog2.
const (
	rowsPerInsertLog2 = 5
	rowsPerInsert     = 1 << rowsPerInsertLog2
)

// insertStatements are the statements of Store.inserts: request_logs
// inserts of rowsPerInsert rows, then of half as many down to one (a
// batch's remainder goes as at most one of each), then the guardrail
// event insert, the last.
var insertStatements = func() (q [rowsPerInsertLog2 + 2]string) {
	for i := range len(q) - 1 {
		q[i] = insertLogs(rowsPerInsert >> i)
	}
	q[len(q)-1] = insertEvent
	return q
}()

// insertLogs is the INSERT of n request_logs rows. Rows are keyed by
// record id and inserted with OR IGNORE, so that a batch written again
// stores nothing twice.
func insertLogs(n int) string {
	row := "(" + strings.Repeat("?,", len(logColumns)-1) + "?)"
	return "INSERT OR IGNORE INTO request_logs (" + strings.Join(logColumns, ", ") + ") VALUES " +
		strings.Repeat(row+",", n-1) + row
}

const insertEvent = `INSERT OR IGNORE INTO guardrail_events (id, ts, tenant_id, gateway_id, user_id,
	request_id, rule_id, rule_name, kind, action, direction, excerpt, batch_id)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`

// Write stores a batch in one transaction. Rows are keyed by record id and
// event id and inserted with OR IGNORE, so that a batch written again
// stores nothing twice; a record's spans are on its row. The write runs on
// the store's writer thread (writer.go).
func (s *Store) Write(ctx context.Context, b *analytics.Batch) error {
	if b == nil || len(b.Records) == 0 {
		return nil
	}
	return s.wr.do(ctx, func(ctx context.Context) error { return s.write(ctx, b) })
}

// write runs on the writer thread only (it uses s.enc and s.args).
func (s *Store) write(ctx context.Context, b *analytics.Batch) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin batch %s: %w", b.ID, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var stmts [len(insertStatements)]*sql.Stmt
	for i, st := range s.inserts {
		stmts[i] = tx.StmtContext(ctx, st)
	}
	if err := s.insertBatch(ctx, stmts, b); err != nil {
		return fmt.Errorf("insert batch %s of %d records: %w", b.ID, len(b.Records), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit batch %s of %d records: %w", b.ID, len(b.Records), err)
	}
	return nil
}

// insertBatch inserts the rows of b's records rowsPerInsert at a time and
// their guardrail events one by one.
func (s *Store) insertBatch(ctx context.Context, stmts [len(insertStatements)]*sql.Stmt, b *analytics.Batch) error {
	width := len(logColumns)
	args := s.args[:0]
	defer func() {
		clear(args[:cap(args)]) // drop the batch's strings, those of earlier statements too
		s.args = args[:0]
	}()
	for _, rec := range b.Records {
		if rec == nil {
			continue
		}
		if rec.ID == "" || rec.TS.IsZero() {
			return fmt.Errorf("record %q has no id or no time", rec.ID)
		}
		args = s.logArgs(args, b.ID, rec)
		if len(args) == rowsPerInsert*width {
			if err := execRows(ctx, stmts[0], args); err != nil {
				return err
			}
			args = args[:0]
		}
		if err := insertEvents(ctx, stmts[len(stmts)-1], b.ID, rec); err != nil {
			return err
		}
	}
	// The remainder, fewer than rowsPerInsert rows: at most one statement
	// of each smaller size.
	for i, rest := 1, args; len(rest) > 0; i++ {
		if n := (rowsPerInsert >> i) * width; len(rest) >= n {
			if err := execRows(ctx, stmts[i], rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
	}
	return nil
}

// execRows runs an insert of request_logs rows with their values.
func execRows(ctx context.Context, st *sql.Stmt, args []any) error {
	if _, err := st.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("insert %d records from %v: %w", len(args)/len(logColumns), args[0], err)
	}
	return nil
}

// logArgs appends the values of rec's row, in the order of logColumns. Ints
// go as int64, a driver.Value, which database/sql passes on as it is (an
// int takes its reflection-based conversion).
func (s *Store) logArgs(args []any, batch string, rec *analytics.Record) []any {
	root := spanrow.Root(rec.Spans)
	row := spanrow.RowOf(rec, root)
	var hasRoot, rootDur int64
	if root != nil {
		hasRoot, rootDur = 1, int64(spanrow.DurationUS(root.DurationMS))
	}
	return append(args, rec.ID, rec.TS.UnixNano(), rec.TenantID, rec.GatewayID, rec.TokenID, rec.UserID,
		rec.Provider, rec.Model, rec.Route, int64(rec.Status), rec.ErrorCode, rec.LatencyMS, rec.TTFBMS,
		rec.TokensIn, rec.TokensOut, rec.CachedTokens, int64(rec.CostUSD), rec.Cache, int64(rec.Attempts),
		jsonList(rec.RuleHits), jsonMap(rec.Metadata), rec.TraceID, rec.ClientIP, rec.UserAgent,
		rec.RequestBody, rec.ResponseBody, jsonList(rec.Flags), int64(rec.CacheSavedUSD), batch, rec.Operation,
		rec.CacheWriteTokens, rec.CacheWrite1hTokens, rec.ReasoningTokens, rec.ErrorMessage,
		hasRoot, row.RootStart, rootDur, int64(len(rec.Spans)), s.enc.Encode(rec.Spans, row))
}

// insertEvents inserts rec's guardrail events.
func insertEvents(ctx context.Context, st *sql.Stmt, batch string, rec *analytics.Record) error {
	ts := rec.TS.UnixNano()
	for i, ev := range rec.Events {
		// An event keeps its id across retries; one without takes a stable
		// id from its record.
		id := ev.ID
		if id == "" {
			id = rec.ID + "-ev" + strconv.Itoa(i)
		}
		evTS := ts
		if !ev.TS.IsZero() {
			evTS = ev.TS.UnixNano()
		}
		_, err := st.ExecContext(ctx, id, evTS, or(ev.TenantID, rec.TenantID), or(ev.GatewayID, rec.GatewayID),
			rec.UserID, or(ev.RequestID, rec.ID), ev.RuleID, ev.RuleName, ev.Kind, ev.Action, ev.Direction, ev.Excerpt, batch)
		if err != nil {
			return fmt.Errorf("insert guardrail event %s of record %s: %w", id, rec.ID, err)
		}
	}
	return nil
}
