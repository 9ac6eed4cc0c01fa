// Package clickhouse is the ClickHouse analytics backend: request logs,
// trace spans and guardrail events in MergeTree tables, written in batches
// over the native protocol and queried for every figure of the admin API.
//
// It runs on ClickHouse 18.16 as well as current releases, and keeps to what
// both accept: PrepareBatch inserts with explicit column lists (an INSERT …
// VALUES over Exec hangs on 18.16), client-side ? binding, DateTime plus a
// sub-second column instead of DateTime64, parallel arrays instead of Map,
// and bucketing by integer division instead of toStartOfInterval.
package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics"
)

// Config configures the ClickHouse backend.
type Config struct {
	// URL is clickhouse://user:password@host:port/database (native
	// protocol; port 9000 by default). Query parameters are those of
	// clickhouse-go's DSN (e.g. compress=lz4).
	URL string
	// MaxOpenConns caps the connections; 0 means 10.
	MaxOpenConns int
	// DialTimeout bounds each connection attempt; 0 means 5 s.
	DialTimeout time.Duration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.URL == "" {
		return errors.New("clickhouse url is required")
	}
	if !strings.HasPrefix(c.URL, "clickhouse://") && !strings.HasPrefix(c.URL, "tcp://") {
		return errors.New("clickhouse url must start with clickhouse:// (the native protocol; HTTP does not work with ClickHouse 18.16)")
	}
	if c.MaxOpenConns < 0 || c.DialTimeout < 0 {
		return errors.New("clickhouse max open conns and dial timeout must not be negative")
	}
	return nil
}

// Store is the ClickHouse analytics backend. It is safe for concurrent use.
type Store struct {
	conn     driver.Conn
	opts     *ch.Options
	url      string
	database string
	// opened is when the store was opened: a batch with records from before
	// it may be the replay of a write a previous process attempted, so its
	// rows are checked before insert (see Write).
	opened time.Time

	// mu guards written.
	mu sync.Mutex
	// written remembers the ids of the batches this store attempted, in
	// order, so that writing one again checks which of its rows landed.
	written recentIDs

	// blocks holds the writer's *logBlock buffers between inserts.
	blocks sync.Pool
}

var _ analytics.Backend = (*Store)(nil)

// Open connects to ClickHouse. It does not create or migrate the schema
// (Migrate does).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts, err := ch.ParseDSN(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse url: %w", err)
	}
	opts.Protocol = ch.Native
	if opts.Auth.Database == "" {
		opts.Auth.Database = "default"
	}
	opts.MaxOpenConns = cfg.MaxOpenConns
	if opts.MaxOpenConns == 0 {
		opts.MaxOpenConns = 10
	}
	opts.MaxIdleConns = min(5, opts.MaxOpenConns)
	opts.DialTimeout = cfg.DialTimeout
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 5 * time.Second
	}
	conn, err := ch.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return &Store{conn: conn, opts: opts, url: cfg.URL, database: opts.Auth.Database, opened: time.Now(),
		written: newRecentIDs(maxRecentBatches)}, nil
}

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error { return s.conn.Ping(ctx) }

// Close closes the connections.
func (s *Store) Close() error { return s.conn.Close() }

// exceptionCode returns the ClickHouse error code of err, or 0.
func exceptionCode(err error) int32 {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return ex.Code
	}
	return 0
}

// codeUnknownDatabase is ClickHouse's UNKNOWN_DATABASE.
const codeUnknownDatabase = 81
