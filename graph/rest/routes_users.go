package rest

import (
	"net/http"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// userRoutes registers user accounts, their tokens, budgets and gateway
// assignments.
func (a *adminAPI) userRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}/users", a.listUsers)
	rt.Handle(http.MethodPost, "/admin/v1/tenants/{id}/users", a.createUser)
	rt.Handle(http.MethodGet, "/admin/v1/users/{id}", a.getUser)
	rt.Handle(http.MethodPatch, "/admin/v1/users/{id}", a.updateUser)
	rt.Handle(http.MethodDelete, "/admin/v1/users/{id}", a.deleteUser)
	rt.Handle(http.MethodDelete, "/admin/v1/users/{id}/budget", a.deleteUserBudget)

	rt.Handle(http.MethodGet, "/admin/v1/users/{id}/tokens", a.listUserTokens)
	rt.Handle(http.MethodPost, "/admin/v1/users/{id}/tokens", a.createUserToken)
	rt.Handle(http.MethodPatch, "/admin/v1/users/{id}/tokens/{token}", a.updateUserToken)
	rt.Handle(http.MethodDelete, "/admin/v1/users/{id}/tokens/{token}", a.deleteUserToken)

	rt.Handle(http.MethodGet, "/admin/v1/users/{id}/gateways", a.listUserGateways)
	rt.Handle(http.MethodPost, "/admin/v1/users/{id}/gateways/{gateway}", a.assignGateway)
	rt.Handle(http.MethodDelete, "/admin/v1/users/{id}/gateways/{gateway}", a.unassignGateway)
}

func (a *adminAPI) listUsers(w http.ResponseWriter, r *http.Request, ps Params) error {
	tenantID := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpUserList, refTenant, tenantID, err)
	}
	l, err := a.svc.ListUsers(ctx, p, tenantID, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createUser(w http.ResponseWriter, r *http.Request, ps Params) error {
	tenantID := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.UserInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpUserCreate, refTenant, tenantID, err)
	}
	u, err := a.svc.CreateUser(ctx, p, tenantID, in)
	return writeObject(w, http.StatusCreated, u, err)
}

func (a *adminAPI) getUser(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	u, err := a.svc.GetUser(ctx, p, id)
	return writeObject(w, http.StatusOK, u, err)
}

func (a *adminAPI) updateUser(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.UserPatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpUserUpdate, refUser, id, err)
	}
	u, err := a.svc.UpdateUser(ctx, p, id, in)
	return writeObject(w, http.StatusOK, u, err)
}

func (a *adminAPI) deleteUser(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteUser(ctx, p, id))
}

func (a *adminAPI) deleteUserBudget(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteUserBudget(ctx, p, id))
}

func (a *adminAPI) listUserTokens(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpUserTokenList, refUser, id, err)
	}
	l, err := a.svc.ListUserTokens(ctx, p, id, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createUserToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TokenInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpUserTokenCreate, refUser, id, err)
	}
	t, err := a.svc.CreateUserToken(ctx, p, id, in)
	return writeObject(w, http.StatusCreated, t, err)
}

// updateUserToken and deleteUserToken are extensions of the seed (CONTRACT
// §9 gives user tokens a PATCH): an administrator can revoke a user's token.
func (a *adminAPI) updateUserToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TokenPatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpUserTokenUpdate, refUser, id, err)
	}
	t, err := a.svc.UpdateUserToken(ctx, p, id, ps.Get("token"), in)
	return writeObject(w, http.StatusOK, t, err)
}

func (a *adminAPI) deleteUserToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteUserToken(ctx, p, id, ps.Get("token")))
}

func (a *adminAPI) listUserGateways(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.ListUserGateways(ctx, p, id)
	return writeList(w, l, err)
}

// assignGateway assigns the gateway (its id, CONTRACT §2) to the user.
func (a *adminAPI) assignGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.AssignGateway(ctx, p, id, ps.Get("gateway")))
}

func (a *adminAPI) unassignGateway(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.UnassignGateway(ctx, p, id, ps.Get("gateway")))
}
