package clickhouse

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/page"
)

// pageLimit is the page size of a listing asked for n rows: the one
// pagination policy of the admin API (package page).
func pageLimit(n int) int { return page.Clamp(n) }

// errCursor answers a cursor this backend did not make: a client error.
func errCursor() error { return analytics.InvalidCursor() }

// A cursor is the base64 (URL alphabet, no padding) of "<units>|<id>": the
// time of the last row of the page in the table's sub-second units since
// the epoch, and its id. The next page holds the rows before it in
// (time, id) descending order.
func encodeCursor(units int64, id string) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(units, 10) + "|" + id))
	return &c
}

func decodeCursor(c string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", errCursor()
	}
	num, id, ok := strings.Cut(string(b), "|")
	if !ok {
		return 0, "", errCursor()
	}
	units, err := strconv.ParseInt(num, 10, 64)
	if err != nil || units < 0 {
		return 0, "", errCursor()
	}
	return units, id, nil
}

// before adds "(time, key) < (units, id)" for a cursor, with a bound on the
// DateTime column that the primary key can use.
func (c *cond) before(tc timeCols, keyExpr string, cursor string) error {
	if cursor == "" {
		return nil
	}
	units, id, err := decodeCursor(cursor)
	if err != nil {
		return err
	}
	combined := tc.units()
	if tc.sec != "" {
		c.add(tc.sec+" <= toDateTime(?)", floorDiv(units, tc.per))
	}
	c.add("("+combined+" < ? OR ("+combined+" = ? AND "+keyExpr+" < ?))", units, units, id)
	return nil
}

// Logs lists the logs matching f, newest first by (ts, id), without bodies.
//
// It reads in two steps: the keys (ts, ts_ms, id) of the page first, then
// the page's rows. A single ORDER BY … LIMIT would read every column of every
// row in the range to sort them (18.16 has no lazy materialization).
func (s *Store) Logs(ctx context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error) {
	limit := pageLimit(f.Limit)
	c := logCond(f.Query)
	if f.Provider != "" {
		c.add("provider = ?", f.Provider)
	}
	if f.Model != "" {
		c.add("model = ?", f.Model)
	}
	if f.Status != 0 {
		c.add("status = ?", int32(f.Status))
	}
	if f.Operation != "" {
		c.add("operation = ?", f.Operation)
	}
	if f.ErrorCode != "" {
		c.add("error_code = ?", f.ErrorCode)
	}
	mdKeys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		mdKeys = append(mdKeys, k)
	}
	slices.Sort(mdKeys)
	for _, k := range mdKeys {
		c.add("arrayExists((mk, mv) -> mk = ? AND mv = ?, metadata_keys, metadata_values)", k, f.Metadata[k])
	}
	if err := c.before(logTime, "id", f.Cursor); err != nil {
		return nil, nil, err
	}

	// Step 1: the page's keys.
	keys, err := s.conn.Query(ctx, "SELECT tenant_id, toInt64(ts), ts_ms, id FROM request_logs "+c.sql()+
		" ORDER BY ts DESC, ts_ms DESC, id DESC LIMIT "+itoa(int64(limit+1)), c.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	type key struct {
		tenant, id string
		ms         int64
	}
	var page []key
	for keys.Next() {
		var (
			k   key
			sec int64
			ms  uint16
		)
		if err := keys.Scan(&k.tenant, &sec, &ms, &k.id); err != nil {
			_ = keys.Close()
			return nil, nil, fmt.Errorf("list logs: %w", err)
		}
		k.ms = sec*1000 + int64(ms)
		page = append(page, k)
	}
	_ = keys.Close()
	if err := keys.Err(); err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	var next *string
	if len(page) > limit {
		page = page[:limit]
		last := page[limit-1]
		next = encodeCursor(last.ms, last.id)
	}
	if len(page) == 0 {
		return []analytics.Record{}, nil, nil
	}

	// Step 2: their rows, found through the primary key.
	tenants, ids := []string{}, make([]string, len(page))
	for i, k := range page {
		ids[i] = k.id
		if !slices.Contains(tenants, k.tenant) {
			tenants = append(tenants, k.tenant)
		}
	}
	newest, oldest := page[0].ms, page[len(page)-1].ms
	pc := &cond{}
	pc.in("tenant_id", tenants)
	pc.add("ts >= toDateTime(?)", floorDiv(oldest, 1000))
	pc.add("ts <= toDateTime(?)", floorDiv(newest, 1000))
	pc.in("id", ids)
	lr := newLogReader(false)
	rows, err := s.conn.Query(ctx, "SELECT "+lr.cols+" FROM request_logs "+pc.sql(), pc.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	defer rows.Close()
	byID := make(map[string]analytics.Record, len(page))
	for rows.Next() {
		r, err := lr.scan(rows)
		if err != nil {
			return nil, nil, fmt.Errorf("list logs: %w", err)
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	out := make([]analytics.Record, 0, len(page))
	for _, k := range page {
		if r, ok := byID[k.id]; ok {
			out = append(out, r)
		}
	}
	return out, next, nil
}

// Log reads one log with its bodies; nil when there is none.
//
// Request ids are UUIDv7s made when the request arrived, and a log's ts is
// that moment: for such an id Log first looks within an hour of the id's
// time, which prunes the search to one or two daily partitions, and only
// when that finds nothing does it scan every partition.
func (s *Store) Log(ctx context.Context, id string) (*analytics.Record, error) {
	if at, ok := uuidV7Time(id); ok {
		c := &cond{}
		c.timeRange(logTime, at.Add(-time.Hour), at.Add(time.Hour))
		c.add("id = ?", id)
		r, err := s.readLog(ctx, c)
		if r != nil || err != nil {
			return r, err
		}
	}
	c := &cond{}
	c.add("id = ?", id)
	return s.readLog(ctx, c)
}

func (s *Store) readLog(ctx context.Context, c *cond) (*analytics.Record, error) {
	lr := newLogReader(true)
	rows, err := s.conn.Query(ctx, "SELECT "+lr.cols+" FROM request_logs "+c.sql()+" LIMIT 1", c.args...)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
		return nil, nil
	}
	r, err := lr.scan(rows)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return &r, nil
}

// uuidV7Time returns the time in a UUIDv7 (its first 48 bits, Unix
// milliseconds).
func uuidV7Time(id string) (time.Time, bool) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 {
		return time.Time{}, false
	}
	var ms int64
	for _, b := range u[:6] {
		ms = ms<<8 | int64(b)
	}
	return time.UnixMilli(ms).UTC(), true
}

// joinMap rebuilds a map from parallel key and value arrays.
func joinMap(keys, values []string) map[string]string {
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		if i < len(values) {
			m[k] = values[i]
		}
	}
	return m
}
