package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// Deleting rows. Partitions are days of every tenant, so a per-tenant
// deletion cannot drop partitions: it is an ALTER TABLE … DELETE (a
// mutation, which 18.16 has), run only when there is something to delete
// (a mutation rewrites the parts it touches), and waited for, so that the
// rows are gone when the call returns (18.16 has no mutations_sync).

// mutationPoll is how often a deletion checks whether its mutation is done.
const mutationPoll = 50 * time.Millisecond

// tables lists the analytics tables with their time columns.
// A span is retained by its request's time (ts), not its own start.
var tables = []struct {
	name string
	tc   timeCols
}{{"request_logs", logTime}, {"trace_spans", logTime}, {"guardrail_events", eventTime}}

// Retain removes the tenant's rows older than before.
func (s *Store) Retain(ctx context.Context, tenantID string, before time.Time) error {
	if tenantID == "" {
		return fmt.Errorf("retain: a tenant is required")
	}
	for _, t := range tables {
		c := &cond{}
		c.query(analytics.Query{TenantID: tenantID, To: before}, t.tc)
		if err := s.deleteRows(ctx, t.name, c); err != nil {
			return fmt.Errorf("retain %s rows of tenant %s: %w", t.name, tenantID, err)
		}
	}
	return nil
}

// PurgeTenant removes every row of a tenant.
func (s *Store) PurgeTenant(ctx context.Context, tenantID string) error {
	if tenantID == "" {
		return fmt.Errorf("purge: a tenant is required")
	}
	for _, t := range tables {
		c := &cond{}
		c.add("tenant_id = ?", tenantID)
		if err := s.deleteRows(ctx, t.name, c); err != nil {
			return fmt.Errorf("purge %s rows of tenant %s: %w", t.name, tenantID, err)
		}
	}
	return nil
}

// deleteRows deletes the rows of table under c and waits for the mutation.
func (s *Store) deleteRows(ctx context.Context, table string, c *cond) error {
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+table+" "+c.sql(), c.args...).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := s.conn.Exec(ctx, "ALTER TABLE "+table+" DELETE "+c.sql(), c.args...); err != nil {
		return err
	}
	return s.waitMutations(ctx, table)
}

// waitMutations waits until table has no unfinished mutation.
func (s *Store) waitMutations(ctx context.Context, table string) error {
	t := time.NewTicker(mutationPoll)
	defer t.Stop()
	for {
		var pending uint64
		err := s.conn.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0",
			s.database, table).Scan(&pending)
		if err != nil {
			return fmt.Errorf("wait for the deletion: %w", err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the deletion: %w", ctx.Err())
		case <-t.C:
		}
	}
}
