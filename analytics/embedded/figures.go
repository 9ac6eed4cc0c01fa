package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
)

// where builds the WHERE clause of a query and its arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// scope selects the rows of q: tenant, gateway, user, and ts >= From AND
// ts < To. request_logs and guardrail_events have these columns.
func scope(q analytics.Query) *where { return scopeOf(q, "") }

// scopeOf is scope on the columns of a table alias ("l.").
func scopeOf(q analytics.Query, alias string) *where {
	w := &where{}
	if q.TenantID != "" {
		w.add(alias+"tenant_id = ?", q.TenantID)
	}
	if q.GatewayID != "" {
		w.add(alias+"gateway_id = ?", q.GatewayID)
	}
	if q.UserID != "" {
		// The redundant user_id != '' lets the planner use the partial
		// index request_logs_user_ts.
		w.add(alias+"user_id = ? AND "+alias+"user_id != ''", q.UserID)
	}
	w.add(alias+"ts >= ? AND "+alias+"ts < ?", q.From.UnixNano(), q.To.UnixNano())
	return w
}

// groupColumns are the SQL keys of the group_by dimensions.
var groupColumns = map[string]string{
	"model":      "model",
	"provider":   "provider",
	"gateway":    "gateway_id",
	"user":       "user_id",
	"token":      "token_id",
	"status":     "CAST(status AS TEXT)",
	"error_code": "error_code",
}

// aggregate is the figures of a set of records.
type aggregate struct {
	key                      string
	requests, errors, cached int64
	tokensIn, tokensOut      int64
	cost, saved              int64
	unpriced                 int64
	p50, p95, p99            sql.NullInt64
}

// unpricedSQL is the condition of a record flagged unpriced
// (analytics.IsUnpriced): flags holds a JSON list of the flag words.
const unpricedSQL = `instr(flags, '"` + analytics.UnpricedFlag + `"') > 0`

func (a *aggregate) group() analytics.Group {
	return analytics.Group{Key: a.key, Requests: a.requests, Errors: a.errors, TokensIn: a.tokensIn,
		TokensOut: a.tokensOut, CostUSD: money.USD(a.cost), LatencyMS: a.latency(), UnpricedRequests: a.unpriced}
}

func (a *aggregate) latency() analytics.Latency {
	return analytics.Latency{P50: float64(a.p50.Int64), P95: float64(a.p95.Int64), P99: float64(a.p99.Int64)}
}

