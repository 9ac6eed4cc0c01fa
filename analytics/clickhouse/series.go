package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
)

// seriesKey is the SQL of a GroupTimeseries group key, adding to c the
// condition of its rows (error_reason groups the errors only).
func seriesKey(groupBy string, c *cond) string {
	if groupBy == analytics.GroupErrorReason {
		c.add("status >= 400")
		return "if(" + analytics.RefusalSQL + ", error_code, '" + analytics.ReasonUpstream + "')"
	}
	return groupKeys[groupBy]
}

// GroupTimeseries answers q per group and bucket: the top limit groups by
// cost (then requests, then key) first, then the sums per bucket of each of
// them and of the rest together.
func (s *Store) GroupTimeseries(ctx context.Context, q analytics.Query, groupBy, interval string, limit int) (*analytics.GroupTimeseries, error) {
	step, err := analytics.CheckGroupSeries(groupBy, interval, limit)
	if err != nil {
		return nil, err
	}
	c := logCond(q)
	key := seriesKey(groupBy, c)
	rows, err := s.conn.Query(ctx, `SELECT `+key+` AS k, sum(cost_usd) AS cost, toInt64(count()) AS n
FROM request_logs `+c.sql()+` GROUP BY k ORDER BY cost DESC, n DESC, k ASC LIMIT `+itoa(int64(limit)), c.args...)
	if err != nil {
		return nil, fmt.Errorf("top groups by %s: %w", groupBy, err)
	}
	var keys []string
	for rows.Next() {
		var (
			k       string
			cost, n int64
		)
		if err := rows.Scan(&k, &cost, &n); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("top groups by %s: %w", groupBy, err)
		}
		keys = append(keys, k)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("top groups by %s: %w", groupBy, err)
	}
	if len(keys) == 0 {
		return analytics.BuildGroupTimeseries(q, groupBy, interval, step, nil, nil), nil
	}
	top := &cond{}
	top.in("g", keys)
	sec := itoa(int64(step / time.Second))
	rows, err = s.conn.Query(ctx, `SELECT b, t, if(t = 1, g, '') AS k, toInt64(count()), toInt64(countIf(status >= 400)), sum(cost_usd)
FROM (
    SELECT toInt64(intDiv(toUInt32(ts), `+sec+`)) * `+sec+` AS b, `+key+` AS g, toUInt8(`+top.parts[0]+`) AS t, status, cost_usd
    FROM request_logs `+c.sql()+`
)
GROUP BY b, t, k`, append(top.args, c.args...)...)
	if err != nil {
		return nil, fmt.Errorf("series by %s: %w", groupBy, err)
	}
	defer rows.Close()
	var out []analytics.SeriesRow
	for rows.Next() {
		var (
			r    analytics.SeriesRow
			t    uint8
			cost int64
		)
		if err := rows.Scan(&r.Bucket, &t, &r.Key, &r.Requests, &r.Errors, &cost); err != nil {
			return nil, fmt.Errorf("series by %s: %w", groupBy, err)
		}
		r.Top, r.CostUSD = t == 1, money.USD(cost)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series by %s: %w", groupBy, err)
	}
	return analytics.BuildGroupTimeseries(q, groupBy, interval, step, keys, out), nil
}
