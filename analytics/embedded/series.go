package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/analytics"
)

// seriesKey is the SQL of a GroupTimeseries group key, adding to w the
// condition of its rows (error_reason groups the errors only).
func seriesKey(groupBy string, w *where) string {
	if groupBy == analytics.GroupErrorReason {
		w.add("status >= 400")
		return "CASE WHEN " + analytics.RefusalSQL + " THEN error_code ELSE '" + analytics.ReasonUpstream + "' END"
	}
	return groupColumns[groupBy]
}

// GroupTimeseries answers q per group and bucket: the top limit groups by
// cost (then requests, then key) first, then the sums per bucket of each of
// them and of the rest together, in one read snapshot.
func (s *Store) GroupTimeseries(ctx context.Context, q analytics.Query, groupBy, interval string, limit int) (*analytics.GroupTimeseries, error) {
	step, err := analytics.CheckGroupSeries(groupBy, interval, limit)
	if err != nil {
		return nil, err
	}
	w := scope(q)
	key := seriesKey(groupBy, w)
	var (
		keys []string
		out  []analytics.SeriesRow
	)
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+key+` AS k, SUM(cost_usd) AS c, COUNT(*) AS n FROM request_logs`+w.String()+
			fmt.Sprintf(` GROUP BY k ORDER BY c DESC, n DESC, k LIMIT %d`, limit), w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				k    string
				c, n int64
			)
			if err := rows.Scan(&k, &c, &n); err != nil {
				return err
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil || len(keys) == 0 {
			return err
		}
		args := make([]any, 0, len(keys)+len(w.args))
		for _, k := range keys {
			args = append(args, k)
		}
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ")
		rows, err = tx.QueryContext(ctx, fmt.Sprintf(`SELECT b, t, CASE WHEN t THEN g ELSE '' END AS k, COUNT(*), SUM(status >= 400), SUM(cost_usd)
			FROM (SELECT ts / %d AS b, %s AS g, (%s) IN (%s) AS t, status, cost_usd FROM request_logs%s)
			GROUP BY b, t, k`, step.Nanoseconds(), key, key, ph, w), append(args, w.args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r analytics.SeriesRow
			if err := rows.Scan(&r.Bucket, &r.Top, &r.Key, &r.Requests, &r.Errors, &r.CostUSD); err != nil {
				return err
			}
			r.Bucket *= int64(step.Seconds())
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read series by %s: %w", groupBy, err)
	}
	return analytics.BuildGroupTimeseries(q, groupBy, interval, step, keys, out), nil
}
