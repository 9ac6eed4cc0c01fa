package rest

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
)

// maxMetadataFilters is the most ?metadata=key=value filters of a log
// query: a request carries at most 8 metadata values (CONTRACT §6), so more
// filters could match nothing.
const maxMetadataFilters = 8

// figureRoutes registers the read-only figures: stats, spend, analyses,
// request logs, traces, guardrail hits and circuit-breaker state.
func (a *adminAPI) figureRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/stats", a.stats)
	rt.Handle(http.MethodGet, "/admin/v1/stats/timeseries", a.timeseries)
	rt.Handle(http.MethodGet, "/admin/v1/stats/analytics", a.analysis)
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/spend", a.gatewaySpend)
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}/spend", a.tenantSpend)
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}/analytics", a.tenantAnalysis)
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}/alerts", a.tenantAlerts)

	rt.Handle(http.MethodGet, "/admin/v1/logs", a.logs)
	rt.Handle(http.MethodGet, "/admin/v1/logs/{id}", a.log)
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/traces", a.gatewayTraces)
	rt.Handle(http.MethodGet, "/admin/v1/traces/{id}", a.trace)

	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/guardrail-stats", a.guardrailStats)
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/guardrail-events", a.guardrailEvents)
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/circuit-breaker", a.circuitBreaker)
}

// scopeOf reads the scope of a figure: ?tenant= (a tenant for the
// Administrator) and ?gateway= (one gateway).
func scopeOf(r *http.Request) (admin.Scope, error) {
	tenant, err := queryParam(r, "tenant")
	if err != nil {
		return admin.Scope{}, err
	}
	gateway, err := queryParam(r, "gateway")
	return admin.Scope{TenantID: tenant, GatewayID: gateway}, err
}

// stats answers the usage figures. ?tenant= chooses a tenant for the
// Administrator, ?gateway= one gateway; the service applies the scope rule
// for every other role.
func (a *adminAPI) stats(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	sc, err := scopeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStats, refNone, "", err)
	}
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStats, refNone, "", err)
	}
	s, err := a.svc.StatsIn(ctx, p, sc, rg)
	return writeObject(w, http.StatusOK, s, err)
}

// timeseries answers the usage figures per ?interval= (the domain picks
// hour, or day for ranges over 90 days, when it is absent).
func (a *adminAPI) timeseries(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	sc, err := scopeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStatsTimeseries, refNone, "", err)
	}
	interval, err := queryParam(r, "interval")
	if err != nil {
		return a.refuse(r, auth.OpStatsTimeseries, refNone, "", err)
	}
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStatsTimeseries, refNone, "", err)
	}
	ts, err := a.svc.TimeseriesIn(ctx, p, sc, interval, rg)
	return writeObject(w, http.StatusOK, ts, err)
}

// analysis answers the figures grouped by ?group_by= (default model, set
// by the domain).
func (a *adminAPI) analysis(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	sc, err := scopeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStatsAnalytics, refNone, "", err)
	}
	groupBy, err := queryParam(r, "group_by")
	if err != nil {
		return a.refuse(r, auth.OpStatsAnalytics, refNone, "", err)
	}
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpStatsAnalytics, refNone, "", err)
	}
	an, err := a.svc.AnalysisIn(ctx, p, sc, groupBy, rg)
	return writeObject(w, http.StatusOK, an, err)
}

func (a *adminAPI) gatewaySpend(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGatewaySpend, refGateway, id, err)
	}
	s, err := a.svc.GatewaySpend(ctx, p, id, rg)
	return writeObject(w, http.StatusOK, s, err)
}

func (a *adminAPI) tenantSpend(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTenantSpend, refTenant, id, err)
	}
	s, err := a.svc.TenantSpend(ctx, p, id, rg)
	return writeObject(w, http.StatusOK, s, err)
}

func (a *adminAPI) tenantAnalysis(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTenantAnalytics, refTenant, id, err)
	}
	an, err := a.svc.TenantAnalysis(ctx, p, id, rg)
	return writeObject(w, http.StatusOK, an, err)
}

// tenantAlerts lists the budget alerts of a tenant, newest first
// (CONTRACT §14).
func (a *adminAPI) tenantAlerts(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTenantAlerts, refTenant, id, err)
	}
	l, err := a.svc.ListAlerts(ctx, p, id, pg)
	return writeList(w, l, err)
}

// logs lists request logs, filtered by the query parameters of CONTRACT §8.
func (a *adminAPI) logs(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	lq, err := a.logQuery(r)
	if err != nil {
		return a.refuse(r, auth.OpLogList, refNone, "", err)
	}
	l, err := a.svc.Logs(ctx, p, lq)
	return writeList(w, l, err)
}

