package store_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestUnavailableByType checks that store.Unavailable goes by the drivers'
// error types and codes: the errors of a store that cannot serve now are
// told from the errors of a query without reading their text.
func TestUnavailableByType(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"wrapped ErrUnavailable", fmt.Errorf("list users: %w", store.ErrUnavailable), true},
		{"bad conn", fmt.Errorf("query: %w", driver.ErrBadConn), true},
		{"conn closed", fmt.Errorf("exec: %w", pgconn.ErrConnClosed), true},
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"not found", store.ErrNotFound, false},
		{"text that only looks like it", errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Unavailable(tt.err); got != tt.want {
				t.Errorf("Unavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestUnavailableWhenPostgresIsCutOff cuts a PostgreSQL store off through a
// TCP proxy: its queries fail with errors that store.Unavailable
// recognises, and work again once the database is back, without a new
// store.
func TestUnavailableWhenPostgresIsCutOff(t *testing.T) {
	ctx := context.Background()
	base := testenv.Store(t, testenv.Postgres) // a fresh, migrated schema
	u, err := url.Parse(base.DSN())
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	st, err := store.Open(ctx, store.Config{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	insertTenant(t, st, "acme")

	proxy.Break()
	_, err = store.Get[store.Tenant](ctx, st.DB, store.Eq("id", "acme"))
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("read while cut off: %v, want ErrUnavailable", err)
	}
	err = st.InTx(ctx, func(tx bun.Tx) error { return store.Insert(ctx, tx, tenant("beta")) })
	if !store.Unavailable(err) {
		t.Fatalf("write while cut off: %v, want an unavailable error", err)
	}

	proxy.Restore()
	if _, err := store.Get[store.Tenant](ctx, st.DB, store.Eq("id", "acme")); err != nil {
		t.Fatalf("read after the database is back: %v", err)
	}
}
