package clickhouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
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

// DefaultBatchSize is the batch size the pipeline should take with this
// backend (cmd/sluice's default for --analytics-batch-size with ClickHouse):
// at high volume fewer, larger parts cost the server less, and a batch
// this size goes as insertStreams INSERTs at once. At low volume the
// pipeline's flush interval makes batches small anyway.
const DefaultBatchSize = 100_000

// maxRecentBatches is how many batch ids a store remembers: at the
// pipeline's batch sizes, far more than a retry or a spill replay spans.
const maxRecentBatches = 1 << 16

// Write stores a batch: its records, their spans and their guardrail events.
// Writing the same batch again stores nothing twice.
func (s *Store) Write(ctx context.Context, b *analytics.Batch) error {
	if b == nil || len(b.Records) == 0 {
		return nil
	}
	recs := sortedRows(b.Records)
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
	// The inserts run at once, each on its own connection: the server
	// writes each part in its own thread while the client builds the next
	// (see insertStreams). Write waits for all; a failure of any leaves the
	// batch to be retried, which the check above makes safe. A record's
	// spans travel on its row.
	sortEvents(events)
	parts := splitRows(recs)
	errs := make([]error, len(parts)+1)
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() { errs[i] = s.insertLogs(ctx, batchID, part) })
	}
	wg.Go(func() { errs[len(parts)] = s.insertEvents(ctx, batchID, events) })
	wg.Wait()
	return errors.Join(errs...)
}

// Concurrent inserts. The server sorts, compresses and writes a part only
// once its INSERT ends, while the client sits idle; and the client builds
// the blocks of an INSERT while the server waits. A large batch therefore
// goes as insertStreams INSERTs at once, so that the two sides overlap. A
// part below minStreamRows is not worth its merge: smaller batches go whole.
const (
	insertStreams = 2
	minStreamRows = 25_000
)

// splitRows cuts recs into up to insertStreams runs of at least
// minStreamRows (one run when recs is shorter than two).
func splitRows(recs []*analytics.Record) [][]*analytics.Record {
	n := min(insertStreams, max(1, len(recs)/minStreamRows))
	parts := make([][]*analytics.Record, 0, n)
	for i := range n {
		parts = append(parts, recs[i*len(recs)/n:(i+1)*len(recs)/n])
	}
	return parts
}

