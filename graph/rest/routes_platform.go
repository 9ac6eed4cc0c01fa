package rest

import (
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/page"
)

// platformRoutes registers what is not under a tenant: the playground,
// model prices, the provider and model catalog, the audit log and client
// error reports.
func (a *adminAPI) platformRoutes(rt *Router) {
	rt.Handle(http.MethodPost, "/admin/v1/playground/token", a.playgroundToken)
	rt.Handle(http.MethodGet, "/admin/v1/playground/search", a.playgroundSearch)
	rt.Handle(http.MethodGet, "/admin/v1/playground/trace/{id}", a.playgroundTrace)
	rt.Handle(http.MethodGet, "/admin/v1/playground/requests/{id}", a.playgroundRequest)

	rt.Handle(http.MethodGet, "/admin/v1/model-prices", a.listModelPrices)
	rt.Handle(http.MethodPut, "/admin/v1/model-prices", a.putModelPrices)
	rt.Handle(http.MethodGet, "/admin/v1/unpriced-models", a.unpricedModels)
	// Model ids may contain '/' (openrouter, together): the rest capture
	// takes the remaining segments.
	rt.Handle(http.MethodDelete, "/admin/v1/model-prices/{provider}/{model...}", a.deleteModelPrice)

	rt.Handle(http.MethodGet, "/admin/v1/providers", a.listProviders)
	rt.Handle(http.MethodGet, "/admin/v1/models", a.listModels)

	rt.Handle(http.MethodGet, "/admin/v1/audit-log", a.listAudit)

	rt.Handle(http.MethodPost, "/admin/v1/client-errors", a.reportClientError)
	rt.Handle(http.MethodGet, "/admin/v1/client-errors", a.listClientErrors)
}

// playgroundTokenInput is the body of POST /admin/v1/playground/token.
type playgroundTokenInput struct {
	GatewayID string `json:"gateway_id"`
}

// playgroundToken mints a short-lived inference token of the caller for a
// gateway. The gateway is named in the body, so the service checks it
// after the body is read.
func (a *adminAPI) playgroundToken(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in playgroundTokenInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpPlaygroundToken, refNone, "", err)
	}
	t, err := a.svc.CreatePlaygroundToken(ctx, p, in.GatewayID)
	return writeObject(w, http.StatusCreated, t, err)
}

// playgroundSearch lists the models the caller can reach, matching ?q=.
// ?limit= absent is 0: the service's default.
func (a *adminAPI) playgroundSearch(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	q, err := queryParam(r, "q")
	if err != nil {
		return a.refuse(r, auth.OpPlaygroundSearch, refNone, "", err)
	}
	limit, err := intParam(r, "limit", 1, page.MaxLimit)
	if err != nil {
		return a.refuse(r, auth.OpPlaygroundSearch, refNone, "", err)
	}
	l, err := a.svc.SearchPlayground(ctx, p, q, limit)
	return writeList(w, l, err)
}

func (a *adminAPI) playgroundTrace(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	t, err := a.svc.PlaygroundTrace(ctx, p, ps.Get("id"))
	return writeObject(w, http.StatusOK, t, err)
}

// playgroundRequest answers the served target and cost of one of the
// caller's own requests.
func (a *adminAPI) playgroundRequest(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	pr, err := a.svc.GetPlaygroundRequest(ctx, p, ps.Get("id"))
	return writeObject(w, http.StatusOK, pr, err)
}

// unpricedModels lists the models served without a price over ?from= and
// ?to=, of ?tenant= (the Administrator's choice; the others' own tenant).
func (a *adminAPI) unpricedModels(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	tenant, err := queryParam(r, "tenant")
	if err != nil {
		return a.refuse(r, auth.OpModelPriceUnpriced, refNone, "", err)
	}
	rg, err := a.rangeOf(r)
	if err != nil {
		return a.refuse(r, auth.OpModelPriceUnpriced, refNone, "", err)
	}
	l, err := a.svc.UnpricedModels(ctx, p, tenant, rg)
	return writeList(w, l, err)
}

// listModelPrices lists prices, of one provider with ?provider=.
func (a *adminAPI) listModelPrices(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	provider, err := queryParam(r, "provider")
	if err != nil {
		return a.refuse(r, auth.OpModelPriceList, refNone, "", err)
	}
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpModelPriceList, refNone, "", err)
	}
	l, err := a.svc.ListModelPrices(ctx, p, provider, pg)
	return writeList(w, l, err)
}

// putModelPrices upserts a bare JSON array of prices (CONTRACT §11) and
// answers 200 with the prices written.
func (a *adminAPI) putModelPrices(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in []admin.PriceInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpModelPricePut, refNone, "", err)
	}
	l, err := a.svc.PutModelPrices(ctx, p, in)
	return writeList(w, l, err)
}

func (a *adminAPI) deleteModelPrice(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteModelPrice(ctx, p, ps.Get("provider"), ps.Get("model")))
}

func (a *adminAPI) listProviders(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.ListProviders(ctx, p)
	return writeList(w, l, err)
}

func (a *adminAPI) listModels(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.ListModels(ctx, p)
	return writeList(w, l, err)
}

// listAudit lists the audit log, filtered by ?tenant=, ?actor=, ?action=,
// ?resource_type= and, only when given, ?from= and ?to=: the audit log has
// no default window.
func (a *adminAPI) listAudit(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	f, err := auditFilter(r)
	if err != nil {
		return a.refuse(r, auth.OpAuditLog, refNone, "", err)
	}
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpAuditLog, refNone, "", err)
	}
	l, err := a.svc.ListAudit(ctx, p, f, pg)
	return writeList(w, l, err)
}

func auditFilter(r *http.Request) (admin.AuditFilter, error) {
	var f admin.AuditFilter
	q, err := query(r)
	if err != nil {
		return f, err
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"tenant", &f.TenantID}, {"actor", &f.ActorID}, {"action", &f.Action}, {"resource_type", &f.ResourceType},
	} {
		if *s.dst, _, err = single(q, s.name); err != nil {
			return f, err
		}
	}
	for _, t := range []struct {
		name string
		dst  **time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		v, ok, err := timeParam(q, t.name)
		if err != nil {
			return f, err
		}
		if ok {
			v = v.UTC()
			*t.dst = &v
		}
	}
	return f, nil
}

// reportClientError accepts an error report of the dashboard: 202 {"id"}.
func (a *adminAPI) reportClientError(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.ClientErrorInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpClientErrorCreate, refNone, "", err)
	}
	acc, err := a.svc.ReportClientError(ctx, p, in)
	return writeObject(w, http.StatusAccepted, acc, err)
}

func (a *adminAPI) listClientErrors(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpClientErrorList, refNone, "", err)
	}
	l, err := a.svc.ListClientErrors(ctx, p, pg)
	return writeList(w, l, err)
}
