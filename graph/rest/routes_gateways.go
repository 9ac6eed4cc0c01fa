package rest

import (
	"net/http"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// gatewayRoutes registers what belongs to a gateway: provider keys,
// content rules and API tokens.
func (a *adminAPI) gatewayRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/keys", a.listKeys)
	rt.Handle(http.MethodPost, "/admin/v1/gateways/{id}/keys", a.createKey)
	rt.Handle(http.MethodPatch, "/admin/v1/gateways/{id}/keys/{provider}/{alias}", a.updateKey)
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}/keys/{provider}/{alias}", a.deleteKey)
	rt.Handle(http.MethodPost, "/admin/v1/gateways/{id}/keys/{provider}/{alias}/test", a.testKey)

	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/rules", a.listRules)
	rt.Handle(http.MethodPost, "/admin/v1/gateways/{id}/rules", a.createRule)
	rt.Handle(http.MethodPatch, "/admin/v1/gateways/{id}/rules", a.updateRule)
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}/rules", a.deleteRule)

	rt.Handle(http.MethodGet, "/admin/v1/gateways/{id}/tokens", a.listGatewayTokens)
	rt.Handle(http.MethodPost, "/admin/v1/gateways/{id}/tokens", a.createGatewayToken)
	rt.Handle(http.MethodPatch, "/admin/v1/gateways/{id}/tokens/{token}", a.updateGatewayToken)
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}/tokens/{token}", a.deleteGatewayToken)
}

func (a *adminAPI) listKeys(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.ListKeys(ctx, p, id)
	return writeList(w, l, err)
}

func (a *adminAPI) createKey(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.KeyInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpKeyCreate, refGateway, id, err)
	}
	k, err := a.svc.CreateKey(ctx, p, id, in)
	return writeObject(w, http.StatusCreated, k, err)
}

// updateKey changes a key's weight, models or disabled flag; where the key
// is sent cannot change (an unknown field such as base_url is a 400).
func (a *adminAPI) updateKey(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.KeyPatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpKeyUpdate, refGateway, id, err)
	}
	k, err := a.svc.UpdateKey(ctx, p, id, ps.Get("provider"), ps.Get("alias"), in)
	return writeObject(w, http.StatusOK, k, err)
}

// testKey makes one minimal upstream call with the key; the body may name
// the model ({"model": "…"}), an empty body leaves it to the domain.
func (a *adminAPI) testKey(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in struct {
		Model string `json:"model"`
	}
	if r.ContentLength != 0 {
		if err := DecodeJSON(r, &in); err != nil {
			return a.refuse(r, auth.OpKeyTest, refGateway, id, err)
		}
	}
	res, err := a.svc.TestKey(ctx, p, id, ps.Get("provider"), ps.Get("alias"), in.Model)
	return writeObject(w, http.StatusOK, res, err)
}

func (a *adminAPI) deleteKey(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteKey(ctx, p, id, ps.Get("provider"), ps.Get("alias")))
}

func (a *adminAPI) listRules(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	l, err := a.svc.ListRules(ctx, p, id)
	return writeList(w, l, err)
}

func (a *adminAPI) createRule(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.RuleInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpRuleCreate, refGateway, id, err)
	}
	rule, err := a.svc.CreateRule(ctx, p, id, in)
	return writeObject(w, http.StatusCreated, rule, err)
}

// updateRule changes the rule whose id is in the body (CONTRACT §7).
func (a *adminAPI) updateRule(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.RulePatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpRuleUpdate, refGateway, id, err)
	}
	rule, err := a.svc.UpdateRule(ctx, p, id, in)
	return writeObject(w, http.StatusOK, rule, err)
}

// deleteRule deletes the rule named by ?id= (CONTRACT §7).
func (a *adminAPI) deleteRule(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	ruleID, err := requiredParam(r, "id")
	if err != nil {
		return a.refuse(r, auth.OpRuleDelete, refGateway, id, err)
	}
	return writeNoContent(w, a.svc.DeleteRule(ctx, p, id, ruleID))
}

func (a *adminAPI) listGatewayTokens(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpGatewayTokenList, refGateway, id, err)
	}
	l, err := a.svc.ListGatewayTokens(ctx, p, id, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createGatewayToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TokenInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpGatewayTokenCreate, refGateway, id, err)
	}
	t, err := a.svc.CreateGatewayToken(ctx, p, id, in)
	return writeObject(w, http.StatusCreated, t, err)
}

func (a *adminAPI) updateGatewayToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TokenPatch
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpGatewayTokenUpdate, refGateway, id, err)
	}
	t, err := a.svc.UpdateGatewayToken(ctx, p, id, ps.Get("token"), in)
	return writeObject(w, http.StatusOK, t, err)
}

func (a *adminAPI) deleteGatewayToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	id := ps.Get("id")
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteGatewayToken(ctx, p, id, ps.Get("token")))
}
