package embedded

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/page"
)

// pageSize is the page size of a listing asked for n rows: the one
// pagination policy of the admin API (package page).
func pageSize(n int) int { return page.Clamp(n) }

// cursor is the position after the last entry of a page, newest first:
// the next page holds entries before (ts, id). On the wire it is opaque:
// base64url of "v1|<ts in ns>|<id>".
type cursor struct {
	ts int64
	id string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + strconv.FormatInt(c.ts, 10) + "|" + c.id))
}

func errCursor() error { return analytics.InvalidCursor() }

func parseCursor(s string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, errCursor()
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errCursor()
	}
	ts, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return nil, errCursor()
	}
	return &cursor{ts: ts, id: parts[2]}, nil
}

// after limits w to the entries after c in newest-first (ts, id) order.
func (w *where) after(c *cursor, ts, id string) {
	if c != nil {
		w.add("("+ts+" < ? OR ("+ts+" = ? AND "+id+" < ?))", c.ts, c.ts, c.id)
	}
}

// next returns the cursor of a page that read limit+1 rows, and trims it.
func next[T any](rows []T, limit int, pos func(T) cursor) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	c := pos(rows[limit-1]).String()
	return rows, &c
}

const (
	listColumns = `id, ts, tenant_id, gateway_id, token_id, user_id, provider, model, route, status,
		error_code, latency_ms, ttfb_ms, tokens_in, tokens_out, cached_tokens, cost_usd, cache, attempts,
		rule_hits, metadata, trace_id, client_ip, user_agent, flags, cache_saved_usd, operation,
		cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, error_message`
	bodyColumns = `, request_body, response_body`
)

type scanner interface{ Scan(dest ...any) error }

func scanRecord(sc scanner, bodies bool) (analytics.Record, error) {
	var r analytics.Record
	var ts, cost, saved int64
	var hits, md, flags string
	dest := []any{&r.ID, &ts, &r.TenantID, &r.GatewayID, &r.TokenID, &r.UserID, &r.Provider, &r.Model,
		&r.Route, &r.Status, &r.ErrorCode, &r.LatencyMS, &r.TTFBMS, &r.TokensIn, &r.TokensOut, &r.CachedTokens,
		&cost, &r.Cache, &r.Attempts, &hits, &md, &r.TraceID, &r.ClientIP, &r.UserAgent, &flags, &saved, &r.Operation,
		&r.CacheWriteTokens, &r.CacheWrite1hTokens, &r.ReasoningTokens, &r.ErrorMessage}
	if bodies {
		dest = append(dest, &r.RequestBody, &r.ResponseBody)
	}
	if err := sc.Scan(dest...); err != nil {
		return r, err
	}
	r.TS, r.CostUSD, r.CacheSavedUSD = time.Unix(0, ts).UTC(), money.USD(cost), money.USD(saved)
	r.RuleHits, r.Flags, r.Metadata = []string{}, []string{}, map[string]string{}
	if err := errors.Join(json.Unmarshal([]byte(hits), &r.RuleHits), json.Unmarshal([]byte(flags), &r.Flags),
		json.Unmarshal([]byte(md), &r.Metadata)); err != nil {
		return r, fmt.Errorf("decode record %s: %w", r.ID, err)
	}
	return r, nil
}

// logWhere is the condition of every filter of f (not its cursor).
func logWhere(f *analytics.LogFilter) (*where, error) {
	w := scope(f.Query)
	conds, err := f.ColumnConds()
	if err != nil {
		return nil, err
	}
	for _, c := range conds {
		w.add(c.SQL, c.Args...)
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.add("EXISTS (SELECT 1 FROM json_each(metadata) WHERE key = ? AND value = ?)", k, f.Metadata[k])
	}
	if f.Search != "" {
		// lower() folds ASCII letters only, as the definition asks.
		w.add("(instr(lower(id), lower(?)) > 0 OR EXISTS (SELECT 1 FROM json_each(metadata) WHERE instr(lower(value), lower(?)) > 0))",
			f.Search, f.Search)
	}
	return w, nil
}

