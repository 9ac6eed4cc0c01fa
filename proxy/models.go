package proxy

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/routing"
)

// Model discovery (CONTRACT §12): GET /v1/{tenant}/{gateway}/compat/models
// lists the gateway's route names and the provider/model ids the caller's
// token may use here; GET /v1/{tenant}/{gateway}/{provider}/models lists
// that provider's bare ids. Both answer OpenAI's list shape. The request
// goes through prepare (credential, role, gateway) like every other, is
// logged with operation "models" and cost 0, calls no provider and counts
// against no rate limit, in-flight limit or budget.
//
// An id is listed when the token may use it on this gateway, with the
// checks the plan step applies to a request (proxy/plan.go): the provider
// is known, supported and allowed for the tenant, a key of the gateway
// serves the model, the token's allowed_models admit it, and it has not
// reached its sunset date. The ids considered are the key model lists,
// the route targets, the token's provider/model allow-list entries and,
// for a provider with a key on the gateway, its catalog models. A route is
// listed when the token may use at least one of its targets.

// operation is the record's operation of the path (analytics.OpChat, …).
func (r route) operation() string {
	switch {
	case r.models:
		return analytics.OpModels
	case r.kind == kindMessages:
		return analytics.OpMessages
	case r.kind == kindCountTokens:
		return analytics.OpCountTokens
	case r.kind == kindResponses:
		return analytics.OpResponses
	}
	switch r.op {
	case llm.OpChat:
		return analytics.OpChat
	case llm.OpCompletions:
		return analytics.OpCompletions
	case llm.OpEmbeddings:
		return analytics.OpEmbeddings
	case llm.OpResponses:
		return analytics.OpResponses
	case llm.OpMessages:
		return analytics.OpMessages
	case llm.OpCountTokens:
		return analytics.OpCountTokens
	}
	return ""
}

// readModelsRequest is prepare's last step for the models paths: they
// have no body, but the x-sluice-* headers are checked (and the metadata
// logged) as on every path.
func (h *Inference) readModelsRequest(c *call) *apierr.Error {
	md, e := readHeaders(&c.ctx.Request.Header, &c.hdr)
	if e != nil {
		return e
	}
	c.rec.Metadata = md
	return nil
}

// listModels answers a models path.
func (h *Inference) listModels(c *call) *apierr.Error {
	var ids []string
	if p := c.route.provider; p != nil {
		prov := string(p)
		if _, known := catalog.LookupProvider(prov); !known {
			return apierr.NotFound("provider")
		}
		if allowed := c.gw.Tenant.Settings.AllowedProviders; len(allowed) > 0 && !contains(allowed, prov) {
			return apierr.New(http.StatusForbidden, apierr.CodeProviderNotAllowed, "provider %s is not allowed for this tenant", prov)
		}
		c.rec.Provider = prov
		for _, t := range h.modelTargets(c) {
			if t.Provider == prov {
				ids = append(ids, t.Model)
			}
		}
	} else {
		for _, t := range h.modelTargets(c) {
			ids = append(ids, t.Provider+"/"+t.Model)
		}
		ids = append(ids, h.usableRoutes(c)...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	c.ctx.SetStatusCode(http.StatusOK)
	c.ctx.SetContentType("application/json")
	c.ctx.SetBody(modelListBody(ids, c.route.provider))
	c.rec.Status = http.StatusOK
	return nil
}

// modelTargets returns the provider/model pairs the token may use on the
// gateway, unsorted and possibly repeated.
func (h *Inference) modelTargets(c *call) []routing.Target {
	gw := c.gw
	var cand []routing.Target
	add := func(prov, model string) {
		if model != "" {
			cand = append(cand, routing.Target{Provider: prov, Model: model})
		}
	}
	for prov, keys := range gw.Keys {
		anyModel := false
		for _, k := range keys {
			for _, m := range k.Models {
				add(prov, m)
			}
			anyModel = anyModel || len(k.Models) == 0
		}
		if anyModel {
			for _, m := range catalog.Models() {
				if m.Provider == prov {
					add(prov, m.ID)
				}
			}
		}
	}
	for _, r := range gw.Routes {
		for _, t := range r.Targets {
			add(t.Provider, t.Model)
		}
	}
	for _, a := range c.tok.AllowedModels {
		if prov, m, ok := cutModel(a); ok {
			add(prov, m)
		}
	}
	kept := cand[:0]
	for _, t := range cand {
		if h.usable(c, t) && (len(c.tok.AllowedModels) == 0 ||
			contains(c.tok.AllowedModels, t.Model) || contains(c.tok.AllowedModels, t.Provider+"/"+t.Model)) {
			kept = append(kept, t)
		}
	}
	return kept
}

// usableRoutes returns the names of the gateway's routes the token may
// use: those it allows by name, or with a target it allows, and with a
// target that can be served.
func (h *Inference) usableRoutes(c *call) []string {
	var names []string
	list := c.tok.AllowedModels
	for _, r := range c.gw.Routes {
		byName := len(list) == 0 || contains(list, r.Name)
		for _, t := range r.Targets {
			rt := routing.Target{Provider: t.Provider, Model: t.Model}
			if t.KeyAlias != nil {
				rt.KeyAlias = *t.KeyAlias
			}
			if (byName || contains(list, t.Model) || contains(list, t.Provider+"/"+t.Model)) && h.usable(c, rt) {
				names = append(names, r.Name)
				break
			}
		}
	}
	return names
}

// usable reports whether a request for target t would pass the plan
// step's checks other than the token's allow-list: a known, supported
// provider the tenant allows, a key of the gateway that serves the model,
// and no sunset reached.
func (h *Inference) usable(c *call, t routing.Target) bool {
	if _, known := catalog.LookupProvider(t.Provider); !known {
		return false
	}
	if allowed := c.gw.Tenant.Settings.AllowedProviders; len(allowed) > 0 && !contains(allowed, t.Provider) {
		return false
	}
	if _, ok := h.cfg.Providers.Get(t.Provider); !ok {
		return false
	}
	if len(keysFor(c.gw, t)) == 0 {
		return false
	}
	if pr, ok := c.snap.Price(t.Provider, t.Model); ok && pr.SunsetAt != nil && !c.start.Before(*pr.SunsetAt) {
		return false
	}
	return true
}

// cutModel splits "provider/model".
func cutModel(s string) (prov, model string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], i > 0 && i+1 < len(s)
		}
	}
	return "", "", false
}

// modelObject is one entry of OpenAI's list of models.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelList is OpenAI's list of models: {"object":"list","data":[…]}.
type modelList struct {
	Object string        `json:"object"`
	Data   []modelObject `json:"data"`
}

// modelListBody returns the list of ids in OpenAI's shape. owned_by is the
// provider of a provider/model id or of a provider path's bare id,
// "sluice" for a route name; created is 0 (the gateway does not know when
// a provider published a model).
func modelListBody(ids []string, provider []byte) []byte {
	l := modelList{Object: "list", Data: make([]modelObject, len(ids))}
	for i, id := range ids {
		owner := string(provider)
		if provider == nil {
			owner = "sluice"
			if prov, _, ok := cutModel(id); ok {
				owner = prov
			}
		}
		l.Data[i] = modelObject{ID: id, Object: "model", OwnedBy: owner}
	}
	b, _ := json.Marshal(l) // strings and integers only: cannot fail
	return b
}