// sortEvents orders events as guardrail_events' sort key (tenant_id,
// gateway_id, ts, ts_ms, id).
func sortEvents(events []eventRow) {
	slices.SortFunc(events, func(a, b eventRow) int {
		if c := strings.Compare(a.TenantID, b.TenantID); c != 0 {
			return c
		}
		if c := strings.Compare(a.GatewayID, b.GatewayID); c != 0 {
			return c
		}
		if c := cmp.Compare(a.TS.UnixMilli(), b.TS.UnixMilli()); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
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

// sortedRows returns the batch's records (nil ones left out) in the order
// of request_logs' sort key (tenant_id, ts, ts_ms, id), each row once: a
// record with the tenant, millisecond and id of another is the same
// request, handed over twice. The server checks whether a block is sorted
// before it sorts it, so rows that arrive in order skip the permutation of
// every column. The sort is on a copy of the keys: comparing records in
// place would chase a pointer per comparison.
func sortedRows(recs []*analytics.Record) []*analytics.Record {
	type key struct {
		tenant string
		ms     int64
		id     string
		r      *analytics.Record
	}
	keys := make([]key, 0, len(recs))
	for _, r := range recs {
		if r != nil {
			keys = append(keys, key{r.TenantID, r.TS.UnixMilli(), r.ID, r})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.tenant, b.tenant); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ms, b.ms); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]*analytics.Record, 0, len(keys))
	for i, k := range keys {
		if i > 0 && k.id == keys[i-1].id && k.ms == keys[i-1].ms && k.tenant == keys[i-1].tenant {
			continue
		}
		out = append(out, k.r)
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

// blockRows is how many rows the writer appends before it sends them as one
// block of the INSERT. The server gathers an INSERT's blocks into one part
// (min_insert_block_size_rows), so a batch still makes one part per table;
// the client meanwhile reuses one block's buffers for the next instead of
// growing them for the whole batch.
const blockRows = 8192

// logBlock holds the column values of up to blockRows request_logs rows,
// one buffer per entry of logColumns, reused from block to block and from
// batch to batch (Store.blocks).
type logBlock struct {
	cols []columnBuffer // in the order of logColumns
	// strs, ints and others partition cols: add appends the plain string
	// and int64 fields itself, the others through columnBuffer.add.
	strs   []*fieldBuffer[string]
	ints   []*fieldBuffer[int64]
	others []columnBuffer
	// kv backs the metadata keys and values of the block's rows.
	kv   []string
	in   rowInput
	vals []any
}

func newLogBlock() *logBlock {
	k := &logBlock{cols: make([]columnBuffer, len(logColumns)), vals: make([]any, 0, len(logColumns))}
	for i, c := range logColumns {
		k.cols[i] = c.buffer()
		switch b := k.cols[i].(type) {
		case *fieldBuffer[string]:
			k.strs = append(k.strs, b)
		case *fieldBuffer[int64]:
			k.ints = append(k.ints, b)
		default:
			k.others = append(k.others, b)
		}
	}
	return k
}

// reset empties the block, keeping its buffers and dropping its references
// to the last batch's records.
func (k *logBlock) reset() {
	for _, c := range k.cols {
		c.reset()
	}
	clear(k.kv)
	k.kv = k.kv[:0]
	clear(k.vals)
	k.vals = k.vals[:0]
	k.in = rowInput{}
}

// add appends a record's row: what several columns share is computed once
// (rowInput), then each column takes its value.
func (k *logBlock) add(r *analytics.Record, batchID string) {
	in := &k.in
	in.r, in.batchID = r, batchID
	in.sec, in.ms = splitMS(r.TS)
	in.mdKeys, in.mdValues = k.splitMap(r.Metadata)
	root := spanrow.Root(r.Spans)
	in.row = spanrow.RowOf(r, root)
	in.hasRoot, in.rootDur = 0, 0
	if root != nil {
		in.hasRoot, in.rootDur = 1, spanrow.DurationUS(root.DurationMS)
	}
	for _, c := range k.strs {
		c.vals = append(c.vals, *fieldAt[string](r, c.off))
	}
	for _, c := range k.ints {
		c.vals = append(c.vals, *fieldAt[int64](r, c.off))
	}
	for _, c := range k.others {
		c.add(in)
	}
}

// splitMap returns a map as parallel key and value arrays, keys sorted, so
// that equal maps store equal rows. Both share the block's kv buffer.
func (k *logBlock) splitMap(m map[string]string) (keys, values []string) {
	if len(m) == 0 {
		return []string{}, []string{}
	}
	from := len(k.kv)
	for key := range m {
		k.kv = append(k.kv, key)
	}
	keys = k.kv[from:len(k.kv):len(k.kv)]
	slices.Sort(keys)
	for _, key := range keys {
		k.kv = append(k.kv, m[key])
	}
	// The append may have moved kv: take both from where they are now.
	keys = k.kv[from : from+len(m) : from+len(m)]
	values = k.kv[from+len(m) : from+2*len(m) : from+2*len(m)]
	return keys, values
}

// columns returns the block's columns in the order of logColumns, valid
// until the next reset (the spans strings point into the block's buffer).
// Call it once per block.
func (k *logBlock) columns() []any {
	k.vals = k.vals[:0]
	for _, c := range k.cols {
		k.vals = append(k.vals, c.values())
	}
	return k.vals
}

// insertLogs inserts records with their spans in one INSERT, block by
// block (see blockRows).
func (s *Store) insertLogs(ctx context.Context, batchID string, recs []*analytics.Record) error {
	if len(recs) == 0 {
		return nil
	}
	k, _ := s.blocks.Get().(*logBlock)
	if k == nil {
		k = newLogBlock()
	}
	defer func() {
		k.reset()
		s.blocks.Put(k)
	}()
	return s.insertBlocks(ctx, "request_logs", logInsertColumns(), len(recs), func(from, to int) []any {
		k.reset()
		for _, r := range recs[from:to] {
			k.add(r, batchID)
		}
		return k.columns()
	})
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
	return s.insertBlocks(ctx, "guardrail_events", eventColumns, n, func(from, to int) []any {
		return []any{tenant[from:to], gateway[from:to], user[from:to], ts[from:to], tsMS[from:to], id[from:to], req[from:to],
			rule[from:to], ruleName[from:to], kind[from:to], action[from:to], dir[from:to], excerpt[from:to], batch[from:to]}
	})
}

// insertBlocks sends one INSERT of n rows in blocks of up to blockRows:
// block(from, to) returns the columns of rows [from, to), one slice per
// column in the order of columns, valid until the next call. An
// Array(String) column comes as [][]string and is appended row by row: the
// driver's Append takes a [][]string through reflection, its AppendRow a
// []string without.
func (s *Store) insertBlocks(ctx context.Context, table, columns string, n int, block func(from, to int) []any) error {
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+columns+")")
	if err != nil {
		return fmt.Errorf("prepare insert into %s: %w", table, err)
	}
	// On failure the INSERT is aborted (its connection closed), so that the
	// server drops the blocks already flushed: Close would end the INSERT
	// and store them, a part of the batch.
	sent := false
	defer func() {
		if !sent {
			_ = b.Abort()
		}
	}()
	for from := 0; from < n; from += blockRows {
		to := min(from+blockRows, n)
		for i, c := range block(from, to) {
			if err := appendColumn(b.Column(i), c); err != nil {
				return fmt.Errorf("insert into %s: column %d: %w", table, i, err)
			}
		}
		if to < n {
			if err := b.Flush(); err != nil {
				return fmt.Errorf("insert %d rows into %s: %w", n, table, err)
			}
		}
	}
	err = b.Send()
	sent = true // sent or failed: either way nothing is left to abort
	if err != nil {
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

func mkStr(n int) []string { return make([]string, n) }
func mkI64(n int) []int64  { return make([]int64, n) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// splitMS splits a time into unix seconds and milliseconds; the stored
// precision is the millisecond (rounded down).
func splitMS(t time.Time) (int64, uint16) {
	ms := t.UnixMilli()
	return floorDiv(ms, 1000), uint16(ms - floorDiv(ms, 1000)*1000)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
