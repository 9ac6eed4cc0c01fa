package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/spanrow"
	"github.com/sluicehq/sluice/internal/money"
)

// request_logs is described once, here: logColumns lists its columns in
// insert order, each with its ClickHouse type, how the writer takes its
// value from a record and how the reader puts it back. The block builder
// (logBlock), the INSERT's column list, the reader (newLogReader: its
// SELECT list and scan), and the schema checks (CheckSchema against the
// server's table, TestLogColumnsMatchMigrations against the migrations)
// all follow it. Not described here: guardrail_events (insertEvents) and
// the spans columns' readers in traces.go.
//
// Adding a column is a migration (ALTER TABLE request_logs ADD COLUMN …)
// plus one entry at the end of logColumns; a value computed from several
// fields of a record goes into rowInput, a value read back from several
// columns into readState.

// readSet says which reads select a column.
type readSet uint8

const (
	// writeOnly columns are never read back into a record: the batch id
	// and the trace columns, which traces.go reads with its own queries.
	writeOnly readSet = iota
	// listed columns are read by the log listing and by Log.
	listed
	// body columns are read by Log only.
	body
)

// logColumn describes one column of request_logs.
type logColumn struct {
	name string
	// chType is the column's type as system.columns shows it.
	chType string
	read   readSet
	// buffer makes a block's buffer of the column's values.
	buffer func() columnBuffer
	// cell makes a reader's cell of the column; nil for writeOnly.
	cell func() scanCell
}

// logColumns are request_logs' columns in insert order (the order of the
// migrations' DDL).
var logColumns = []logColumn{
	str("tenant_id", listed, func(r *analytics.Record) *string { return &r.TenantID }),
	{name: "ts", chType: "DateTime('UTC')", read: listed,
		buffer: derived(func(in *rowInput) int64 { return in.sec }),
		cell:   readInto(func(st *readState) *time.Time { return &st.ts })},
	{name: "ts_ms", chType: "UInt16", read: listed,
		buffer: derived(func(in *rowInput) uint16 { return in.ms }),
		cell: readThen(func(st *readState) *uint16 { return &st.ms }, func(r *analytics.Record, st *readState) {
			r.TS = time.UnixMilli(st.ts.Unix()*1000 + int64(st.ms)).UTC()
		})},
	str("id", listed, func(r *analytics.Record) *string { return &r.ID }),
	str("gateway_id", listed, func(r *analytics.Record) *string { return &r.GatewayID }),
	str("token_id", listed, func(r *analytics.Record) *string { return &r.TokenID }),
	str("user_id", listed, func(r *analytics.Record) *string { return &r.UserID }),
	str("provider", listed, func(r *analytics.Record) *string { return &r.Provider }),
	str("model", listed, func(r *analytics.Record) *string { return &r.Model }),
	str("route", listed, func(r *analytics.Record) *string { return &r.Route }),
	num[int, int32]("status", "Int32", func(r *analytics.Record) *int { return &r.Status }),
	str("error_code", listed, func(r *analytics.Record) *string { return &r.ErrorCode }),
	i64("latency_ms", func(r *analytics.Record) *int64 { return &r.LatencyMS }),
	i64("ttfb_ms", func(r *analytics.Record) *int64 { return &r.TTFBMS }),
	i64("tokens_in", func(r *analytics.Record) *int64 { return &r.TokensIn }),
	i64("tokens_out", func(r *analytics.Record) *int64 { return &r.TokensOut }),
	i64("cached_tokens", func(r *analytics.Record) *int64 { return &r.CachedTokens }),
	num[money.USD, int64]("cost_usd", "Int64", func(r *analytics.Record) *money.USD { return &r.CostUSD }), // nano-dollars
	str("cache", listed, func(r *analytics.Record) *string { return &r.Cache }),
	num[int, int32]("attempts", "Int32", func(r *analytics.Record) *int { return &r.Attempts }),
	strArray("rule_hits", func(r *analytics.Record) *[]string { return &r.RuleHits }),
	// Metadata is a pair of parallel arrays, keys sorted (18.16 has no Map).
	{name: "metadata_keys", chType: "Array(String)", read: listed,
		buffer: derived(func(in *rowInput) []string { return in.mdKeys }),
		cell:   readInto(func(st *readState) *[]string { return &st.mdKeys })},
	{name: "metadata_values", chType: "Array(String)", read: listed,
		buffer: derived(func(in *rowInput) []string { return in.mdValues }),
		cell: readThen(func(st *readState) *[]string { return &st.mdValues }, func(r *analytics.Record, st *readState) {
			r.Metadata = joinMap(st.mdKeys, st.mdValues)
		})},
	str("trace_id", listed, func(r *analytics.Record) *string { return &r.TraceID }),
	str("client_ip", listed, func(r *analytics.Record) *string { return &r.ClientIP }),
	str("user_agent", listed, func(r *analytics.Record) *string { return &r.UserAgent }),
	str("request_body", body, func(r *analytics.Record) *string { return &r.RequestBody }),
	str("response_body", body, func(r *analytics.Record) *string { return &r.ResponseBody }),
	strArray("flags", func(r *analytics.Record) *[]string { return &r.Flags }),
	num[money.USD, int64]("cache_saved_usd", "Int64", func(r *analytics.Record) *money.USD { return &r.CacheSavedUSD }),
	{name: "batch_id", chType: "String", buffer: derived(func(in *rowInput) string { return in.batchID })},
	// The request's spans (migration 0004): their number, whether one is
	// the root, the root's start and duration, and the spans as JSON.
	{name: "span_count", chType: "UInt32", buffer: derived(func(in *rowInput) uint32 { return uint32(len(in.r.Spans)) })},
	{name: "trace_root", chType: "UInt8", buffer: derived(func(in *rowInput) uint8 { return in.hasRoot })},
	{name: "root_start_us", chType: "Int64", buffer: derived(func(in *rowInput) int64 { return in.row.RootStart })},
	{name: "root_duration_us", chType: "UInt64", buffer: derived(func(in *rowInput) uint64 { return in.rootDur })},
	{name: "spans", chType: "String", buffer: func() columnBuffer { return new(spansBuffer) }},
	// The request's front door (migration 0005); '' on older rows.
	str("operation", listed, func(r *analytics.Record) *string { return &r.Operation }),
	// Cache writes and reasoning tokens (migration 0006, CONTRACT §14); 0
	// on older rows.
	i64("cache_write_tokens", func(r *analytics.Record) *int64 { return &r.CacheWriteTokens }),
	i64("cache_write_1h_tokens", func(r *analytics.Record) *int64 { return &r.CacheWrite1hTokens }),
	i64("reasoning_tokens", func(r *analytics.Record) *int64 { return &r.ReasoningTokens }),
	// The error message the client got (migration 0007); '' on older rows.
	str("error_message", listed, func(r *analytics.Record) *string { return &r.ErrorMessage }),
}

