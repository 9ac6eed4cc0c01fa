package admin

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// checkInterval validates the time-series interval of range r (already
// checked): an empty one is hour for ranges up to 90 days and day beyond;
// minute serves at most 2 days and hour at most 90.
func checkInterval(interval string, r Range) (string, error) {
	span := r.To.Sub(r.From)
	switch interval {
	case "":
		if span > maxHourRange {
			return IntervalDay, nil
		}
		return IntervalHour, nil
	case IntervalMinute:
		if span > maxMinuteRange {
			return "", apierr.Invalid("interval", "interval minute serves ranges of at most 2 days; use hour or day")
		}
	case IntervalHour:
		if span > maxHourRange {
			return "", apierr.Invalid("interval", "interval hour serves ranges of at most 90 days; use day")
		}
	case IntervalDay:
	default:
		return "", apierr.Invalid("interval", "interval must be minute, hour or day")
	}
	return interval, nil
}

// SeriesQuery asks for usage per group over time (GroupTimeseries).
type SeriesQuery struct {
	// TenantID chooses a tenant for the Administrator ("" for all).
	TenantID string
	// GroupBy is model, provider, gateway, user, token, status,
	// error_code or error_reason (analytics.GroupErrorReason).
	GroupBy string
	// Interval is minute, hour or day ("" picks as Timeseries does).
	Interval string
	// Limit is how many groups get a series of their own (0 for
	// analytics.DefaultSeries, at most analytics.MaxSeries).
	Limit int
	Range Range
}

// GroupTimeseries answers the usage of a range per group and bucket: the
// top groups by cost, each a series, and the rest summed as "other". It
// shows what Analysis shows over time, to the same roles and scope.
func (s *Service) GroupTimeseries(ctx context.Context, p *auth.Principal, sq SeriesQuery) (*analytics.GroupTimeseries, error) {
	if err := s.can(ctx, p, auth.OpStatsAnalytics); err != nil {
		return nil, err
	}
	q, err := s.scope(ctx, p, sq.TenantID, false)
	if err != nil {
		return nil, err
	}
	if sq.Limit == 0 {
		sq.Limit = analytics.DefaultSeries
	}
	if sq.Limit < 1 || sq.Limit > analytics.MaxSeries {
		return nil, apierr.Invalid("limit", "limit must be between 1 and %d", analytics.MaxSeries)
	}
	r, err := s.checkRange(sq.Range)
	if err != nil {
		return nil, err
	}
	interval, err := checkInterval(sq.Interval, r)
	if err != nil {
		return nil, err
	}
	if _, err := analytics.CheckGroupSeries(sq.GroupBy, interval, sq.Limit); err != nil {
		return nil, apierr.Invalid("group_by", "%s", err.Error())
	}
	q.From, q.To = r.From, r.To
	gt, err := s.cfg.Analytics.GroupTimeseries(ctx, q, sq.GroupBy, interval, sq.Limit)
	if err != nil {
		return nil, fmt.Errorf("read series by %s: %w", sq.GroupBy, err)
	}
	if gt == nil {
		gt = &analytics.GroupTimeseries{From: q.From, To: q.To, Interval: interval, GroupBy: sq.GroupBy, Series: []analytics.Series{}}
	}
	return gt, nil
}

// TenantGuardrailStats answers the hits of the content rules of a tenant's
// gateways over a range (every tenant's for the Administrator with "").
func (s *Service) TenantGuardrailStats(ctx context.Context, p *auth.Principal, tenantID string, r Range) (*analytics.GuardrailStats, error) {
	q, err := s.rangeScope(ctx, p, auth.OpGuardrailStats, Scope{TenantID: tenantID}, false, r)
	if err != nil {
		return nil, err
	}
	return s.guardrailStats(ctx, q)
}
