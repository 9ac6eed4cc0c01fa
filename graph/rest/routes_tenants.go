package rest

import (
	"net/http"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// tenantRoutes registers tenants and the gateways themselves.
func (a *adminAPI) tenantRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/tenants", a.listTenants)
	rt.Handle(http.MethodPost, "/admin/v1/tenants", a.createTenant)
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}", a.getTenant)
	rt.Handle(http.MethodPatch, "/admin/v1/tenants/{id}", a.updateTenant)
	rt.Handle(http.MethodDelete, "/admin/v1/tenants/{id}", a.deleteTenant)

	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}/gateways", a.listGateways)
	rt.Handle(http.MethodPost, "/admin/v1/tenants/{id}/gateways", a.createGateway)
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}", a.getGateway)
	rt.Handle(http.MethodPatch, "/admin/v1/gateways/{id}", a.updateGateway)
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}", a.deleteGateway)
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}/budget", a.deleteGatewayBudget)
}

func (a *adminAPI) listTenants(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpTenantList, refNone, "", err)
	}
	l, err := a.svc.ListTenants(ctx, p, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createTenant(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TenantInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpTenantCreate, refNone, "", err)
	}
	t, err := a.svc.CreateTenant(ctx, p, in)
	return writeObject(w, http.StatusCreated, t, err)
}

func (a *adminAPI) getTenant(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	t, err := a.svc.GetTenant(ctx, p, id)
	return writeObject(w, http.StatusOK, t, err)
}

func (a *adminAPI) updateTenant(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TenantPatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpTenantUpdate, refTenant, id, err)
	}
	t, err := a.svc.UpdateTenant(ctx, p, id, in)
	return writeObject(w, http.StatusOK, t, err)
}

// deleteTenant marks a tenant deleted, or removes it with all its data
// with ?purge=true, which needs the Purge tenants permission as well.
func (a *adminAPI) deleteTenant(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	purge, err := boolParam(r, "purge")
	if err != nil {
		return a.refuse(r, auth.OpTenantDelete, refTenant, id, err)
	}
	if purge {
		if err := a.svc.Authorize(ctx, p, auth.OpTenantPurge, admin.Ref{Kind: refTenant, ID: id}); err != nil {
			return err
		}
	}
	return writeNoContent(w, a.svc.DeleteTenant(ctx, p, id, purge))
}

func (a *adminAPI) listGateways(w http.ResponseWriter, r *http.Request, ps Params) error {
	tenantID := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGatewayList, refTenant, tenantID, err)
	}
	l, err := a.svc.ListGateways(ctx, p, tenantID, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	tenantID := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.GatewayInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpGatewayCreate, refTenant, tenantID, err)
	}
	g, err := a.svc.CreateGateway(ctx, p, tenantID, in)
	return writeObject(w, http.StatusCreated, g, err)
}

func (a *adminAPI) getGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	g, err := a.svc.GetGateway(ctx, p, id)
	return writeObject(w, http.StatusOK, g, err)
}

func (a *adminAPI) updateGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.GatewaySettings
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpGatewayUpdate, refGateway, id, err)
	}
	g, err := a.svc.UpdateGateway(ctx, p, id, in)
	return writeObject(w, http.StatusOK, g, err)
}

func (a *adminAPI) deleteGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteGateway(ctx, p, id))
}

func (a *adminAPI) deleteGatewayBudget(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteGatewayBudget(ctx, p, id))
}
