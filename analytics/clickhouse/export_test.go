package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics"
)

// Test hooks: raw access to the connection and the store's URL.

func (s *Store) Exec(ctx context.Context, q string, args ...any) error {
	return s.conn.Exec(ctx, q, args...)
}

func (s *Store) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	return s.conn.QueryRow(ctx, q, args...)
}

func (s *Store) URL() string { return s.url }

// InsertLogsFailingAt inserts recs into request_logs as the writer does,
// with the block starting at row from broken (its ts column of the wrong
// type), so the INSERT fails while that block is built, after the blocks
// before it went to the server. The failure is the client's, before any
// byte of the broken block is sent: a malformed block sent instead would
// make the server's outcome depend on how much of it arrived (a partial
// block that happens to parse, then a closed connection).
func (s *Store) InsertLogsFailingAt(ctx context.Context, recs []*analytics.Record, from int) error {
	k := newLogBlock()
	return s.insertBlocks(ctx, "request_logs", logInsertColumns(), len(recs), func(lo, hi int) []any {
		k.reset()
		for _, r := range recs[lo:hi] {
			k.add(r, "b-failed")
		}
		cols := k.columns()
		if lo == from {
			cols[1] = []string{"not a time"} // ts is a DateTime column
		}
		return cols
	})
}
