package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics"
)

// Retried batches. A write whose outcome is unknown (the connection broke
// during Send, a timeout) may have stored some or all of its rows, and the
// pipeline writes the batch again under the same id. ClickHouse has no
// transactions, and 18.16 neither insert_deduplication_token nor
// deduplication on non-replicated tables, so the store deduplicates itself:
// every row carries its batch id, and a write that may be a retry first reads
// which rows of the batch are present (SELECT id … WHERE batch_id = ?, within
// the batch's tenants and time span, so the primary key keeps the read small)
// and inserts only the others. A first write checks nothing, so the common
// path costs one insert per table.
//
// A write "may be a retry" when the same store attempted the batch before
// (failed, or succeeded and sent again), or when a record of the batch is
// older than the store (a batch spilled by an earlier process and replayed
// after a restart).
//
// One window stays: an insert the client gave up on (a timeout) that the
// server commits after the retry's check. The tables are ReplacingMergeTrees
// keyed on the row's identity, so such a duplicate collapses at the next
// merge; the figures read without FINAL and could count it until then.

// maxRecentBatches is how many batch ids a store remembers: at the
// pipeline's batch sizes, far more than a retry or a spill replay spans.
const maxRecentBatches = 1 << 16

// Write stores a batch: its records, their spans and their guardrail events.
// Writing the same batch again stores nothing twice.
func (s *Store) Write(ctx context.Context, b *analytics.Batch) error {
	if b == nil || len(b.Records) == 0 {
		return nil
	}
	recs := uniqueRecords(b.Records)
	s.mu.Lock()
	check := !s.written.add(b.ID)
	s.mu.Unlock()
	if !check {
		for _, r := range recs {
			if r.TS.Before(s.opened) {
				check = true
				break
			}
		}
	}
	return s.write(ctx, b.ID, recs, check)
}

func (s *Store) write(ctx context.Context, batchID string, recs []*analytics.Record, check bool) error {
	events := eventsOf(recs)
	if check {
		p := presence{batchScope: newScope(recs), batchID: batchID}
		var err error
		p.table, p.key = "request_logs", "id"
		if recs, err = missing(ctx, s, p, recs, func(r *analytics.Record) string { return r.ID }); err != nil {
			return err
		}
		p.table, p.key = "guardrail_events", "concat(request_id, ' ', id)"
		if events, err = missing(ctx, s, p, events, func(e eventRow) string { return e.RequestID + " " + e.ID }); err != nil {
			return err
		}
	}
	// The two inserts run at once, each on its own connection: the server
	// writes each table's parts in its own thread. Write waits for both; a
	// failure of either leaves the batch to be retried, which the check
	// above makes safe. A record's spans travel on its row.
	var (
		wg             sync.WaitGroup
		logErr, evtErr error
	)
	wg.Go(func() { logErr = s.insertLogs(ctx, batchID, recs) })
	wg.Go(func() { evtErr = s.insertEvents(ctx, batchID, events) })
	wg.Wait()
	return errors.Join(logErr, evtErr)
}

// recentIDs is a set of the last n ids added (first in, first out).
type recentIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{set: make(map[string]struct{}), ring: make([]string, n)}
}

