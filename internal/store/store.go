// Package store is Sluice's relational store on bun: SQLite in the data dir
// by default, PostgreSQL in production. All SQL lives here; every query of a
// tenant's data takes the tenant explicitly.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"
	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluicehq/sluice/internal/sqlitebackup"
	"github.com/sluicehq/sluice/migrations"
)

// Config selects the store.
type Config struct {
	// DatabaseURL is a postgres:// URL; empty selects SQLite in DataDir.
	DatabaseURL string
	// DataDir holds the SQLite file.
	DataDir string
	// MaxOpenConns bounds the PostgreSQL pool (default 20).
	MaxOpenConns int
}

// Store is an open relational store.
type Store struct {
	DB       *bun.DB
	postgres bool
	dsn      string
}

// Open connects to the configured store. It does not migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.DatabaseURL != "" {
		u, err := url.Parse(cfg.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, errors.New("database URL must be postgres://… (or empty for the embedded SQLite store)")
		}
		sqldb, err := sql.Open("pgx", cfg.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		n := cfg.MaxOpenConns
		if n <= 0 {
			n = 20
		}
		sqldb.SetMaxOpenConns(n)
		sqldb.SetMaxIdleConns(n)
		sqldb.SetConnMaxIdleTime(5 * time.Minute)
		db := bun.NewDB(sqldb, pgdialect.New())
		if err := db.PingContext(ctx); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("connect to postgres: %w", err)
		}
		return &Store{DB: db, postgres: true, dsn: cfg.DatabaseURL}, nil
	}
	dir := cfg.DataDir
	if dir == "" {
		dir = "sluice-data"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, "sluice.db")
	// The file holds sealed provider keys and token hashes: create it
	// owner-only; SQLite gives its -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create sqlite file: %w", err)
	}
	_ = f.Close()
	// WAL lets readers go on while one writer writes; busy_timeout makes a
	// second writer wait instead of failing; foreign keys are off by default.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// One writer at a time is SQLite's model; a small pool serves reads.
	sqldb.SetMaxOpenConns(4)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &Store{DB: db, dsn: path}, nil
}

var _ = stdlib.GetDefaultDriver // registers the "pgx" driver

// Postgres reports whether the store is PostgreSQL.
func (s *Store) Postgres() bool { return s.postgres }

// DSN returns the connection string (PostgreSQL) or the SQLite file path.
// It may hold a password: never log it.
func (s *Store) DSN() string { return s.dsn }

// Close closes the store.
func (s *Store) Close() error { return s.DB.Close() }

// Migrate applies every pending migration and returns the names applied.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	ms, err := migrations.New()
	if err != nil {
		return nil, err
	}
	m := migrate.NewMigrator(s.DB, ms, migrate.WithTableName("bun_migrations"), migrate.WithLocksTableName("bun_migration_locks"))
	// Processes starting together (replicas of a rollout, a migrate job)
	// take turns: creating the bookkeeping tables at once, or taking the
	// lock (a row) another holds, fails with a unique violation, and the
	// loser waits and tries again instead of failing its start.
	if err := retryDuplicate(ctx, func() error { return m.Init(ctx) }); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	if err := retryDuplicate(ctx, func() error { return m.Lock(ctx) }); err != nil {
		return nil, fmt.Errorf("lock migrations (a lock left by a crashed run: DELETE FROM bun_migration_locks): %w", err)
	}
	defer m.Unlock(ctx) //nolint:errcheck // best effort; a stale lock row is reported on the next run
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var names []string
	for _, mg := range group.Migrations {
		names = append(names, mg.Name)
	}
	return names, nil
}

// migrationLockWait bounds how long Migrate waits for another process's
// migrations; applying them all to an empty database takes seconds.
const migrationLockWait = 2 * time.Minute

