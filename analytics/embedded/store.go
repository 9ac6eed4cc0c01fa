// Package embedded is the zero-setup analytics backend: a SQLite file in the
// data dir holding request logs, trace spans and guardrail events, and the
// queries of every figure over them. It serves a single node at modest
// volume; the ClickHouse backend serves the rest.
package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
	"github.com/sluicehq/sluice/internal/sqlitebackup"
)

// schemaVersion is the PRAGMA user_version of the schema below with every
// upgrade applied.
const schemaVersion = 6

// upgrades[v] brings a file of schema version v+1 to v+2: a fresh file
// gets schema (version 1), then every upgrade in turn.
var upgrades = [][]string{
	// 2: the request's front door (CONTRACT §12); '' on older rows.
	{`ALTER TABLE request_logs ADD COLUMN operation TEXT NOT NULL DEFAULT ''`},
	// 3: cache writes and reasoning tokens (CONTRACT §14); 0 on older rows.
	{`ALTER TABLE request_logs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0`},
	// 4: the batch id indexes go (no query reads by batch; each cost a
	// B-tree insert per row); a fresh file never had them.
	{`DROP INDEX IF EXISTS request_logs_batch`, `DROP INDEX IF EXISTS trace_spans_batch`,
		`DROP INDEX IF EXISTS guardrail_events_batch`},
	// 5: the error message the client got; '' on older rows.
	{`ALTER TABLE request_logs ADD COLUMN error_message TEXT NOT NULL DEFAULT ''`},
	// 6: a request's spans on its row in the compact encoding of package
	// spanrow (as ClickHouse stores them), with the root's start and
	// duration and the span count for the trace listing: one row and its
	// indexes per request instead of one per span (docs/performance.md).
	// moveSpans carries the rows of trace_spans over, then the table goes.
	{`ALTER TABLE request_logs ADD COLUMN trace_root INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN root_start_us INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN root_duration_us INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN span_count INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE request_logs ADD COLUMN spans TEXT NOT NULL DEFAULT ''`,
		// The user index leaves out requests made with tokens of no user:
		// no query reads user_id = '' (scopeOf and SpendSince say
		// user_id != '' for the planner), and they cost a B-tree insert.
		`DROP INDEX request_logs_user_ts`,
		`CREATE INDEX request_logs_user_ts ON request_logs (user_id, ts) WHERE user_id != ''`},
}

// upgradeCode[v] runs after the statements of the upgrade to version v, in
// the same transaction: what SQL alone does not do.
var upgradeCode = map[int]func(context.Context, *sql.Tx) error{6: moveSpans}

// schema creates the tables and the indexes the queries use. Times are
// integer Unix nanoseconds (UTC); amounts integer nano-dollars; rule hits,
// flags, metadata and attributes JSON. Spans and events carry the tenant,
// gateway, user and time of their record, so that scopes and retention
// apply to them without a join.
var schema = []string{
	`CREATE TABLE request_logs (
		id TEXT PRIMARY KEY,
		ts INTEGER NOT NULL,
		tenant_id TEXT NOT NULL,
		gateway_id TEXT NOT NULL,
		token_id TEXT NOT NULL,
		user_id TEXT NOT NULL,
		provider TEXT NOT NULL,
		model TEXT NOT NULL,
		route TEXT NOT NULL,
		status INTEGER NOT NULL,
		error_code TEXT NOT NULL,
		latency_ms INTEGER NOT NULL,
		ttfb_ms INTEGER NOT NULL,
		tokens_in INTEGER NOT NULL,
		tokens_out INTEGER NOT NULL,
		cached_tokens INTEGER NOT NULL,
		cost_usd INTEGER NOT NULL,
		cache TEXT NOT NULL,
		attempts INTEGER NOT NULL,
		rule_hits TEXT NOT NULL,
		metadata TEXT NOT NULL,
		trace_id TEXT NOT NULL,
		client_ip TEXT NOT NULL,
		user_agent TEXT NOT NULL,
		request_body TEXT NOT NULL,
		response_body TEXT NOT NULL,
		flags TEXT NOT NULL,
		cache_saved_usd INTEGER NOT NULL,
		batch_id TEXT NOT NULL
	)`,
	`CREATE INDEX request_logs_ts ON request_logs (ts)`,
	`CREATE INDEX request_logs_tenant_ts ON request_logs (tenant_id, ts)`,
	`CREATE INDEX request_logs_gateway_ts ON request_logs (gateway_id, ts)`,
	`CREATE INDEX request_logs_user_ts ON request_logs (user_id, ts)`,
	`CREATE INDEX request_logs_trace ON request_logs (trace_id)`,
	`CREATE TABLE trace_spans (
		trace_id TEXT NOT NULL,
		span_id TEXT NOT NULL,
		parent_id TEXT NOT NULL,
		name TEXT NOT NULL,
		start INTEGER NOT NULL,
		duration_ms REAL NOT NULL,
		status TEXT NOT NULL,
		attributes TEXT NOT NULL,
		tenant_id TEXT NOT NULL,
		gateway_id TEXT NOT NULL,
		request_id TEXT NOT NULL,
		ts INTEGER NOT NULL,
		batch_id TEXT NOT NULL,
		UNIQUE (trace_id, span_id)
	)`,
	`CREATE INDEX trace_spans_tenant_ts ON trace_spans (tenant_id, ts)`,
	`CREATE TABLE guardrail_events (
		id TEXT PRIMARY KEY,
		ts INTEGER NOT NULL,
		tenant_id TEXT NOT NULL,
		gateway_id TEXT NOT NULL,
		user_id TEXT NOT NULL,
		request_id TEXT NOT NULL,
		rule_id TEXT NOT NULL,
		rule_name TEXT NOT NULL,
		kind TEXT NOT NULL,
		action TEXT NOT NULL,
		direction TEXT NOT NULL,
		excerpt TEXT NOT NULL,
		batch_id TEXT NOT NULL
	)`,
	`CREATE INDEX guardrail_events_ts ON guardrail_events (ts)`,
	`CREATE INDEX guardrail_events_tenant_ts ON guardrail_events (tenant_id, ts)`,
	`CREATE INDEX guardrail_events_gateway_ts ON guardrail_events (gateway_id, ts)`,
}