// Logs lists the request logs of f in the order of f.Sort (newest first by
// default, by (ts, id)), without their bodies.
func (s *Store) Logs(ctx context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error) {
	key, err := f.Sort.Key()
	if err != nil {
		return nil, nil, err
	}
	w, err := logWhere(&f)
	if err != nil {
		return nil, nil, err
	}
	newest := f.Sort.IsNewestFirst()
	if newest {
		c, err := parseCursor(f.Cursor)
		if err != nil {
			return nil, nil, err
		}
		w.after(c, "ts", "id")
	} else {
		c, err := f.Sort.Decode(f.Cursor)
		if err != nil {
			return nil, nil, err
		}
		if c != nil {
			cond, args := f.Sort.After(c, key, "ts", "id")
			w.add(cond, args...)
		}
	}
	limit := pageSize(f.Limit)
	rows, err := s.r.QueryContext(ctx, "SELECT "+listColumns+" FROM request_logs"+w.String()+
		" ORDER BY "+f.Sort.OrderBy(key, "ts", "id")+" LIMIT "+strconv.Itoa(limit+1), w.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	defer rows.Close()
	out := []analytics.Record{}
	for rows.Next() {
		r, err := scanRecord(rows, false)
		if err != nil {
			return nil, nil, fmt.Errorf("list logs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	if newest {
		page, nc := next(out, limit, func(r analytics.Record) cursor { return cursor{r.TS.UnixNano(), r.ID} })
		return page, nc, nil
	}
	if len(out) <= limit {
		return out, nil, nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, f.Sort.Encode(analytics.SortCursor{Key: f.Sort.KeyOf(&last), Time: last.TS.UnixNano(), ID: last.ID}), nil
}

// LogCount counts the request logs f selects (its sort and page aside).
func (s *Store) LogCount(ctx context.Context, f analytics.LogFilter) (int64, error) {
	w, err := logWhere(&f)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_logs"+w.String(), w.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count logs: %w", err)
	}
	return n, nil
}

// Log reads one request log with its bodies; nil when there is none.
func (s *Store) Log(ctx context.Context, id string) (*analytics.Record, error) {
	row := s.r.QueryRowContext(ctx, "SELECT "+listColumns+bodyColumns+" FROM request_logs WHERE id = ?", id)
	r, err := scanRecord(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read log %s: %w", id, err)
	}
	return &r, nil
}

// Traces lists the traces of q's records newest first, one summary each,
// from the record: its status and model, and its root span's start and
// duration and its span count, which are on its row (a trace id shared by
// several requests gives each its own summary). The root span starts at
// the record's ts.
func (s *Store) Traces(ctx context.Context, q analytics.Query, limit int, cur string) ([]analytics.TraceSummary, *string, error) {
	c, err := parseCursor(cur)
	if err != nil {
		return nil, nil, err
	}
	limit = pageSize(limit)
	w := scope(q)
	w.add("trace_id != '' AND trace_root = 1")
	w.after(c, "ts", "trace_id")
	rows, err := s.r.QueryContext(ctx, `SELECT trace_id, id, ts, root_start_us, root_duration_us, status, model, span_count
		FROM request_logs`+w.String()+` ORDER BY ts DESC, trace_id DESC LIMIT `+strconv.Itoa(limit+1), w.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	defer rows.Close()
	type row struct {
		analytics.TraceSummary
		ts int64
	}
	var all []row
	for rows.Next() {
		var r row
		var start, dur int64
		if err := rows.Scan(&r.ID, &r.RequestID, &r.ts, &start, &dur, &r.Status, &r.Model, &r.Spans); err != nil {
			return nil, nil, fmt.Errorf("list traces: %w", err)
		}
		r.Start, r.DurationMS = time.UnixMicro(start).UTC(), float64(dur)/1000
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list traces: %w", err)
	}
	page, nc := next(all, limit, func(r row) cursor { return cursor{r.ts, r.ID} })
	out := make([]analytics.TraceSummary, 0, len(page))
	for _, r := range page {
		out = append(out, r.TraceSummary)
	}
	return out, nc, nil
}

// Trace reads the span tree of a trace within a tenant ("" for any); nil
// when no request of it has a root span there.
// Should several requests share the trace id (a client's traceparent), it
// is the tree of the request whose root starts first (then least request
// id): requests of other tenants never show in it. Children are ordered by
// start, then span id; a span whose parent is missing hangs under the root,
// so that no span is hidden.
func (s *Store) Trace(ctx context.Context, id, tenantID string) (*analytics.Trace, error) {
	var (
		tenant, gateway, text string
		row                   spanrow.Row
	)
	err := s.r.QueryRowContext(ctx, `SELECT tenant_id, gateway_id, id, route, provider, model, status, root_start_us, spans
		FROM request_logs WHERE trace_id = ? AND trace_root = 1 AND (? = '' OR tenant_id = ?)
		ORDER BY root_start_us, id LIMIT 1`, id, tenantID, tenantID).
		Scan(&tenant, &gateway, &row.ID, &row.Route, &row.Provider, &row.Model, &row.Status, &row.RootStart, &text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trace %s: %w", id, err)
	}
	spans, err := spanrow.Decode(id, text, row)
	if err != nil {
		return nil, err
	}
	return spanrow.Tree(id, tenant, gateway, row.ID, spans), nil
}

// guardrailStep is the bucket of guardrail points: hourly up to 90 days,
// daily beyond, as the default of /stats/timeseries.
func guardrailStep(q analytics.Query) string {
	if q.To.Sub(q.From) > 90*24*time.Hour {
		return "day"
	}
	return "hour"
}

// GuardrailStats answers the rule hits of q: by (rule, action) by hits
// descending, and per bucket (requests = hits).
func (s *Store) GuardrailStats(ctx context.Context, q analytics.Query) (*analytics.GuardrailStats, error) {
	interval := guardrailStep(q)
	pts, err := buckets(q, interval)
	if err != nil {
		return nil, err
	}
	gs := &analytics.GuardrailStats{From: q.From, To: q.To, ByRule: []analytics.RuleHits{}, Points: pts}
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		w := scope(q)
		rows, err := tx.QueryContext(ctx, `WITH e AS (
				SELECT rule_id, action, rule_name,
					ROW_NUMBER() OVER (PARTITION BY rule_id, action ORDER BY ts DESC, id DESC) AS rn,
					COUNT(*) OVER (PARTITION BY rule_id, action) AS hits
				FROM guardrail_events`+w.String()+`)
			SELECT rule_id, rule_name, action, hits FROM e WHERE rn = 1`, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h analytics.RuleHits
			if err := rows.Scan(&h.RuleID, &h.RuleName, &h.Action, &h.Hits); err != nil {
				return err
			}
			gs.Total += h.Hits
			gs.ByRule = append(gs.ByRule, h)
		}
		if err := rows.Err(); err != nil || len(pts) == 0 {
			return err
		}
		step := steps[interval].Nanoseconds()
		rows, err = tx.QueryContext(ctx, fmt.Sprintf("SELECT ts / %d, COUNT(*) FROM guardrail_events%s GROUP BY 1", step, w), w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		first := pts[0].TS.UnixNano() / step
		for rows.Next() {
			var b, n int64
			if err := rows.Scan(&b, &n); err != nil {
				return err
			}
			if i := b - first; i >= 0 && i < int64(len(pts)) {
				pts[i].Requests = n
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read guardrail stats: %w", err)
	}
	slices.SortFunc(gs.ByRule, func(a, b analytics.RuleHits) int {
		return cmp.Or(cmp.Compare(b.Hits, a.Hits), strings.Compare(a.RuleID, b.RuleID), strings.Compare(a.Action, b.Action))
	})
	return gs, nil
}

// GuardrailEvents lists the rule hits of q newest first by (ts, id).
func (s *Store) GuardrailEvents(ctx context.Context, q analytics.Query, limit int, cur string) ([]analytics.GuardrailEvent, *string, error) {
	c, err := parseCursor(cur)
	if err != nil {
		return nil, nil, err
	}
	limit = pageSize(limit)
	w := scope(q)
	w.after(c, "ts", "id")
	rows, err := s.r.QueryContext(ctx, `SELECT id, ts, tenant_id, gateway_id, request_id, rule_id, rule_name, kind,
		action, direction, excerpt FROM guardrail_events`+w.String()+` ORDER BY ts DESC, id DESC LIMIT `+strconv.Itoa(limit+1), w.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list guardrail events: %w", err)
	}
	defer rows.Close()
	out := []analytics.GuardrailEvent{}
	for rows.Next() {
		var ev analytics.GuardrailEvent
		var ts int64
		if err := rows.Scan(&ev.ID, &ts, &ev.TenantID, &ev.GatewayID, &ev.RequestID, &ev.RuleID, &ev.RuleName,
			&ev.Kind, &ev.Action, &ev.Direction, &ev.Excerpt); err != nil {
			return nil, nil, fmt.Errorf("list guardrail events: %w", err)
		}
		ev.TS = time.Unix(0, ts).UTC()
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list guardrail events: %w", err)
	}
	page, nc := next(out, limit, func(ev analytics.GuardrailEvent) cursor { return cursor{ev.TS.UnixNano(), ev.ID} })
	return page, nc, nil
}