// rowInput is what a row's values are taken from: the record, the batch,
// and the values computed once per row that several columns share.
type rowInput struct {
	r                *analytics.Record
	batchID          string
	sec              int64  // ts
	ms               uint16 // ts_ms
	mdKeys, mdValues []string
	hasRoot          uint8
	rootDur          uint64
	row              spanrow.Row
}

// readState holds the columns read back into one field of a record
// together: the second and its millisecond, the metadata's keys and values.
type readState struct {
	ts               time.Time
	ms               uint16
	mdKeys, mdValues []string
}

// columnBuffer holds one column's values of a block.
type columnBuffer interface {
	add(in *rowInput)
	// values returns the block's values as the driver's Append takes them,
	// valid until the next reset.
	values() any
	reset()
}

// scanCell reads one column of a row into a record.
type scanCell interface {
	// dest is where the driver scans the column: a field of r, or of st
	// for a value that needs converting or combining.
	dest(r *analytics.Record, st *readState) any
	// finish puts what dest received into r, once the whole row is scanned.
	finish(r *analytics.Record, st *readState)
}

// str is a String column of a string field.
func str(name string, read readSet, field func(*analytics.Record) *string) logColumn {
	off := fieldOffset(field)
	return logColumn{name: name, chType: "String", read: read,
		buffer: func() columnBuffer { return &fieldBuffer[string]{off: off} },
		cell:   func() scanCell { return fieldCell[string]{field} }}
}

// i64 is an Int64 column of an int64 field.
func i64(name string, field func(*analytics.Record) *int64) logColumn {
	off := fieldOffset(field)
	return logColumn{name: name, chType: "Int64", read: listed,
		buffer: func() columnBuffer { return &fieldBuffer[int64]{off: off} },
		cell:   func() scanCell { return fieldCell[int64]{field} }}
}

