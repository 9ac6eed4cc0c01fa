// Package testenv gives tests real stores: a fresh SQLite file and a fresh
// PostgreSQL schema per test. PostgreSQL comes from SLUICE_TEST_POSTGRES_URL
// (set by scripts/test.sh); without it the PostgreSQL variant is skipped,
// except under CI=true, where a missing database fails the run.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // pgx database/sql driver

	"github.com/sluicehq/sluice/internal/store"
)

// Backend names a relational store variant.
type Backend string

// The store variants every store test runs on.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends lists the variants.
var Backends = []Backend{SQLite, Postgres}

// PostgresURL returns the test server's URL, skipping (or, under CI=true,
// failing) the test when there is none.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SLUICE_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SLUICE_TEST_POSTGRES_URL is not set; CI requires PostgreSQL (run the tests through `make test`)")
		}
		t.Skip("SLUICE_TEST_POSTGRES_URL not set; run `make test` to test against PostgreSQL")
	}
	return u
}

// FreshPostgresURL returns the test PostgreSQL URL with its search_path
// set to a new, empty schema, dropped when the test ends.
func FreshPostgresURL(t testing.TB) string {
	t.Helper()
	return freshSchema(t, PostgresURL(t))
}

// Store opens a migrated, empty store of the given variant, closed and
// dropped when the test ends.
func Store(t testing.TB, b Backend) *store.Store {
	t.Helper()
	ctx := context.Background()
	cfg := store.Config{DataDir: t.TempDir()}
	if b == Postgres {
		cfg.DatabaseURL = freshSchema(t, PostgresURL(t))
	}
	st, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open %s store: %v", b, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s store: %v", b, err)
	}
	return st
}

// freshSchema creates a schema with a random name and returns base with its
// search_path set to it; the schema is dropped at cleanup.
func freshSchema(t testing.TB, base string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		_ = db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
		_ = db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse postgres url: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