// add adds id and reports whether it was new.
func (r *recentIDs) add(id string) bool {
	if _, ok := r.set[id]; ok {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
	r.set[id] = struct{}{}
	return true
}

// uniqueRecords drops records repeating an earlier id of the batch.
func uniqueRecords(recs []*analytics.Record) []*analytics.Record {
	seen := make(map[string]struct{}, len(recs))
	out := recs[:0:0]
	for _, r := range recs {
		if r == nil {
			continue
		}
		if _, dup := seen[r.ID]; dup {
			continue
		}
		seen[r.ID] = struct{}{}
		out = append(out, r)
	}
	return out
}

// eventRow is a guardrail event with the request it belongs to.
type eventRow struct {
	*analytics.GuardrailEvent
	rec *analytics.Record
}

func eventsOf(recs []*analytics.Record) []eventRow {
	var events []eventRow
	for _, r := range recs {
		for i := range r.Events {
			events = append(events, eventRow{&r.Events[i], r})
		}
	}
	return events
}

// batchScope bounds where a batch's rows can be: its tenants and the seconds
// from its earliest to its latest time (of records and events).
type batchScope struct {
	tenants  []string
	from, to int64 // unix seconds, inclusive
}

func newScope(recs []*analytics.Record) batchScope {
	sc := batchScope{from: math.MaxInt64, to: math.MinInt64}
	seen := map[string]bool{}
	widen := func(tenant string, t time.Time) {
		if !seen[tenant] {
			seen[tenant] = true
			sc.tenants = append(sc.tenants, tenant)
		}
		sc.from, sc.to = min(sc.from, t.Unix()), max(sc.to, t.Unix())
	}
	for _, r := range recs {
		widen(r.TenantID, r.TS)
		for _, e := range r.Events {
			widen(e.TenantID, e.TS)
		}
	}
	return sc
}

// presence selects the stored rows of a batch in one table: key is the SQL
// of a row's identity. Every table has ts.
type presence struct {
	batchScope
	batchID    string
	table, key string
}

// missing returns the rows of the batch whose key is not yet stored.
func missing[T any](ctx context.Context, s *Store, p presence, rows []T, key func(T) string) ([]T, error) {
	if len(rows) == 0 {
		return rows, nil
	}
	c := &cond{}
	c.in("tenant_id", p.tenants)
	c.add("ts >= toDateTime(?)", p.from)
	c.add("ts <= toDateTime(?)", p.to)
	c.add("batch_id = ?", p.batchID)
	res, err := s.conn.Query(ctx, "SELECT "+p.key+" FROM "+p.table+" "+c.sql(), c.args...)
	if err != nil {
		return nil, fmt.Errorf("read rows of batch %s in %s: %w", p.batchID, p.table, err)
	}
	defer res.Close()
	present := map[string]bool{}
	for res.Next() {
		var k string
		if err := res.Scan(&k); err != nil {
			return nil, fmt.Errorf("read rows of batch %s in %s: %w", p.batchID, p.table, err)
		}
		present[k] = true
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("read rows of batch %s in %s: %w", p.batchID, p.table, err)
	}
	if len(present) == 0 {
		return rows, nil
	}
	out := rows[:0:0]
	for _, r := range rows {
		if !present[key(r)] {
			out = append(out, r)
		}
	}
	return out, nil
}

// logColumns are request_logs' columns in insert order. An explicit list:
// 18.16 needs one for PrepareBatch.
const logColumns = "tenant_id, ts, ts_ms, id, gateway_id, token_id, user_id, provider, model, route, " +
	"status, error_code, latency_ms, ttfb_ms, tokens_in, tokens_out, cached_tokens, cost_usd, cache, attempts, " +
	"rule_hits, metadata_keys, metadata_values, trace_id, client_ip, user_agent, request_body, response_body, " +
	"flags, cache_saved_usd, batch_id, span_count, trace_root, root_start_us, root_duration_us, spans"

// insertLogs inserts records column by column (one slice per column: far
// fewer conversions than row-wise Append), each with its spans.
func (s *Store) insertLogs(ctx context.Context, batchID string, recs []*analytics.Record) error {
	if len(recs) == 0 {
		return nil
	}
	n := len(recs)
	var (
		tenant, id, gateway, token, user, provider, model, route = mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n)
		errCode, cache, trace, ip, ua, reqBody, respBody, batch  = mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n)
		ts, latency, ttfb, tin, tout, tcached, cost, saved       = mkI64(n), mkI64(n), mkI64(n), mkI64(n), mkI64(n), mkI64(n), mkI64(n), mkI64(n)
		tsMS                                                     = make([]uint16, n)
		status, attempts                                         = make([]int32, n), make([]int32, n)
		ruleHits, mdKeys, mdValues, flags                        = mkArr(n), mkArr(n), mkArr(n), mkArr(n)
		spanCount                                                = make([]uint32, n)
		traceRoot                                                = make([]uint8, n)
		rootStart                                                = mkI64(n)
		rootDur                                                  = make([]uint64, n)
		spans                                                    = mkStr(n)
		enc                                                      spanEncoder
	)
	for i, r := range recs {
		tenant[i], id[i], gateway[i], token[i], user[i] = r.TenantID, r.ID, r.GatewayID, r.TokenID, r.UserID
		provider[i], model[i], route[i], errCode[i], cache[i] = r.Provider, r.Model, r.Route, r.ErrorCode, r.Cache
		trace[i], ip[i], ua[i], reqBody[i], respBody[i], batch[i] = r.TraceID, r.ClientIP, r.UserAgent, r.RequestBody, r.ResponseBody, batchID
		ts[i], tsMS[i] = splitMS(r.TS)
		status[i], attempts[i] = int32(r.Status), int32(r.Attempts)
		latency[i], ttfb[i], tin[i], tout[i], tcached[i] = r.LatencyMS, r.TTFBMS, r.TokensIn, r.TokensOut, r.CachedTokens
		cost[i], saved[i] = int64(r.CostUSD), int64(r.CacheSavedUSD)
		ruleHits[i], flags[i] = nonNil(r.RuleHits), nonNil(r.Flags)
		mdKeys[i], mdValues[i] = splitMap(r.Metadata)
		spanCount[i] = uint32(len(r.Spans))
		if root := rootSpan(r.Spans); root != nil {
			traceRoot[i], rootStart[i], rootDur[i] = 1, root.Start.UnixMicro(), durationUS(root.DurationMS)
		}
		spans[i] = enc.encode(r.Spans)
	}
	return s.insert(ctx, "request_logs", logColumns, n, tenant, ts, tsMS, id, gateway, token, user, provider, model, route,
		status, errCode, latency, ttfb, tin, tout, tcached, cost, cache, attempts,
		ruleHits, mdKeys, mdValues, trace, ip, ua, reqBody, respBody, flags, saved, batch,
		spanCount, traceRoot, rootStart, rootDur, spans)
}

