package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/budget"
)

// SpendColumn returns the request_logs column and the value a budget scope
// (budget.TenantScope, GatewayScope, UserScope, TokenScope) selects:
// tenant_id, gateway_id, user_id or token_id.
func SpendColumn(scope string) (col, id string, err error) {
	kind, id, ok := budget.SplitScope(scope)
	if !ok {
		return "", "", fmt.Errorf("budget scope %q is not tenant:, gateway:, user: or token:<id>", scope)
	}
	return kind + "_id", id, nil
}

// Backend is an analytics store: the writer of the pipeline and every
// query of the admin API. The ClickHouse backend (analytics/clickhouse)
// and the embedded one (analytics/embedded) implement it, and the
// conformance suite (analytics/analyticstest) holds them to the same
// answers. Its query methods are admin.Analytics.
//
// Definitions every backend follows exactly:
//   - A range is ts >= From AND ts < To (UTC).
//   - errors counts records with status >= 400; cached counts cache = "HIT".
//   - Latency percentiles are nearest-rank over latency_ms: the value at
//     1-based rank ceil(q·n) of the ascending values; 0 when n = 0.
//   - cache_hit_rate = cached / requests and error_rate = errors / requests
//     (0 when there are no requests).
//   - Time series have one point per bucket from the bucket holding From up
//     to To (exclusive), empty buckets included with zeros; buckets start on
//     the UTC minute, hour or day.
//   - Groups and top lists are ordered by requests (analysis) or cost (top
//     lists, spend by model) descending, then key ascending; top lists hold
//     at most 10 entries. Group keys: model, provider, gateway (id), user
//     (id), status (decimal), error_code.
//   - Spend by day lists the UTC days with requests, ascending (YYYY-MM-DD).
//   - Logs are listed newest first by (ts, id) unless LogFilter.Sort asks
//     for another order: by latency_ms, cost_usd, tokens_in + tokens_out
//     or status, then (ts, id), all ascending or all descending. The
//     cursor is opaque and holds the position in that order (a cursor of
//     another order is refused). Listings leave the bodies out; Log
//     returns them. LogCount counts what Logs lists over every page.
//   - Log filters (logfilter.go): a status class "Nxx" is status in
//     [N00, N99]; "errors" is status >= 400 or error_code != ”. Search
//     matches a record whose id or one of whose metadata values contains
//     the text, ASCII letters compared without case (other bytes exactly).
//     Latency and cost bounds include both ends.
//   - A trace is a request's spans; its root is the span without a parent
//     (the earliest, then least span id). Traces lists one summary per
//     request with a root starting in the range, newest first by (root
//     start, trace id). Trace reads, among the requests of the tenant asked
//     for that carry the trace id, the one whose root starts first.
type Backend interface {
	Writer
	Stats(ctx context.Context, q Query) (*Stats, error)
	Timeseries(ctx context.Context, q Query, interval string) (*Timeseries, error)
	Analysis(ctx context.Context, q Query, groupBy string) (*Analysis, error)
	// GroupTimeseries is Timeseries per group (GroupTimeseries in
	// series.go): the top limit groups and the rest as one.
	GroupTimeseries(ctx context.Context, q Query, groupBy, interval string, limit int) (*GroupTimeseries, error)
	Spend(ctx context.Context, q Query) (*Spend, error)
	TenantAnalysis(ctx context.Context, q Query) (*TenantAnalysis, error)
	Logs(ctx context.Context, f LogFilter) ([]Record, *string, error)
	LogCount(ctx context.Context, f LogFilter) (int64, error)
	Log(ctx context.Context, id string) (*Record, error)
	Traces(ctx context.Context, q Query, limit int, cursor string) ([]TraceSummary, *string, error)
	// Trace reads a trace within a tenant ("" for any): a client may send
	// one traceparent to gateways of several tenants.
	Trace(ctx context.Context, id, tenantID string) (*Trace, error)
	GuardrailStats(ctx context.Context, q Query) (*GuardrailStats, error)
	GuardrailEvents(ctx context.Context, q Query, limit int, cursor string) ([]GuardrailEvent, *string, error)
	// PurgeTenant removes every row of a tenant.
	PurgeTenant(ctx context.Context, tenantID string) error
	// Retain removes the tenant's rows older than before (log retention).
	Retain(ctx context.Context, tenantID string, before time.Time) error
	// SpendSince sums cost_usd of a budget scope since start: scope is
	// "tenant:<id>", "gateway:<id>", "user:<id>" or "token:<id>"
	// (SpendColumn). Budgets read their period spend here after a restart.
	SpendSince(ctx context.Context, scope string, start time.Time) (int64, error)
	Close() error
}
