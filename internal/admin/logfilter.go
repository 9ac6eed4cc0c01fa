package admin

import (
	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
)

// filter validates the filters and order of lq and returns them as an
// analytics filter (without scope, range or page).
func (lq *LogQuery) filter() (analytics.LogFilter, error) {
	f := analytics.LogFilter{
		Provider: lq.Provider, Model: lq.Model, Status: lq.Status, StatusClass: lq.StatusClass,
		ErrorCode: lq.ErrorCode, TokenID: lq.TokenID, Operation: lq.Operation, Metadata: lq.Metadata,
		Search: lq.Search, LatencyMS: lq.LatencyMS, CostUSD: lq.CostUSD,
	}
	for _, t := range []struct{ param, v string }{
		{"user", lq.UserID}, {"token", lq.TokenID}, {"provider", lq.Provider}, {"model", lq.Model},
		{"error_code", lq.ErrorCode}, {"search", lq.Search},
	} {
		if err := checkText(t.param, t.v, 256, false); err != nil {
			return f, err
		}
	}
	if lq.Operation != "" && !analytics.IsOperation(lq.Operation) {
		return f, apierr.Invalid("operation",
			"operation must be chat, completions, embeddings, responses, messages, count_tokens or models")
	}
	if lq.Status != 0 && (lq.Status < 100 || lq.Status > 599) {
		return f, apierr.Invalid("status", "status must be an HTTP status between 100 and 599")
	}
	if lq.StatusClass != "" {
		if _, err := analytics.StatusClassCond(lq.StatusClass); err != nil {
			return f, apierr.Invalid("status_class", "status_class must be 1xx, 2xx, 3xx, 4xx, 5xx or errors")
		}
	}
	for _, b := range []struct {
		param string
		b     analytics.Bounds
	}{{"latency_ms", lq.LatencyMS}, {"cost_usd", lq.CostUSD}} {
		if (b.b.Min != nil && *b.b.Min < 0) || (b.b.Max != nil && *b.b.Max < 0) {
			return f, apierr.Invalid(b.param, "the bounds of %s must not be negative", b.param)
		}
		if b.b.Min != nil && b.b.Max != nil && *b.b.Min > *b.b.Max {
			return f, apierr.Invalid(b.param, "the minimum of %s is above its maximum", b.param)
		}
	}
	if len(lq.Metadata) > maxLogMetadata {
		return f, apierr.Invalid("metadata", "at most %d metadata filters", maxLogMetadata)
	}
	for k, v := range lq.Metadata {
		if err := checkText("metadata", k, 256, true); err != nil {
			return f, err
		}
		if err := checkText("metadata", v, 1024, false); err != nil {
			return f, err
		}
	}
	if lq.SortBy != "" && !analytics.IsSortKey(lq.SortBy) {
		return f, apierr.Invalid("sort", "sort must be ts, latency, cost, tokens or status")
	}
	switch lq.Order {
	case "", "desc":
	case "asc":
		f.Sort.Asc = true
	default:
		return f, apierr.Invalid("order", "order must be asc or desc")
	}
	f.Sort.By = lq.SortBy
	return f, nil
}
