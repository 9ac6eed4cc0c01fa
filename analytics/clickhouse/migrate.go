package clickhouse

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/sluicehq/sluice/analytics/clickhouse/migrations"
)

// createSchemaMigrations makes the table of applied migrations. A
// ReplacingMergeTree, read with DISTINCT, so that two processes migrating at
// once (each statement is idempotent) leave one version each after merges and
// a correct answer before them.
const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32,
    applied DateTime('UTC')
) ENGINE = ReplacingMergeTree ORDER BY version`

var databaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Migrate creates the database when it is missing and applies the
// migrations not yet applied, in version order, then checks that
// request_logs fits the writer (CheckSchema). It returns the names of the
// migrations it applied.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	if err := s.ensureDatabase(ctx); err != nil {
		return nil, err
	}
	if err := s.conn.Exec(ctx, createSchemaMigrations); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[uint32]bool{}
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	ms, err := migrations.All()
	if err != nil {
		return nil, err
	}
	done := []string{}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		for i, stmt := range m.Statements {
			if err := s.conn.Exec(ctx, stmt); err != nil && !columnsAdded(stmt, err) {
				return done, fmt.Errorf("migration %s, statement %d: %w", m.Name, i+1, err)
			}
		}
		// INSERT … SELECT: an INSERT … VALUES over Exec hangs on 18.16.
		if err := s.conn.Exec(ctx, "INSERT INTO schema_migrations (version, applied) SELECT toUInt32(?), now()", m.Version); err != nil {
			return done, fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		done = append(done, m.Name)
	}
	if err := s.CheckSchema(ctx); err != nil {
		return done, err
	}
	return done, nil
}

// ensureDatabase creates the store's database when the server does not have
// it, over a connection to the default database.
func (s *Store) ensureDatabase(ctx context.Context) error {
	err := s.conn.Ping(ctx)
	if err == nil {
		return nil
	}
	if exceptionCode(err) != codeUnknownDatabase {
		return fmt.Errorf("ping clickhouse: %w", err)
	}
	if !databaseName.MatchString(s.database) {
		return fmt.Errorf("clickhouse database name %q is not a plain identifier", s.database)
	}
	o := *s.opts
	o.Auth.Database = "default"
	o.MaxOpenConns, o.MaxIdleConns = 1, 1
	conn, err := ch.Open(&o)
	if err != nil {
		return fmt.Errorf("open clickhouse: %w", err)
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+s.database+"`"); err != nil {
		return fmt.Errorf("create database %s: %w", s.database, err)
	}
	return nil
}

// The codes ALTER TABLE … ADD COLUMN raises for a column that exists:
// ILLEGAL_COLUMN on 18.16, DUPLICATE_COLUMN on current releases.
const (
	codeDuplicateColumn = 15
	codeIllegalColumn   = 44
)

// columnsAdded reports whether err is an ADD COLUMN statement finding its
// columns there: a migration that ran before its version was recorded (the
// process stopped in between). 18.16 has no ADD COLUMN IF NOT EXISTS; one
// ALTER's commands are checked together before any applies, so "exists"
// means the whole statement ran.
func columnsAdded(stmt string, err error) bool {
	code := exceptionCode(err)
	return (code == codeIllegalColumn || code == codeDuplicateColumn) && strings.Contains(strings.ToUpper(stmt), "ADD COLUMN")
}
