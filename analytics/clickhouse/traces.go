package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// spanStartUS is the start of a span in microseconds since the epoch.
const spanStartUS = "(toUInt64(start) * 1000000 + start_us)"

// Traces lists one summary per trace of q's scope that has a root span
// starting in the range, newest first by (start, trace id). Start and
// duration are the root's; status and model those of the request's log;
// spans counts the trace's spans.
func (s *Store) Traces(ctx context.Context, q analytics.Query, limit int, cursor string) ([]analytics.TraceSummary, *string, error) {
	limit = pageLimit(limit)
	c := &cond{}
	c.query(q, spanTime)
	c.add("parent_id = ''")
	if err := c.before(spanTime, "trace_id", cursor); err != nil {
		return nil, nil, err
	}
	rows, err := s.conn.Query(ctx, `SELECT trace_id, toInt64(`+spanStartUS+`), duration_us, request_id, tenant_id
FROM trace_spans `+c.sql()+`
ORDER BY start DESC, start_us DESC, trace_id DESC LIMIT `+itoa(int64(limit+1)), c.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	var (
		out     []analytics.TraceSummary
		tenants []string
	)
	for rows.Next() {
		var (
			t        analytics.TraceSummary
			start    int64
			dur      uint64
			tenantID string
		)
		if err := rows.Scan(&t.ID, &start, &dur, &t.RequestID, &tenantID); err != nil {
			_ = rows.Close()
			return nil, nil, fmt.Errorf("list traces: %w", err)
		}
		t.Start = time.UnixMicro(start).UTC()
		t.DurationMS = float64(dur) / 1000
		out = append(out, t)
		if !slices.Contains(tenants, tenantID) {
			tenants = append(tenants, tenantID)
		}
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	var next *string
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = encodeCursor(last.Start.UnixMicro(), last.ID)
	}
	if len(out) == 0 {
		return []analytics.TraceSummary{}, nil, nil
	}
	if err := s.spanCounts(ctx, tenants, out); err != nil {
		return nil, nil, err
	}
	if err := s.traceRequests(ctx, tenants, out); err != nil {
		return nil, nil, err
	}
	return out, next, nil
}

// spanCounts fills the number of spans of each summary.
func (s *Store) spanCounts(ctx context.Context, tenants []string, ts []analytics.TraceSummary) error {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	c := &cond{}
	c.in("tenant_id", tenants)
	c.in("trace_id", ids)
	rows, err := s.conn.Query(ctx, "SELECT trace_id, toInt64(count()) FROM trace_spans "+c.sql()+" GROUP BY trace_id", c.args...)
	if err != nil {
		return fmt.Errorf("count the spans of traces: %w", err)
	}
	defer rows.Close()
	counts := map[string]int64{}
	for rows.Next() {
		var (
			id string
			n  int64
		)
		if err := rows.Scan(&id, &n); err != nil {
			return fmt.Errorf("count the spans of traces: %w", err)
		}
		counts[id] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count the spans of traces: %w", err)
	}
	for i := range ts {
		ts[i].Spans = int(counts[ts[i].ID])
	}
	return nil
}

// traceRequests fills the status and model of each summary from its
// request's log.
func (s *Store) traceRequests(ctx context.Context, tenants []string, ts []analytics.TraceSummary) error {
	ids := make([]string, 0, len(ts))
	for _, t := range ts {
		if t.RequestID != "" {
			ids = append(ids, t.RequestID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	c := &cond{}
	c.in("tenant_id", tenants)
	c.in("id", ids)
	rows, err := s.conn.Query(ctx, "SELECT id, status, model FROM request_logs "+c.sql(), c.args...)
	if err != nil {
		return fmt.Errorf("read the requests of traces: %w", err)
	}
	defer rows.Close()
	type req struct {
		status int32
		model  string
	}
	byID := map[string]req{}
	for rows.Next() {
		var (
			id string
			r  req
		)
		if err := rows.Scan(&id, &r.status, &r.model); err != nil {
			return fmt.Errorf("read the requests of traces: %w", err)
		}
		byID[id] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the requests of traces: %w", err)
	}
	for i := range ts {
		if r, ok := byID[ts[i].RequestID]; ok {
			ts[i].Status, ts[i].Model = int(r.status), r.model
		}
	}
	return nil
}

// Trace reads the span tree of a trace; nil when it has no root span. Its
// root is the span without a parent (the earliest, should there be several);
// children are ordered by start, then span id.
func (s *Store) Trace(ctx context.Context, id string) (*analytics.Trace, error) {
	rows, err := s.conn.Query(ctx, `SELECT tenant_id, gateway_id, request_id, span_id, parent_id, name,
       toInt64(`+spanStartUS+`), duration_us, status, attr_keys, attr_values
FROM trace_spans WHERE trace_id = ? ORDER BY start, start_us, span_id`, id)
	if err != nil {
		return nil, fmt.Errorf("read trace %s: %w", id, err)
	}
	defer rows.Close()
	var (
		spans []*analytics.Span
		tr    *analytics.Trace
	)
	for rows.Next() {
		var (
			tenant, gateway, request string
			sp                       = &analytics.Span{TraceID: id}
			start                    int64
			dur                      uint64
			keys, vals               []string
		)
		if err := rows.Scan(&tenant, &gateway, &request, &sp.SpanID, &sp.ParentID, &sp.Name, &start, &dur, &sp.Status, &keys, &vals); err != nil {
			return nil, fmt.Errorf("read trace %s: %w", id, err)
		}
		sp.Start = time.UnixMicro(start).UTC()
		sp.DurationMS = float64(dur) / 1000
		sp.Attributes = joinMap(keys, vals)
		spans = append(spans, sp)
		if sp.ParentID == "" && tr == nil {
			tr = &analytics.Trace{ID: id, TenantID: tenant, GatewayID: gateway, RequestID: request,
				Start: sp.Start, DurationMS: sp.DurationMS, Root: sp}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", id, err)
	}
	if tr == nil {
		return nil, nil
	}
	byID := make(map[string]*analytics.Span, len(spans))
	for _, sp := range spans {
		byID[sp.SpanID] = sp
	}
	// spans are in (start, span id) order, so children are appended in it.
	for _, sp := range spans {
		if parent, ok := byID[sp.ParentID]; ok && sp.ParentID != "" && parent != sp {
			parent.Children = append(parent.Children, sp)
		}
	}
	return tr, nil
}