// fieldOffset returns the offset in a Record of the field that field
// returns, which must be a field of its argument (it panics otherwise, when
// logColumns is built). The writer reads plain string and int64 fields at
// their offsets: the block builder then makes no call per such cell, which
// saved about half of what a call per cell cost (BenchmarkLogBlock); the
// other typed buffers read their fields at offsets too, which spares them
// a closure call. The typed accessor keeps the table readable and
// type-checked.
func fieldOffset[T any](field func(*analytics.Record) *T) uintptr {
	var r analytics.Record
	p, base := uintptr(unsafe.Pointer(field(&r))), uintptr(unsafe.Pointer(&r))
	if p < base || p-base+unsafe.Sizeof(*new(T)) > unsafe.Sizeof(r) {
		panic("clickhouse: a column's field accessor returns no field of its record")
	}
	return p - base
}

// strArray is an Array(String) column of a []string field, which reads
// back as [] rather than nil.
func strArray(name string, field func(*analytics.Record) *[]string) logColumn {
	off := fieldOffset(field)
	return logColumn{name: name, chType: "Array(String)", read: listed,
		buffer: func() columnBuffer { return &arrayBuffer{off: off} },
		cell:   func() scanCell { return arrayCell{field} }}
}

// integer is what num converts between.
type integer interface {
	~int | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// num is an integer column of type S (chType) of an integer field of type
// F.
func num[F, S integer](name, chType string, field func(*analytics.Record) *F) logColumn {
	off := fieldOffset(field)
	return logColumn{name: name, chType: chType, read: listed,
		buffer: func() columnBuffer { return &numBuffer[F, S]{off: off} },
		cell:   func() scanCell { return &numCell[F, S]{field: field} }}
}

// derived is the buffer of a column whose value get computes from the row.
func derived[T any](get func(*rowInput) T) func() columnBuffer {
	return func() columnBuffer { return &derivedBuffer[T]{get: get} }
}

// readInto is the cell of a column scanned into the read state, for
// another column's finish to use.
func readInto[T any](at func(*readState) *T) func() scanCell {
	return func() scanCell { return stateCell[T]{at: at} }
}

// readThen is readInto with a finish.
func readThen[T any](at func(*readState) *T, then func(*analytics.Record, *readState)) func() scanCell {
	return func() scanCell { return stateCell[T]{at: at, then: then} }
}

// Buffers. Each appends one typed value per row: no boxing, no reflection.

// fieldBuffer holds a plain field of type T read at its offset (see
// fieldOffset); logBlock.add appends the string and int64 ones itself.
type fieldBuffer[T any] struct {
	off  uintptr
	vals []T
}

func (b *fieldBuffer[T]) add(in *rowInput) { b.vals = append(b.vals, *fieldAt[T](in.r, b.off)) }
func (b *fieldBuffer[T]) values() any      { return b.vals }
func (b *fieldBuffer[T]) reset()           { clear(b.vals); b.vals = b.vals[:0] }

type numBuffer[F, S integer] struct {
	off  uintptr
	vals []S
}

func (b *numBuffer[F, S]) add(in *rowInput) { b.vals = append(b.vals, S(*fieldAt[F](in.r, b.off))) }
func (b *numBuffer[F, S]) values() any      { return b.vals }
func (b *numBuffer[F, S]) reset()           { b.vals = b.vals[:0] }

// arrayBuffer holds a []string field, nil written as [].
type arrayBuffer struct {
	off  uintptr
	vals [][]string
}

func (b *arrayBuffer) add(in *rowInput) {
	b.vals = append(b.vals, nonNil(*fieldAt[[]string](in.r, b.off)))
}
func (b *arrayBuffer) values() any { return b.vals }
func (b *arrayBuffer) reset()      { clear(b.vals); b.vals = b.vals[:0] }

type derivedBuffer[T any] struct {
	get  func(*rowInput) T
	vals []T
}

func (b *derivedBuffer[T]) add(in *rowInput) { b.vals = append(b.vals, b.get(in)) }
func (b *derivedBuffer[T]) values() any      { return b.vals }
func (b *derivedBuffer[T]) reset()           { clear(b.vals); b.vals = b.vals[:0] } // drop the last batch's references

// spansBuffer encodes the rows' spans into one byte buffer and hands them
// to the driver as strings pointing into it: the driver copies them into
// its block before the buffer is reused.
type spansBuffer struct {
	enc  spanrow.Encoder
	text []byte
	end  []int
	strs []string
}

func (b *spansBuffer) add(in *rowInput) {
	b.text = b.enc.Append(b.text, in.r.Spans, in.row)
	b.end = append(b.end, len(b.text))
}

func (b *spansBuffer) values() any {
	prev := 0
	for _, end := range b.end {
		text := ""
		if end > prev {
			text = unsafe.String(&b.text[prev], end-prev)
		}
		b.strs = append(b.strs, text)
		prev = end
	}
	return b.strs
}

func (b *spansBuffer) reset() {
	clear(b.strs)
	b.strs, b.text, b.end = b.strs[:0], b.text[:0], b.end[:0]
}

// Cells.

type fieldCell[T any] struct{ field func(*analytics.Record) *T }

func (c fieldCell[T]) dest(r *analytics.Record, _ *readState) any { return c.field(r) }
func (fieldCell[T]) finish(*analytics.Record, *readState)         {}

type arrayCell struct {
	field func(*analytics.Record) *[]string
}

func (c arrayCell) dest(r *analytics.Record, _ *readState) any { return c.field(r) }
func (c arrayCell) finish(r *analytics.Record, _ *readState) {
	f := c.field(r)
	*f = nonNil(*f)
}

type numCell[F, S integer] struct {
	field func(*analytics.Record) *F
	v     S
}

func (c *numCell[F, S]) dest(*analytics.Record, *readState) any { return &c.v }
func (c *numCell[F, S]) finish(r *analytics.Record, _ *readState) {
	*c.field(r) = F(c.v)
}

type stateCell[T any] struct {
	at   func(*readState) *T
	then func(*analytics.Record, *readState)
}

func (c stateCell[T]) dest(_ *analytics.Record, st *readState) any { return c.at(st) }
func (c stateCell[T]) finish(r *analytics.Record, st *readState) {
	if c.then != nil {
		c.then(r, st)
	}
}

// logColumnList is the SQL list of the columns of logColumns that want
// reports true for, in table order.
func logColumnList(want func(logColumn) bool) string {
	var b strings.Builder
	for _, c := range logColumns {
		if want(c) {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.name)
		}
	}
	return b.String()
}