// logQuery reads the filters, range and page of GET /admin/v1/logs.
func (a *adminAPI) logQuery(r *http.Request) (admin.LogQuery, error) {
	var lq admin.LogQuery
	q, err := query(r)
	if err != nil {
		return lq, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"tenant", &lq.TenantID}, {"gateway", &lq.GatewayID}, {"user", &lq.UserID},
		{"provider", &lq.Provider}, {"model", &lq.Model}, {"error_code", &lq.ErrorCode},
		{"operation", &lq.Operation}, {"token", &lq.TokenID}, {"status_class", &lq.StatusClass},
		{"search", &lq.Search}, {"sort", &lq.SortBy}, {"order", &lq.Order},
	} {
		if *f.dst, _, err = single(q, f.name); err != nil {
			return lq, err
		}
	}
	if s, ok, err := single(q, "status"); err != nil {
		return lq, err
	} else if ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return lq, apierr.Invalid("status", "status must be an HTTP status code from 100 to 599")
		}
		lq.Status = n
	}
	if lq.Metadata, err = metadataFilter(q["metadata"]); err != nil {
		return lq, err
	}
	if err := logBounds(q, &lq); err != nil {
		return lq, err
	}
	if s, ok, err := single(q, "count"); err != nil {
		return lq, err
	} else if ok {
		if lq.Count, err = strconv.ParseBool(s); err != nil {
			return lq, apierr.Invalid("count", "count must be true or false")
		}
	}
	if lq.Range, err = a.rangeOf(r); err != nil {
		return lq, err
	}
	lq.Page, err = pageOf(r)
	return lq, err
}

// logBounds reads the latency (whole milliseconds) and cost (decimal USD)
// bounds of a log query.
func logBounds(q url.Values, lq *admin.LogQuery) error {
	for _, b := range []struct {
		name string
		dst  **int64
		usd  bool
	}{
		{"min_latency_ms", &lq.LatencyMS.Min, false}, {"max_latency_ms", &lq.LatencyMS.Max, false},
		{"min_cost_usd", &lq.CostUSD.Min, true}, {"max_cost_usd", &lq.CostUSD.Max, true},
	} {
		s, ok, err := single(q, b.name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		n, ok := boundOf(s, b.usd)
		if !ok && b.usd {
			return apierr.Invalid(b.name, "%s must be an amount of USD, such as 0.05", b.name)
		}
		if !ok {
			return apierr.Invalid(b.name, "%s must be a whole number of milliseconds", b.name)
		}
		*b.dst = &n
	}
	return nil
}

// boundOf reads a bound: whole milliseconds, or decimal USD in money.USD
// units; neither may be negative.
func boundOf(s string, usd bool) (int64, bool) {
	if !usd {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n >= 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1e9 {
		return 0, false
	}
	return int64(money.FromFloat(f)), true
}

// metadataFilter reads repeated key=value filters; nil when there are none.
func metadataFilter(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	if len(pairs) > maxMetadataFilters {
		return nil, apierr.Invalid("metadata", "at most %d metadata filters are allowed", maxMetadataFilters)
	}
	m := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, apierr.Invalid("metadata", "a metadata filter must be key=value")
		}
		if _, dup := m[k]; dup {
			return nil, apierr.Invalid("metadata", "the metadata key %q is filtered on twice", k)
		}
		m[k] = v
	}
	return m, nil
}

func (a *adminAPI) log(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	rec, err := a.svc.Log(ctx, p, ps.Get("id"))
	return writeObject(w, http.StatusOK, rec, err)
}

func (a *adminAPI) gatewayTraces(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTraceList, refGateway, id, err)
	}
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTraceList, refGateway, id, err)
	}
	l, err := a.svc.GatewayTraces(ctx, p, id, rg, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) trace(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	t, err := a.svc.Trace(ctx, p, ps.Get("id"))
	return writeObject(w, http.StatusOK, t, err)
}

func (a *adminAPI) guardrailStats(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGuardrailStats, refGateway, id, err)
	}
	s, err := a.svc.GuardrailStats(ctx, p, id, rg)
	return writeObject(w, http.StatusOK, s, err)
}

func (a *adminAPI) guardrailEvents(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGuardrailEvents, refGateway, id, err)
	}
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGuardrailEvents, refGateway, id, err)
	}
	l, err := a.svc.GuardrailEvents(ctx, p, id, rg, pg)
	return writeList(w, l, err)
}

// breakerStates is the pinned shape of GET …/circuit-breaker (CONTRACT
// §11): every target at once, so there is no cursor.
type breakerStates struct {
	Data []admin.BreakerState `json:"data"`
}

func (a *adminAPI) circuitBreaker(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.CircuitBreaker(ctx, p, id)
	if err != nil {
		return err
	}
	if l == nil {
		return errNoResult
	}
	out := breakerStates{Data: l.Data}
	if out.Data == nil {
		out.Data = []admin.BreakerState{}
	}
	return JSON(w, http.StatusOK, out)
}
