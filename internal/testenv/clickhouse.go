package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// ClickHouseURL returns the test server's URL
// (clickhouse://host:port/database, native protocol) from
// SLUICE_TEST_CLICKHOUSE_URL, skipping (or, under CI=true, failing) the test
// when there is none. scripts/ensure-services.sh sets it.
func ClickHouseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SLUICE_TEST_CLICKHOUSE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SLUICE_TEST_CLICKHOUSE_URL is not set; CI requires ClickHouse (run the tests through `make test`)")
		}
		t.Skip("SLUICE_TEST_CLICKHOUSE_URL not set; run `make test` (or source scripts/ensure-services.sh && ensure_clickhouse) to test against ClickHouse")
	}
	return u
}

// ClickHouseDatabase creates a database with a random name (t_<hex>) on the
// test server and returns the server's URL pointing at it; the database is
// dropped at cleanup.
func ClickHouseDatabase(t testing.TB) string {
	t.Helper()
	base := ClickHouseURL(t)
	opts, err := ch.ParseDSN(base)
	if err != nil {
		t.Fatalf("parse SLUICE_TEST_CLICKHOUSE_URL: %v", err)
	}
	opts.Auth.Database = "default"
	opts.MaxOpenConns, opts.MaxIdleConns = 1, 1
	opts.DialTimeout = 5 * time.Second
	conn, err := ch.Open(opts)
	if err != nil {
		t.Fatalf("open clickhouse: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db := "t_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		_ = conn.Close()
		t.Fatalf("create clickhouse database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db)
		_ = conn.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse SLUICE_TEST_CLICKHOUSE_URL: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}
