package admin

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
)

// Analytics answers the figures of the admin API. The analytics package's
// backends implement it.
type Analytics interface {
	Stats(ctx context.Context, q analytics.Query) (*analytics.Stats, error)
	Timeseries(ctx context.Context, q analytics.Query, interval string) (*analytics.Timeseries, error)
	Analysis(ctx context.Context, q analytics.Query, groupBy string) (*analytics.Analysis, error)
	GroupTimeseries(ctx context.Context, q analytics.Query, groupBy, interval string, limit int) (*analytics.GroupTimeseries, error)
	Spend(ctx context.Context, q analytics.Query) (*analytics.Spend, error)
	TenantAnalysis(ctx context.Context, q analytics.Query) (*analytics.TenantAnalysis, error)
	Logs(ctx context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error)
	LogCount(ctx context.Context, f analytics.LogFilter) (int64, error)
	Log(ctx context.Context, id string) (*analytics.Record, error)
	Traces(ctx context.Context, q analytics.Query, limit int, cursor string) ([]analytics.TraceSummary, *string, error)
	Trace(ctx context.Context, id, tenantID string) (*analytics.Trace, error)
	GuardrailStats(ctx context.Context, q analytics.Query) (*analytics.GuardrailStats, error)
	GuardrailEvents(ctx context.Context, q analytics.Query, limit int, cursor string) ([]analytics.GuardrailEvent, *string, error)
	// PurgeTenant removes every analytics row of a tenant.
	PurgeTenant(ctx context.Context, tenantID string) error
}

// BreakerState is the circuit-breaker state of one gateway × provider key.
type BreakerState struct {
	Provider            string     `json:"provider"`
	KeyAlias            string     `json:"key_alias"`
	State               string     `json:"state"` // closed|open|half_open
	ConsecutiveFailures int        `json:"consecutive_failures"`
	OpenedAt            *time.Time `json:"opened_at"`
	NextProbeAt         *time.Time `json:"next_probe_at"`
	// LastError is the key's last upstream failure as this process saw
	// it (scrubbed of the key), "" when none; it stays after the breaker
	// closes again.
	LastError   string     `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
}

// BreakerStates reports circuit-breaker state; the proxy implements it.
type BreakerStates interface {
	BreakerStates(gatewayID string) map[string]BreakerState // keyed by provider + "/" + alias
}

// BudgetSpend reports how much of a budget's period is spent.
type BudgetSpend interface {
	// Spent returns the spend of scope ("gateway:<id>" or "user:<id>")
	// since the start of the current period.
	Spent(ctx context.Context, scope string, periodStart time.Time) (money.USD, error)
}

// noAnalytics answers empty figures until an analytics backend is wired.
type noAnalytics struct{}

func (noAnalytics) Stats(_ context.Context, q analytics.Query) (*analytics.Stats, error) {
	return &analytics.Stats{From: q.From, To: q.To}, nil
}
func (noAnalytics) Timeseries(_ context.Context, _ analytics.Query, iv string) (*analytics.Timeseries, error) {
	return &analytics.Timeseries{Interval: iv, Points: []analytics.Point{}}, nil
}
func (noAnalytics) Analysis(_ context.Context, q analytics.Query, g string) (*analytics.Analysis, error) {
	return &analytics.Analysis{From: q.From, To: q.To, GroupBy: g, Groups: []analytics.Group{}}, nil
}
func (noAnalytics) GroupTimeseries(_ context.Context, q analytics.Query, g, iv string, _ int) (*analytics.GroupTimeseries, error) {
	return &analytics.GroupTimeseries{From: q.From, To: q.To, Interval: iv, GroupBy: g, Series: []analytics.Series{}}, nil
}
func (noAnalytics) Spend(_ context.Context, q analytics.Query) (*analytics.Spend, error) {
	return &analytics.Spend{From: q.From, To: q.To, ByModel: []analytics.ModelSpend{}, ByDay: []analytics.DaySpend{}}, nil
}
func (noAnalytics) TenantAnalysis(_ context.Context, q analytics.Query) (*analytics.TenantAnalysis, error) {
	return &analytics.TenantAnalysis{From: q.From, To: q.To, TopGateways: []analytics.Group{}, TopUsers: []analytics.Group{}, TopModels: []analytics.Group{}}, nil
}
func (noAnalytics) Logs(context.Context, analytics.LogFilter) ([]analytics.Record, *string, error) {
	return []analytics.Record{}, nil, nil
}
func (noAnalytics) LogCount(context.Context, analytics.LogFilter) (int64, error) { return 0, nil }
func (noAnalytics) Log(context.Context, string) (*analytics.Record, error)       { return nil, nil }
func (noAnalytics) Traces(context.Context, analytics.Query, int, string) ([]analytics.TraceSummary, *string, error) {
	return []analytics.TraceSummary{}, nil, nil
}
func (noAnalytics) Trace(context.Context, string, string) (*analytics.Trace, error) { return nil, nil }
func (noAnalytics) GuardrailStats(_ context.Context, q analytics.Query) (*analytics.GuardrailStats, error) {
	return &analytics.GuardrailStats{From: q.From, To: q.To, ByRule: []analytics.RuleHits{}, Points: []analytics.Point{}}, nil
}
func (noAnalytics) GuardrailEvents(context.Context, analytics.Query, int, string) ([]analytics.GuardrailEvent, *string, error) {
	return []analytics.GuardrailEvent{}, nil, nil
}
func (noAnalytics) PurgeTenant(context.Context, string) error { return nil }