// Store is an open embedded analytics store. It is safe for concurrent use.
type Store struct {
	// w is the one writing connection: SQLite admits one writer at a time,
	// and queueing writers in Go spares them busy-waiting on the file lock.
	w *sql.DB
	// r serves reads; WAL lets them go on while w writes.
	r *sql.DB
	// inserts are the batch inserts (insertStatements), prepared once on w.
	inserts [len(insertStatements)]*sql.Stmt
	// enc and args are the writer thread's (write.go): the encoder of a
	// record's spans and the values of the rows of one INSERT.
	enc  spanrow.Encoder
	args []any
	// wr runs Write on its own low-priority thread.
	wr *writer
}

var _ analytics.Backend = (*Store)(nil)

// Open opens (creating it, owner-only, when missing) the SQLite file at
// path and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create analytics dir: %w", err)
	}
	// The file holds request bodies: create it owner-only; SQLite gives its
	// -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create analytics file: %w", err)
	}
	_ = f.Close()
	base := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
	// The writer takes its checkpoints itself, off the commit (writer.go).
	w, err := sql.Open("sqlite", base+"&_txlock=immediate&_pragma=cache_size(-32768)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("open analytics file %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open analytics file %s: %w", path, err)
	}
	// A few readers: the admin API's figures, rarely many at once.
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s := &Store{w: w, r: r}
	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open analytics file %s: %w", path, err)
	}
	for i, q := range insertStatements {
		if s.inserts[i], err = w.PrepareContext(ctx, q); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("prepare analytics inserts: %w", err)
		}
	}
	s.wr = startWriter(func(ctx context.Context) error {
		_, err := s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		return err
	})
	return s, nil
}

// migrate creates the schema in a fresh file, upgrades an older one and
// refuses a newer one.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("schema version %d is newer than this build's %d", v, schemaVersion)
	}
	if v == 0 {
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		v = 1
	}
	for ; v < schemaVersion; v++ {
		for _, stmt := range upgrades[v-1] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("upgrade schema to version %d: %w", v+1, err)
			}
		}
		if code := upgradeCode[v+1]; code != nil {
			if err := code(ctx, tx); err != nil {
				return fmt.Errorf("upgrade schema to version %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	return tx.Commit()
}

// Close closes the store.
func (s *Store) Close() error {
	if s.wr != nil {
		s.wr.stop()
	}
	for _, st := range s.inserts {
		if st != nil {
			_ = st.Close()
		}
	}
	// optimize refreshes the planner's statistics where they are stale.
	_, _ = s.w.Exec("PRAGMA optimize")
	return errors.Join(s.r.Close(), s.w.Close())
}

// Count returns the number of request logs stored.
func (s *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_logs").Scan(&n); err != nil {
		return 0, fmt.Errorf("count request logs: %w", err)
	}
	return n, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func jsonList(v []string) string {
	if len(v) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(v) // strings only: cannot fail
	return string(b)
}

func jsonMap(v map[string]string) string {
	if len(v) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(v) // strings only: cannot fail
	return string(b)
}

// retainChunk bounds the rows one DELETE of Retain or PurgeTenant removes,
// so that the writer is not held for long and writes go on in between.
const retainChunk = 5000

// Retain removes the tenant's records older than before (their spans are
// on their rows), and its guardrail events older than before. It deletes in chunks; an
// interrupted run leaves the rest to the next one.
func (s *Store) Retain(ctx context.Context, tenantID string, before time.Time) error {
	cut := before.UnixNano()
	for _, table := range []string{"guardrail_events", "request_logs"} {
		if err := s.deleteChunked(ctx, table, "tenant_id = ? AND ts < ?", tenantID, cut); err != nil {
			return fmt.Errorf("retain tenant %s before %s: %w", tenantID, before.UTC().Format(time.RFC3339), err)
		}
	}
	return nil
}

// PurgeTenant removes every row of a tenant.
func (s *Store) PurgeTenant(ctx context.Context, tenantID string) error {
	for _, table := range []string{"guardrail_events", "request_logs"} {
		if err := s.deleteChunked(ctx, table, "tenant_id = ?", tenantID); err != nil {
			return fmt.Errorf("purge tenant %s: %w", tenantID, err)
		}
	}
	return nil
}

func (s *Store) deleteChunked(ctx context.Context, table, where string, args ...any) error {
	q := "DELETE FROM " + table + " WHERE rowid IN (SELECT rowid FROM " + table + " WHERE " + where +
		" LIMIT " + strconv.Itoa(retainChunk) + ")"
	for {
		res, err := s.w.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete from %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete from %s: %w", table, err)
		}
		if n < retainChunk {
			return nil
		}
	}
}

// BackupTo writes an online, consistent copy of the store to path (which
// must not exist): restoring it is putting the file back as analytics.db
// in the data dir of a stopped server. It runs on the writing connection
// (the reading ones are query_only, which VACUUM INTO refuses), so this
// Store's own writes wait; another process's go on (WAL).
func (s *Store) BackupTo(ctx context.Context, path string) error {
	return sqlitebackup.Into(ctx, s.w, path)
}
