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

// logFilterCond is the condition of every filter of f (not its cursor).
func logFilterCond(f *analytics.LogFilter) (*cond, error) {
	c := logCond(f.Query)
	conds, err := f.ColumnConds()
	if err != nil {
		return nil, err
	}
	for _, x := range conds {
		c.add(x.SQL, x.Args...)
	}
	mdKeys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		mdKeys = append(mdKeys, k)
	}
	slices.Sort(mdKeys)
	for _, k := range mdKeys {
		c.add("arrayExists((mk, mv) -> mk = ? AND mv = ?, metadata_keys, metadata_values)", k, f.Metadata[k])
	}
	if f.Search != "" {
		// positionCaseInsensitive folds ASCII letters only, as the
		// definition asks.
		c.add("(positionCaseInsensitive(id, ?) > 0 OR arrayExists(mv -> positionCaseInsensitive(mv, ?) > 0, metadata_values))",
			f.Search, f.Search)
	}
	return c, nil
}

// Logs lists the logs matching f in the order of f.Sort (newest first by
// (ts, id) by default), without bodies.
//
// It reads in two steps: the keys (ts, ts_ms, id and the sort key) of the
// page first, then the page's rows. A single ORDER BY … LIMIT would read
// every column of every row in the range to sort them (18.16 has no lazy
// materialization).
func (s *Store) Logs(ctx context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error) {
	limit := pageLimit(f.Limit)
	sortKey, err := f.Sort.Key()
	if err != nil {
		return nil, nil, err
	}
	c, err := logFilterCond(&f)
	if err != nil {
		return nil, nil, err
	}
	newest := f.Sort.IsNewestFirst()
	if newest {
		if err := c.before(logTime, "id", f.Cursor); err != nil {
			return nil, nil, err
		}
	} else if err := c.sortedAfter(f.Sort, sortKey, f.Cursor); err != nil {
		return nil, nil, err
	}
	keyCol := "toInt64(0)"
	if sortKey != "" {
		keyCol = "toInt64(" + sortKey + ")"
	}

	// Step 1: the page's keys.
	keys, err := s.conn.Query(ctx, "SELECT tenant_id, toInt64(ts), ts_ms, id, "+keyCol+" FROM request_logs "+c.sql()+
		" ORDER BY "+f.Sort.OrderBy(sortKey, "ts", "ts_ms", "id")+" LIMIT "+itoa(int64(limit+1)), c.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list logs: %w", err)
	}
	type key struct {
		tenant, id string
		ms, sort   int64
	}
	var page []key
	for keys.Next() {
		var (
			k   key
			sec int64
			ms  uint16
		)
		if err := keys.Scan(&k.tenant, &sec, &ms, &k.id, &k.sort); err != nil {
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
		if newest {
			next = encodeCursor(last.ms, last.id)
		} else {
			next = f.Sort.Encode(analytics.SortCursor{Key: last.sort, Time: last.ms, ID: last.id})
		}
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
	hi, lo := page[0].ms, page[0].ms
	for _, k := range page {
		hi, lo = max(hi, k.ms), min(lo, k.ms)
	}
	pc := &cond{}
	pc.in("tenant_id", tenants)
	pc.add("ts >= toDateTime(?)", floorDiv(lo, 1000))
	pc.add("ts <= toDateTime(?)", floorDiv(hi, 1000))
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

// sortedAfter adds the condition of the rows after a cursor of a listing in
// the order of ls (not newest first).
func (c *cond) sortedAfter(ls analytics.LogSort, sortKey, cursor string) error {
	sc, err := ls.Decode(cursor)
	if err != nil || sc == nil {
		return err
	}
	if sortKey == "" { // by time, oldest first: a bound the primary key can use
		c.add("ts >= toDateTime(?)", floorDiv(sc.Time, logTime.per))
	}
	expr, args := ls.After(sc, sortKey, logTime.units(), "id")
	c.add(expr, args...)
	return nil
}

// LogCount counts the logs matching f (its sort and page aside).
func (s *Store) LogCount(ctx context.Context, f analytics.LogFilter) (int64, error) {
	c, err := logFilterCond(&f)
	if err != nil {
		return 0, err
	}
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM request_logs "+c.sql(), c.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count logs: %w", err)
	}
	return int64(n), nil
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
