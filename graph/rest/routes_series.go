package rest

import (
	"net/http"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// seriesRoutes registers the figures over time the dashboard's charts
// draw beyond /stats/timeseries: usage per group, and the rule hits of a
// tenant.
func (a *adminAPI) seriesRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/stats/series", a.seriesByGroup)
	rt.Handle(http.MethodGet, "/admin/v1/stats/guardrails", a.tenantGuardrailStats)
}

// seriesByGroup answers usage per ?group_by= (required) and ?interval=,
// the top ?limit= groups (default 5) each a series and the rest as other.
func (a *adminAPI) seriesByGroup(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var (
		sq  admin.SeriesQuery
		err error
	)
	refuse := func(err error) error { return a.refuse(r, auth.OpStatsAnalytics, refNone, "", err) }
	if sq.TenantID, err = queryParam(r, "tenant"); err != nil {
		return refuse(err)
	}
	if sq.GroupBy, err = requiredParam(r, "group_by"); err != nil {
		return refuse(err)
	}
	if sq.Interval, err = queryParam(r, "interval"); err != nil {
		return refuse(err)
	}
	if sq.Limit, err = intParam(r, "limit", 1, analytics.MaxSeries); err != nil {
		return refuse(err)
	}
	if sq.Range, err = a.rangeOf(r); err != nil {
		return refuse(err)
	}
	gt, err := a.svc.GroupTimeseries(ctx, p, sq)
	return writeObject(w, http.StatusOK, gt, err)
}

// tenantGuardrailStats answers the rule hits of the gateways of ?tenant=
// (the Administrator's choice; every other role its own tenant).
func (a *adminAPI) tenantGuardrailStats(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	tenant, err := queryParam(r, "tenant")
	if err != nil {
		return a.refuse(r, auth.OpGuardrailStats, refNone, "", err)
	}
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGuardrailStats, refNone, "", err)
	}
	gs, err := a.svc.TenantGuardrailStats(ctx, p, tenant, rg)
	return writeObject(w, http.StatusOK, gs, err)
}
