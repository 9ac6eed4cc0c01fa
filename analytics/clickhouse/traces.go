package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
)

// Traces lists one summary per request of q's scope whose root span starts
// in the range, newest first by (root start, trace id). Start and duration
// are the root's; status and model those of the request; spans counts the
// request's spans.
func (s *Store) Traces(ctx context.Context, q analytics.Query, limit int, cursor string) ([]analytics.TraceSummary, *string, error) {
	limit = pageLimit(limit)
	c := &cond{}
	c.query(analytics.Query{TenantID: q.TenantID, GatewayID: q.GatewayID, UserID: q.UserID}, logTime)
	c.add("trace_root = 1")
	c.timeRange(rootTime, q.From, q.To)
	if err := c.before(rootTime, "trace_id", cursor); err != nil {
		return nil, nil, err
	}
	rows, err := s.conn.Query(ctx, `SELECT trace_id, root_start_us, root_duration_us, id, status, model, span_count
FROM request_logs `+c.sql()+`
ORDER BY root_start_us DESC, trace_id DESC LIMIT `+itoa(int64(limit+1)), c.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	defer rows.Close()
	out := []analytics.TraceSummary{}
	for rows.Next() {
		var (
			t      analytics.TraceSummary
			start  int64
			dur    uint64
			status int32
			spans  uint32
		)
		if err := rows.Scan(&t.ID, &start, &dur, &t.RequestID, &status, &t.Model, &spans); err != nil {
			return nil, nil, fmt.Errorf("list traces: %w", err)
		}
		t.Start = time.UnixMicro(start).UTC()
		t.DurationMS = float64(dur) / 1000
		t.Status, t.Spans = int(status), int(spans)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	var next *string
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = encodeCursor(last.Start.UnixMicro(), last.ID)
	}
	return out, next, nil
}

// Trace reads the span tree of a trace within a tenant ("" for any); nil
// when no request of it has a root span. Should several requests share the
// trace (a client's traceparent), it is the tree of the one whose root
// starts first: requests of other tenants never show in it. Children are ordered by start, then
// span id; a span whose parent is missing hangs under the root.
func (s *Store) Trace(ctx context.Context, id, tenantID string) (*analytics.Trace, error) {
	c := &cond{}
	if tenantID != "" {
		c.add("tenant_id = ?", tenantID)
	}
	c.add("trace_id = ?", id)
	c.add("trace_root = 1")
	rows, err := s.conn.Query(ctx, "SELECT tenant_id, gateway_id, id, route, provider, model, status, root_start_us, spans FROM request_logs "+c.sql()+
		" ORDER BY root_start_us, id LIMIT 1", c.args...)
	if err != nil {
		return nil, fmt.Errorf("read trace %s: %w", id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read trace %s: %w", id, err)
		}
		return nil, nil
	}
	var (
		tenant, gateway, text string
		row                   spanrow.Row
		status                int32
	)
	if err := rows.Scan(&tenant, &gateway, &row.ID, &row.Route, &row.Provider, &row.Model, &status, &row.RootStart, &text); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", id, err)
	}
	row.Status = int(status)
	request := row.ID
	spans, err := spanrow.Decode(id, text, row)
	if err != nil {
		return nil, err
	}
	return spanrow.Tree(id, tenant, gateway, request, spans), nil
}