// logInsertColumns is the column list of the writer's INSERT: every
// column. An explicit list: 18.16 needs one for PrepareBatch.
func logInsertColumns() string { return logColumnList(func(logColumn) bool { return true }) }

// logReader scans rows of request_logs into records: the listed columns,
// and the bodies too when it reads them.
type logReader struct {
	cols  string // the SELECT list
	cells []scanCell
	dests []any
	cur   analytics.Record
	st    readState
}

func newLogReader(bodies bool) *logReader {
	want := func(c logColumn) bool { return c.read == listed || bodies && c.read == body }
	lr := &logReader{cols: logColumnList(want)}
	for _, c := range logColumns {
		if want(c) {
			cell := c.cell()
			lr.cells = append(lr.cells, cell)
			lr.dests = append(lr.dests, cell.dest(&lr.cur, &lr.st))
		}
	}
	return lr
}

// scan reads the current row.
func (lr *logReader) scan(rows driver.Rows) (analytics.Record, error) {
	lr.cur, lr.st = analytics.Record{}, readState{}
	if err := rows.Scan(lr.dests...); err != nil {
		return analytics.Record{}, err
	}
	for _, c := range lr.cells {
		c.finish(&lr.cur, &lr.st)
	}
	return lr.cur, nil
}

// CheckSchema checks that the server's request_logs has every column of
// logColumns with its type, so that a schema the writer does not fit (a
// migration missing, or a column changed by hand) fails at start rather
// than at every insert. Columns the table has beyond logColumns (added by
// a newer build) are fine: the writer leaves them to their defaults.
func (s *Store) CheckSchema(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'request_logs'")
	if err != nil {
		return fmt.Errorf("read the columns of request_logs: %w", err)
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return fmt.Errorf("read the columns of request_logs: %w", err)
		}
		have[name] = typ
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the columns of request_logs: %w", err)
	}
	var problems []string
	for _, c := range logColumns {
		switch typ, ok := have[c.name]; {
		case !ok:
			problems = append(problems, c.name+" is missing")
		case typ != c.chType:
			problems = append(problems, fmt.Sprintf("%s is %s, want %s", c.name, typ, c.chType))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("request_logs does not fit this build: %s", strings.Join(problems, "; "))
	}
	return nil
}

// fieldAt is the field of type T at offset off of r.
func fieldAt[T any](r *analytics.Record, off uintptr) *T {
	return (*T)(unsafe.Add(unsafe.Pointer(r), off))
}
