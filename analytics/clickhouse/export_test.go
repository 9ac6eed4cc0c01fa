package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Test hooks: raw access to the connection and the store's URL.

func (s *Store) Exec(ctx context.Context, q string, args ...any) error {
	return s.conn.Exec(ctx, q, args...)
}

func (s *Store) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	return s.conn.QueryRow(ctx, q, args...)
}

func (s *Store) URL() string { return s.url }
