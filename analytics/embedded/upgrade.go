package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
)

// moveSpans is the data step of schema version 6: it carries the spans of
// trace_spans (one row per span, versions 1 to 5) onto the rows of their
// requests in the encoding of package spanrow, then drops trace_spans.
//
// The writer stored a record and its spans in one transaction and Retain
// removed spans before their records, so every span has its request's
// row. A span's trace becomes its request's, as in the ClickHouse store
// (the proxy gives a request's spans its trace id). Spans come back with
// microsecond times (they were stored in nanoseconds; the proxy measures
// microseconds).
func moveSpans(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE moved_spans (id TEXT PRIMARY KEY, trace_root INTEGER,
		root_start_us INTEGER, root_duration_us INTEGER, span_count INTEGER, spans TEXT)`); err != nil {
		return fmt.Errorf("move spans: %w", err)
	}
	// The encoded spans go to a temporary table first, so that no row of
	// request_logs changes while the query below reads it.
	if err := encodeStoredSpans(ctx, tx); err != nil {
		return fmt.Errorf("move spans: %w", err)
	}
	for _, stmt := range []string{
		`UPDATE request_logs SET (trace_root, root_start_us, root_duration_us, span_count, spans) =
			(SELECT trace_root, root_start_us, root_duration_us, span_count, spans FROM temp.moved_spans m WHERE m.id = request_logs.id)
			WHERE id IN (SELECT id FROM temp.moved_spans)`,
		`DROP TABLE temp.moved_spans`,
		`DROP TABLE trace_spans`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("move spans: %w", err)
		}
	}
	return nil
}

// encodeStoredSpans reads trace_spans request by request and writes each
// request's encoded spans to temp.moved_spans.
func encodeStoredSpans(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT l.id, l.trace_id, l.route, l.provider, l.model, l.status,
			s.span_id, s.parent_id, s.name, s.start, s.duration_ms, s.status, s.attributes
		FROM trace_spans s JOIN request_logs l ON l.id = s.request_id ORDER BY s.request_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		enc   spanrow.Encoder
		rec   analytics.Record
		spans []analytics.Span
	)
	flush := func() error {
		if len(spans) == 0 {
			return nil
		}
		rec.Spans = spans
		root := spanrow.Root(spans)
		row := spanrow.RowOf(&rec, root)
		var hasRoot, dur int64
		if root != nil {
			hasRoot, dur = 1, int64(spanrow.DurationUS(root.DurationMS))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO temp.moved_spans VALUES (?, ?, ?, ?, ?, ?)`,
			rec.ID, hasRoot, row.RootStart, dur, len(spans), enc.Encode(spans, row))
		spans = spans[:0]
		return err
	}
	for rows.Next() {
		var (
			r     analytics.Record
			sp    analytics.Span
			start int64
			attrs string
		)
		if err := rows.Scan(&r.ID, &r.TraceID, &r.Route, &r.Provider, &r.Model, &r.Status,
			&sp.SpanID, &sp.ParentID, &sp.Name, &start, &sp.DurationMS, &sp.Status, &attrs); err != nil {
			return err
		}
		if r.ID != rec.ID {
			if err := flush(); err != nil {
				return err
			}
			rec = r
		}
		sp.TraceID, sp.Start = r.TraceID, time.Unix(0, start).UTC()
		if err := json.Unmarshal([]byte(attrs), &sp.Attributes); err != nil {
			return fmt.Errorf("decode span %s of request %s: %w", sp.SpanID, r.ID, err)
		}
		spans = append(spans, sp)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}