const eventColumns = "tenant_id, gateway_id, user_id, ts, ts_ms, id, request_id, rule_id, rule_name, kind, action, direction, excerpt, batch_id"

func (s *Store) insertEvents(ctx context.Context, batchID string, events []eventRow) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	var (
		tenant, gateway, id, req, rule, ruleName, kind, action = mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n), mkStr(n)
		dir, excerpt, user, batch                              = mkStr(n), mkStr(n), mkStr(n), mkStr(n)
		ts                                                     = mkI64(n)
		tsMS                                                   = make([]uint16, n)
	)
	for i, e := range events {
		tenant[i], gateway[i], user[i], id[i], req[i], batch[i] = e.TenantID, e.GatewayID, e.rec.UserID, e.ID, e.RequestID, batchID
		rule[i], ruleName[i], kind[i], action[i], dir[i], excerpt[i] = e.RuleID, e.RuleName, e.Kind, e.Action, e.Direction, e.Excerpt
		ts[i], tsMS[i] = splitMS(e.TS)
	}
	return s.insert(ctx, "guardrail_events", eventColumns, n, tenant, gateway, user, ts, tsMS, id, req, rule, ruleName, kind, action, dir, excerpt, batch)
}

// insert sends one INSERT of n rows given as one slice per column, in the
// order of columns. An Array(String) column comes as [][]string and is
// appended row by row: the driver's Append takes a [][]string through
// reflection, its AppendRow a []string without.
func (s *Store) insert(ctx context.Context, table, columns string, n int, cols ...any) error {
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+columns+")")
	if err != nil {
		return fmt.Errorf("prepare insert into %s: %w", table, err)
	}
	defer b.Close()
	for i, c := range cols {
		if err := appendColumn(b.Column(i), c); err != nil {
			return fmt.Errorf("insert into %s: column %d: %w", table, i, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("insert %d rows into %s: %w", n, table, err)
	}
	return nil
}

func appendColumn(col driver.BatchColumn, values any) error {
	rows, ok := values.([][]string)
	if !ok {
		return col.Append(values)
	}
	for _, r := range rows {
		if err := col.AppendRow(r); err != nil {
			return err
		}
	}
	return nil
}

func mkStr(n int) []string   { return make([]string, n) }
func mkI64(n int) []int64    { return make([]int64, n) }
func mkArr(n int) [][]string { return make([][]string, n) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// splitMap returns a map as parallel key and value arrays, keys sorted, so
// that equal maps store equal rows.
func splitMap(m map[string]string) (keys, values []string) {
	keys = make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	values = make([]string, len(keys))
	for i, k := range keys {
		values[i] = m[k]
	}
	return keys, values
}

// splitMS splits a time into unix seconds and milliseconds; the stored
// precision is the millisecond (rounded down).
func splitMS(t time.Time) (int64, uint16) {
	ms := t.UnixMilli()
	return floorDiv(ms, 1000), uint16(ms - floorDiv(ms, 1000)*1000)
}

// durationUS converts a span duration to whole microseconds (spans measure
// in microseconds; DurationMS carries them as a fraction of milliseconds).
func durationUS(ms float64) uint64 {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	return uint64(math.Round(ms * 1000))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