// retryDuplicate calls fn until it does not fail with a unique violation
// or a CREATE … IF NOT EXISTS that lost a race, for at most
// migrationLockWait.
func retryDuplicate(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(migrationLockWait)
	for {
		err := fn()
		if err == nil || !(duplicate(err) || createRace(err)) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error { return s.DB.PingContext(ctx) }

// ErrNotFound is returned when a row does not exist (or is outside the
// caller's tenant).
var ErrNotFound = errors.New("not found")

// ErrDuplicate is returned when a unique constraint refuses a write.
var ErrDuplicate = errors.New("duplicate")

// ErrUnavailable is wrapped around an error that says the store cannot be
// reached or cannot serve now (connection refused or lost, the server
// shutting down or out of connections, SQLite busy or failing I/O), as
// opposed to an error of the query. The admin API answers it 503.
var ErrUnavailable = errors.New("store unavailable")

// Unavailable reports whether err says the store cannot serve now: an error
// wrapping ErrUnavailable, or a driver error of that kind met by a query
// that did not go through this package's helpers. It goes by the drivers'
// error types and codes, never by message text.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err) {
		return true
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		// Class 08: connection exception; 53: insufficient resources (too
		// many connections, disk full, out of memory); 57P01–57P03: the
		// server is shutting down or starting up.
		c := pe.Code
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "53") || c == "57P01" || c == "57P02" || c == "57P03"
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		switch se.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
			return true
		}
	}
	return false
}

// classify maps driver errors to the package's sentinels.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if Unavailable(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if duplicate(err) {
		return fmt.Errorf("%w: %v", ErrDuplicate, err)
	}
	return err
}

// duplicate reports whether err is a unique or primary-key violation.
func duplicate(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "23505" // unique_violation
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// createRace reports whether err is PostgreSQL's answer to a CREATE … IF
// NOT EXISTS racing another: duplicate_table or duplicate_object.
func createRace(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pe.Code == "42P07" || pe.Code == "42710")
}

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx bun.Tx) error) error {
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(tx) })
	return classify(err)
}

// ConfigVersion returns the version that every configuration write bumps.
// Proxies poll it to learn that their snapshot is stale.
func (s *Store) ConfigVersion(ctx context.Context) (int64, error) {
	var v string
	err := s.DB.NewSelect().Table("meta").Column("value").Where("key = ?", "config_version").Scan(ctx, &v)
	if err != nil {
		return 0, classify(err)
	}
	return strconv.ParseInt(v, 10, 64)
}

// NotifyChannel is the PostgreSQL channel on which configuration changes
// are announced (payload: the new version).
const NotifyChannel = "sluice_config"

// BumpConfigVersion increments the configuration version inside tx and, on
// PostgreSQL, announces it with NOTIFY (delivered at commit).
func (s *Store) BumpConfigVersion(ctx context.Context, tx bun.IDB) error {
	// The value is TEXT so that one schema serves both dialects; the cast is
	// spelled per dialect.
	expr := "CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
	if s.postgres {
		expr = "(value::bigint + 1)::text"
	}
	var v string
	err := tx.NewUpdate().Table("meta").Set("value = "+expr).Where("key = ?", "config_version").Returning("value").Scan(ctx, &v)
	if err != nil {
		return fmt.Errorf("bump config version: %w", err)
	}
	if s.postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_notify(?, ?)", NotifyChannel, v); err != nil {
			return fmt.Errorf("notify config change: %w", err)
		}
	}
	return nil
}

// Meta reads a value of the meta table; ok is false when it is absent.
func (s *Store) Meta(ctx context.Context, db bun.IDB, key string) (value string, ok bool, err error) {
	err = db.NewSelect().Table("meta").Column("value").Where("key = ?", key).Scan(ctx, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return value, err == nil, err
}

// SetMeta writes a value of the meta table.
func (s *Store) SetMeta(ctx context.Context, db bun.IDB, key, value string) error {
	_, err := db.NewInsert().Model(&metaRow{Key: key, Value: value}).
		On("CONFLICT (key) DO UPDATE").Set("value = EXCLUDED.value").Exec(ctx)
	return err
}

type metaRow struct {
	bun.BaseModel `bun:"table:meta"`
	Key           string `bun:"key,pk"`
	Value         string `bun:"value"`
}

// ErrNotEmbedded is returned by BackupTo on PostgreSQL, whose backups are
// pg_dump's (docs/deployment.md).
var ErrNotEmbedded = errors.New("the relational store is PostgreSQL: back it up with pg_dump")

// BackupTo writes an online, consistent copy of the embedded SQLite store
// to path (which must not exist): restoring it is putting the file back
// as sluice.db in the data dir of a stopped server.
func (s *Store) BackupTo(ctx context.Context, path string) error {
	if s.postgres {
		return ErrNotEmbedded
	}
	return sqlitebackup.Into(ctx, s.DB, path)
}