// aggregates computes the figures of q's records per key (a SQL
// expression; "”" for one group), ordered by order and limited to limit
// groups (0: all). Percentiles are nearest-rank: the window numbers the
// latencies of each group in ascending order and the value at rank
// ceil(q·n) = (n·permille + 999) / 1000 is kept. SQLite sorts the window
// in its own bounded sorter, spilling to disk, so memory stays flat.
func aggregates(ctx context.Context, db querier, q analytics.Query, key, order string, limit int) ([]aggregate, error) {
	w := scope(q)
	stmt := `WITH s AS (
		SELECT ` + key + ` AS k, status, cache, tokens_in, tokens_out, cost_usd, cache_saved_usd, latency_ms, ` + unpricedSQL + ` AS un,
			ROW_NUMBER() OVER (PARTITION BY ` + key + ` ORDER BY latency_ms) AS rn,
			COUNT(*) OVER (PARTITION BY ` + key + `) AS n
		FROM request_logs` + w.String() + `)
	SELECT k, COUNT(*), SUM(status >= 400), SUM(cache = 'HIT'), SUM(tokens_in), SUM(tokens_out),
		SUM(cost_usd), SUM(cache_saved_usd), SUM(un),
		MAX(CASE WHEN rn = (n * 500 + 999) / 1000 THEN latency_ms END),
		MAX(CASE WHEN rn = (n * 950 + 999) / 1000 THEN latency_ms END),
		MAX(CASE WHEN rn = (n * 990 + 999) / 1000 THEN latency_ms END)
	FROM s GROUP BY k`
	if order != "" {
		stmt += " ORDER BY " + order
	}
	if limit > 0 {
		stmt += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := db.QueryContext(ctx, stmt, w.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []aggregate
	for rows.Next() {
		var a aggregate
		if err := rows.Scan(&a.key, &a.requests, &a.errors, &a.cached, &a.tokensIn, &a.tokensOut,
			&a.cost, &a.saved, &a.unpriced, &a.p50, &a.p95, &a.p99); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTx runs fn in a read transaction: its queries see one snapshot, so
// that the parts of a figure agree while writes go on.
func (s *Store) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(tx)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats answers the usage figures of q.
func (s *Store) Stats(ctx context.Context, q analytics.Query) (*analytics.Stats, error) {
	as, err := aggregates(ctx, s.r, q, "''", "", 0)
	if err != nil {
		return nil, fmt.Errorf("read stats: %w", err)
	}
	st := &analytics.Stats{From: q.From, To: q.To}
	if len(as) == 1 {
		a := as[0]
		st.Requests, st.Errors, st.Cached = a.requests, a.errors, a.cached
		st.TokensIn, st.TokensOut, st.CostUSD = a.tokensIn, a.tokensOut, money.USD(a.cost)
		st.LatencyMS = a.latency()
		st.CacheHitRate = ratio(a.cached, a.requests)
		st.UnpricedRequests = a.unpriced
	}
	w := scope(q)
	rows, err := s.r.QueryContext(ctx, `SELECT error_code, COUNT(*) FROM request_logs`+w.String()+
		` AND `+analytics.RefusalSQL+` GROUP BY error_code`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("read refusals: %w", err)
	}
	defer rows.Close()
	var by []analytics.ReasonCount
	for rows.Next() {
		var r analytics.ReasonCount
		if err := rows.Scan(&r.Reason, &r.Count); err != nil {
			return nil, fmt.Errorf("read refusals: %w", err)
		}
		by = append(by, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read refusals: %w", err)
	}
	st.SetRefusals(by)
	return st, nil
}

// maxBuckets bounds a time series, whose empty buckets are made in memory.
const maxBuckets = 1_000_000

var steps = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}

// buckets returns one zero point per bucket from the bucket holding From
// up to To (exclusive). Buckets are multiples of the step since the Unix
// epoch, which are the UTC minutes, hours and days.
func buckets(q analytics.Query, interval string) ([]analytics.Point, error) {
	step, ok := steps[interval]
	if !ok {
		return nil, &analytics.QueryError{Param: "interval", Reason: "interval must be minute, hour or day"}
	}
	first := q.From.UTC().Truncate(step)
	if q.To.After(first) && q.To.Sub(first)/step >= maxBuckets {
		return nil, &analytics.QueryError{Param: "interval", Reason: fmt.Sprintf("the range holds more than %d %ss", maxBuckets, interval)}
	}
	pts := []analytics.Point{}
	for b := first; b.Before(q.To); b = b.Add(step) {
		pts = append(pts, analytics.Point{TS: b})
	}
	return pts, nil
}

// Timeseries answers the usage of q per UTC minute, hour or day.
func (s *Store) Timeseries(ctx context.Context, q analytics.Query, interval string) (*analytics.Timeseries, error) {
	pts, err := buckets(q, interval)
	if err != nil {
		return nil, err
	}
	if len(pts) > 0 {
		// The bucket is a group of aggregates, which also answers its
		// percentiles.
		step := steps[interval].Nanoseconds()
		as, err := aggregates(ctx, s.r, q, fmt.Sprintf("ts / %d", step), "", 0)
		if err != nil {
			return nil, fmt.Errorf("read timeseries: %w", err)
		}
		first := pts[0].TS.UnixNano() / step
		for _, a := range as {
			b, err := strconv.ParseInt(a.key, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("read timeseries: bucket %q: %w", a.key, err)
			}
			if i := b - first; i >= 0 && i < int64(len(pts)) {
				pts[i] = analytics.Point{TS: pts[i].TS, Requests: a.requests, Errors: a.errors, TokensIn: a.tokensIn,
					TokensOut: a.tokensOut, CostUSD: money.USD(a.cost), Cached: a.cached, CacheSavedUSD: money.USD(a.saved),
					LatencyMS: a.latency()}
			}
		}
	}
	return &analytics.Timeseries{Interval: interval, Points: pts}, nil
}

// Analysis groups the usage of q by a dimension, by requests descending.
func (s *Store) Analysis(ctx context.Context, q analytics.Query, groupBy string) (*analytics.Analysis, error) {
	col, ok := groupColumns[groupBy]
	if !ok {
		return nil, &analytics.QueryError{Param: "group_by", Reason: "group_by must be model, provider, gateway, user, token, status or error_code"}
	}
	as, err := aggregates(ctx, s.r, q, col, "COUNT(*) DESC, k", 0)
	if err != nil {
		return nil, fmt.Errorf("read analysis by %s: %w", groupBy, err)
	}
	a := &analytics.Analysis{From: q.From, To: q.To, GroupBy: groupBy, Groups: make([]analytics.Group, 0, len(as))}
	for i := range as {
		a.Groups = append(a.Groups, as[i].group())
	}
	return a, nil
}

// topLimit is the length of the top lists of a tenant's analysis.
const topLimit = 10

func top(ctx context.Context, tx *sql.Tx, q analytics.Query, col string) ([]analytics.Group, error) {
	as, err := aggregates(ctx, tx, q, col, "SUM(cost_usd) DESC, k", topLimit)
	if err != nil {
		return nil, err
	}
	gs := make([]analytics.Group, 0, len(as))
	for i := range as {
		gs = append(gs, as[i].group())
	}
	return gs, nil
}

// TenantAnalysis answers the top gateways, users and models of q by cost,
// its error rate and its cache savings.
func (s *Store) TenantAnalysis(ctx context.Context, q analytics.Query) (*analytics.TenantAnalysis, error) {
	a := &analytics.TenantAnalysis{From: q.From, To: q.To}
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		w := scope(q)
		var errs, saved int64
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(status >= 400), 0), COALESCE(SUM(cache_saved_usd), 0)
			FROM request_logs`+w.String(), w.args...).Scan(&a.Requests, &errs, &saved)
		if err != nil {
			return err
		}
		a.ErrorRate, a.CacheSavingsUSD = ratio(errs, a.Requests), money.USD(saved)
		if a.TopGateways, err = top(ctx, tx, q, "gateway_id"); err != nil {
			return err
		}
		if a.TopUsers, err = top(ctx, tx, q, "user_id"); err != nil {
			return err
		}
		a.TopModels, err = top(ctx, tx, q, "model")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read tenant analysis: %w", err)
	}
	return a, nil
}

// Spend answers the cost of q: total, by (provider, model) by cost
// descending, and by UTC day ascending.
func (s *Store) Spend(ctx context.Context, q analytics.Query) (*analytics.Spend, error) {
	sp := &analytics.Spend{From: q.From, To: q.To, ByModel: []analytics.ModelSpend{}, ByDay: []analytics.DaySpend{}}
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		w := scope(q)
		rows, err := tx.QueryContext(ctx, `SELECT provider, model, COUNT(*), SUM(cost_usd), SUM(tokens_in), SUM(tokens_out), SUM(`+unpricedSQL+`)
			FROM request_logs`+w.String()+`
			GROUP BY provider, model ORDER BY 4 DESC, model, provider`, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m analytics.ModelSpend
			if err := rows.Scan(&m.Provider, &m.Model, &m.Requests, &m.CostUSD, &m.TokensIn, &m.TokensOut, &m.UnpricedRequests); err != nil {
				return err
			}
			sp.TotalUSD += m.CostUSD
			sp.UnpricedRequests += m.UnpricedRequests
			sp.ByModel = append(sp.ByModel, m)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		day := (24 * time.Hour).Nanoseconds()
		rows, err = tx.QueryContext(ctx, fmt.Sprintf(`SELECT ts / %d, COUNT(*), SUM(cost_usd) FROM request_logs%s
			GROUP BY 1 ORDER BY 1`, day, w), w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d int64
			var ds analytics.DaySpend
			if err := rows.Scan(&d, &ds.Requests, &ds.CostUSD); err != nil {
				return err
			}
			ds.Day = time.Unix(0, d*day).UTC().Format(time.DateOnly)
			sp.ByDay = append(sp.ByDay, ds)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read spend: %w", err)
	}
	return sp, nil
}

// SpendSince sums the cost of a budget scope (analytics.SpendColumn)
// since start, across tenants.
func (s *Store) SpendSince(ctx context.Context, scope string, start time.Time) (int64, error) {
	col, id, err := analytics.SpendColumn(scope)
	if err != nil {
		return 0, err
	}
	var sum int64
	// A "total" budget starts at the zero time, whose UnixNano overflows:
	// nothing was logged before the epoch anyway.
	if start.Before(time.Unix(0, 0)) {
		start = time.Unix(0, 0)
	}
	// The id is never empty (SpendColumn): col != '' only lets the planner
	// use the partial user index.
	err = s.r.QueryRowContext(ctx, "SELECT COALESCE(SUM(cost_usd), 0) FROM request_logs WHERE "+col+" = ? AND "+col+" != '' AND ts >= ?",
		id, start.UnixNano()).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("read spend of %s: %w", scope, err)
	}
	return sum, nil
}
