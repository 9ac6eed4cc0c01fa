package analytics

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Bounds bound an integer column, both ends included; a nil end is open.
type Bounds struct {
	Min, Max *int64
}

// The orders of a log listing (LogSort.By).
const (
	SortTime    = "ts"
	SortLatency = "latency"
	SortCost    = "cost"
	SortTokens  = "tokens"
	SortStatus  = "status"
)

// sortColumns are the request_logs expressions of the sort keys other than
// time; tokens are tokens_in + tokens_out.
var sortColumns = map[string]string{
	SortLatency: "latency_ms",
	SortCost:    "cost_usd",
	SortTokens:  "(tokens_in + tokens_out)",
	SortStatus:  "status",
}

// LogSort orders a log listing: by By (SortTime when empty), descending
// unless Asc, ties broken by time and then id in the same direction. The
// zero LogSort is newest first.
type LogSort struct {
	By  string
	Asc bool
}

// IsSortKey reports whether by names an order of a log listing.
func IsSortKey(by string) bool {
	_, ok := sortColumns[by]
	return ok || by == SortTime
}

// Key returns the request_logs expression of the sort key: "" when the
// listing is ordered by time alone.
func (s LogSort) Key() (string, error) {
	if s.By == "" || s.By == SortTime {
		return "", nil
	}
	col, ok := sortColumns[s.By]
	if !ok {
		return "", &QueryError{Param: "sort", Reason: "sort must be ts, latency, cost, tokens or status"}
	}
	return col, nil
}

// KeyOf is the value of r's sort key under s (0 when sorted by time).
func (s LogSort) KeyOf(r *Record) int64 {
	switch s.By {
	case SortLatency:
		return r.LatencyMS
	case SortCost:
		return int64(r.CostUSD)
	case SortTokens:
		return r.TokensIn + r.TokensOut
	case SortStatus:
		return int64(r.Status)
	}
	return 0
}

// IsNewestFirst reports whether s is the default order, newest first.
func (s LogSort) IsNewestFirst() bool { return (s.By == "" || s.By == SortTime) && !s.Asc }

func (s LogSort) dir() string {
	if s.Asc {
		return "asc"
	}
	return "desc"
}

func (s LogSort) name() string {
	if s.By == "" {
		return SortTime
	}
	return s.By
}

// OrderBy is the ORDER BY list of the listing: the key (keyExpr, "" for
// none), then the given time columns and id, all in the direction of s.
func (s LogSort) OrderBy(keyExpr string, tail ...string) string {
	cols := tail
	if keyExpr != "" {
		cols = append([]string{keyExpr}, tail...)
	}
	d := " " + strings.ToUpper(s.dir())
	return strings.Join(cols, d+", ") + d
}

// SortCursor is the position of the last entry of a sorted page: its sort
// key (0 when sorted by time), its time in the backend's units and its id.
type SortCursor struct {
	Key, Time int64
	ID        string
}

// Encode returns the opaque cursor of c under s: base64url of
// "s1|<sort>|<asc or desc>|<key>|<time>|<id>", so that a cursor of another
// order is refused rather than misread.
func (s LogSort) Encode(c SortCursor) *string {
	raw := strings.Join([]string{"s1", s.name(), s.dir(), strconv.FormatInt(c.Key, 10), strconv.FormatInt(c.Time, 10), c.ID}, "|")
	out := base64.RawURLEncoding.EncodeToString([]byte(raw))
	return &out
}

// Decode reads a cursor Encode made under the same order; nil for "".
func (s LogSort) Decode(cursor string) (*SortCursor, error) {
	if cursor == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, InvalidCursor()
	}
	parts := strings.SplitN(string(b), "|", 6)
	if len(parts) != 6 || parts[0] != "s1" || parts[1] != s.name() || parts[2] != s.dir() {
		return nil, InvalidCursor()
	}
	key, err1 := strconv.ParseInt(parts[3], 10, 64)
	t, err2 := strconv.ParseInt(parts[4], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, InvalidCursor()
	}
	return &SortCursor{Key: key, Time: t, ID: parts[5]}, nil
}

// After is the condition of the entries after c in the order of s, over
// the key (keyExpr, "" when sorted by time), time and id expressions, with
// its arguments.
func (s LogSort) After(c *SortCursor, keyExpr, timeExpr, idExpr string) (string, []any) {
	op := "<"
	if s.Asc {
		op = ">"
	}
	sql := "(" + timeExpr + " " + op + " ? OR (" + timeExpr + " = ? AND " + idExpr + " " + op + " ?))"
	args := []any{c.Time, c.Time, c.ID}
	if keyExpr == "" {
		return sql, args
	}
	return "(" + keyExpr + " " + op + " ? OR (" + keyExpr + " = ? AND " + sql + "))", append([]any{c.Key, c.Key}, args...)
}

// Cond is one SQL condition with ? placeholders and its arguments.
type Cond struct {
	SQL  string
	Args []any
}

// StatusClassCond is the condition of a status class: "Nxx" (N from 1 to
// 5) or "errors" (status >= 400 or an error code).
func StatusClassCond(class string) (Cond, error) {
	if class == "errors" {
		return Cond{SQL: "(status >= 400 OR error_code != '')"}, nil
	}
	if len(class) == 3 && class[1:] == "xx" && class[0] >= '1' && class[0] <= '5' {
		lo := int64(class[0]-'0') * 100
		return Cond{SQL: "status >= ? AND status < ?", Args: []any{lo, lo + 100}}, nil
	}
	return Cond{}, &QueryError{Param: "status_class", Reason: "status_class must be 1xx, 2xx, 3xx, 4xx, 5xx or errors"}
}

// ColumnConds are the conditions of f on request_logs' own columns, in SQL
// both backends read: every filter but the scope, the range, metadata and
// search, which each backend writes for its own layout.
func (f *LogFilter) ColumnConds() ([]Cond, error) {
	var out []Cond
	for _, m := range []struct{ col, v string }{
		{"provider", f.Provider}, {"model", f.Model}, {"error_code", f.ErrorCode},
		{"operation", f.Operation}, {"token_id", f.TokenID},
	} {
		if m.v != "" {
			out = append(out, Cond{m.col + " = ?", []any{m.v}})
		}
	}
	if f.Status != 0 {
		out = append(out, Cond{"status = ?", []any{int64(f.Status)}})
	}
	if f.StatusClass != "" {
		c, err := StatusClassCond(f.StatusClass)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, b := range []struct {
		col string
		b   Bounds
	}{{"latency_ms", f.LatencyMS}, {"cost_usd", f.CostUSD}} {
		if b.b.Min != nil {
			out = append(out, Cond{b.col + " >= ?", []any{*b.b.Min}})
		}
		if b.b.Max != nil {
			out = append(out, Cond{b.col + " <= ?", []any{*b.b.Max}})
		}
	}
	return out, nil
}
