package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// guardrailInterval is the bucket of the guardrail time series: hours up
// to 90 days, days beyond (as the default of /stats/timeseries).
func guardrailInterval(q analytics.Query) time.Duration {
	if q.To.Sub(q.From) > 90*24*time.Hour {
		return 24 * time.Hour
	}
	return time.Hour
}

func eventCond(q analytics.Query) *cond {
	c := &cond{}
	c.query(q, eventTime)
	return c
}

// GuardrailStats answers the rule hits of q: the total, per rule and action
// (hits descending, then rule id and action ascending; the rule's name on
// its newest event), and per hour or day (a point's requests are the hits).
func (s *Store) GuardrailStats(ctx context.Context, q analytics.Query) (*analytics.GuardrailStats, error) {
	c := eventCond(q)
	gs := &analytics.GuardrailStats{From: q.From, To: q.To, ByRule: []analytics.RuleHits{}}
	rows, err := s.conn.Query(ctx, `SELECT rule_id, argMax(rule_name, (ts, ts_ms, id)), action, toInt64(count()) AS hits
FROM guardrail_events `+c.sql()+` GROUP BY rule_id, action ORDER BY hits DESC, rule_id ASC, action ASC`, c.args...)
	if err != nil {
		return nil, fmt.Errorf("guardrail hits by rule: %w", err)
	}
	for rows.Next() {
		var h analytics.RuleHits
		if err := rows.Scan(&h.RuleID, &h.RuleName, &h.Action, &h.Hits); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("guardrail hits by rule: %w", err)
		}
		gs.Total += h.Hits
		gs.ByRule = append(gs.ByRule, h)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("guardrail hits by rule: %w", err)
	}
	iv := guardrailInterval(q)
	sec := itoa(int64(iv / time.Second))
	rows, err = s.conn.Query(ctx, `SELECT toInt64(intDiv(toUInt32(ts), `+sec+`)) * `+sec+` AS b, toInt64(count())
FROM guardrail_events `+c.sql()+` GROUP BY b`, c.args...)
	if err != nil {
		return nil, fmt.Errorf("guardrail hits over time: %w", err)
	}
	defer rows.Close()
	byBucket := map[int64]analytics.Point{}
	for rows.Next() {
		var (
			b int64
			p analytics.Point
		)
		if err := rows.Scan(&b, &p.Requests); err != nil {
			return nil, fmt.Errorf("guardrail hits over time: %w", err)
		}
		byBucket[b] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("guardrail hits over time: %w", err)
	}
	gs.Points = fill(q, iv, byBucket)
	return gs, nil
}

// GuardrailEvents lists the rule hits of q, newest first by (ts, id).
func (s *Store) GuardrailEvents(ctx context.Context, q analytics.Query, limit int, cursor string) ([]analytics.GuardrailEvent, *string, error) {
	limit = pageLimit(limit)
	c := eventCond(q)
	if err := c.before(eventTime, "id", cursor); err != nil {
		return nil, nil, err
	}
	rows, err := s.conn.Query(ctx, `SELECT toInt64(ts), ts_ms, id, tenant_id, gateway_id, request_id, rule_id, rule_name,
       kind, action, direction, excerpt
FROM guardrail_events `+c.sql()+` ORDER BY ts DESC, ts_ms DESC, id DESC LIMIT `+itoa(int64(limit+1)), c.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list guardrail events: %w", err)
	}
	defer rows.Close()
	out := []analytics.GuardrailEvent{}
	for rows.Next() {
		var (
			e   analytics.GuardrailEvent
			sec int64
			ms  uint16
		)
		if err := rows.Scan(&sec, &ms, &e.ID, &e.TenantID, &e.GatewayID, &e.RequestID, &e.RuleID, &e.RuleName,
			&e.Kind, &e.Action, &e.Direction, &e.Excerpt); err != nil {
			return nil, nil, fmt.Errorf("list guardrail events: %w", err)
		}
		e.TS = time.UnixMilli(sec*1000 + int64(ms)).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list guardrail events: %w", err)
	}
	var next *string
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = encodeCursor(last.TS.UnixMilli(), last.ID)
	}
	return out, next, nil
}
