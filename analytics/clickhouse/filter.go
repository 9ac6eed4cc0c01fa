package clickhouse

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// cond builds a WHERE clause with ? placeholders and their arguments.
type cond struct {
	parts []string
	args  []any
}

func (c *cond) add(expr string, args ...any) {
	c.parts = append(c.parts, expr)
	c.args = append(c.args, args...)
}

// in adds "col IN (…)" over values (which must not be empty). Each value
// is its own placeholder: the driver binds a slice as an array literal,
// which IN does not take on 18.16.
func (c *cond) in(col string, values []string) {
	ph := strings.Repeat("?, ", len(values))
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	c.add(col+" IN ("+strings.TrimSuffix(ph, ", ")+")", args...)
}

// sql returns "WHERE …" (or "" without conditions).
func (c *cond) sql() string {
	if len(c.parts) == 0 {
		return ""
	}
	return "WHERE " + strings.Join(c.parts, " AND ")
}

// timeCols names a table's time columns: the DateTime of the second and the
// sub-second count in units of 1/per second; or, with no sec, one integer
// column (sub) counting those units since the epoch.
type timeCols struct {
	sec, sub string
	per      int64
}

var (
	logTime   = timeCols{"ts", "ts_ms", 1000}
	eventTime = logTime
	// rootTime is the start of a request's root span (traces).
	rootTime = timeCols{"", "root_start_us", 1_000_000}
)

// units is the SQL of the time in units of 1/per second.
func (tc timeCols) units() string {
	if tc.sec == "" {
		return tc.sub
	}
	return "(toUInt64(" + tc.sec + ") * " + itoa(tc.per) + " + " + tc.sub + ")"
}

// ceilUnits is t in units of 1/per second, rounded up: a stored time r (a
// whole number of units) is >= t exactly when r >= ceilUnits(t), and < t
// exactly when r < ceilUnits(t).
func ceilUnits(t time.Time, per int64) int64 {
	ns := t.UnixNano()
	step := int64(time.Second) / per
	u := floorDiv(ns, step)
	if u*step != ns {
		u++
	}
	return u
}

// timeRange adds ts >= from AND ts < to on the table's time columns. The
// condition on the DateTime column alone (which the partition key and the
// primary key use) is exact when a bound is a whole second; otherwise a
// second condition on the combined value decides within the bound's second.
func (c *cond) timeRange(tc timeCols, from, to time.Time) {
	combined := tc.units()
	if tc.sec == "" {
		if !from.IsZero() {
			c.add(combined+" >= ?", ceilUnits(from, tc.per))
		}
		if !to.IsZero() {
			c.add(combined+" < ?", ceilUnits(to, tc.per))
		}
		return
	}
	if !from.IsZero() {
		u := ceilUnits(from, tc.per)
		sec := floorDiv(u, tc.per)
		c.add(tc.sec+" >= toDateTime(?)", sec)
		if u != sec*tc.per {
			c.add(combined+" >= ?", u)
		}
	}
	if !to.IsZero() {
		u := ceilUnits(to, tc.per)
		sec := floorDiv(u, tc.per)
		if u == sec*tc.per {
			c.add(tc.sec+" < toDateTime(?)", sec)
		} else {
			c.add(tc.sec+" <= toDateTime(?)", sec)
			c.add(combined+" < ?", u)
		}
	}
}

// query adds the scope and range of q: tenant, gateway and user when set
// (every table carries the user of its request).
func (c *cond) query(q analytics.Query, tc timeCols) {
	if q.TenantID != "" {
		c.add("tenant_id = ?", q.TenantID)
	}
	if q.GatewayID != "" {
		c.add("gateway_id = ?", q.GatewayID)
	}
	if q.UserID != "" {
		c.add("user_id = ?", q.UserID)
	}
	c.timeRange(tc, q.From, q.To)
}

func logCond(q analytics.Query) *cond {
	c := &cond{}
	c.query(q, logTime)
	return c
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
