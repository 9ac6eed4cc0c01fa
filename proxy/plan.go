package proxy

import (
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/routing"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// plan is where a request may go: the step after prepare
// (proxy/pipeline.go).
type plan struct {
	strategy string
	targets  []routing.Target
	// one backs targets when there is a single target (a provider/model
	// or a bare model): the common request allocates no slice.
	one [1]routing.Target
	// The gateway route's name ("" for a direct provider/model) is the
	// record's: c.rec.Route.
}

// planTargets is the pipeline's plan step: it turns the path and the
// body's model into targets — on /compat a "provider/model" or the name
// of a gateway route, on a provider path the provider's own model id —
// and keeps those the request may use (checkTargets). A bare model id that
// names no route resolves to the one provider serving it
// (bareModelProvider, CONTRACT §12).
func (h *Inference) planTargets(c *call) *apierr.Error {
	model := c.in.model
	p := &c.plan
	var route string
	if c.route.provider != nil {
		p.strategy = store.StrategyFallback
		p.single(routing.Target{Provider: string(c.route.provider), Model: model, Weight: 1})
	} else if prov, m, ok := strings.Cut(model, "/"); ok && m != "" {
		p.strategy = store.StrategyFallback
		p.single(routing.Target{Provider: prov, Model: m, Weight: 1})
	} else {
		for _, r := range c.gw.Routes {
			if r.Name == model {
				route, p.strategy = r.Name, r.Strategy
				for _, t := range r.Targets {
					rt := routing.Target{Provider: t.Provider, Model: t.Model, Weight: t.Weight}
					if t.KeyAlias != nil {
						rt.KeyAlias = *t.KeyAlias
					}
					p.targets = append(p.targets, rt)
				}
				break
			}
		}
		if p.targets == nil {
			if prov, ok := bareModelProvider(c.gw, model); ok {
				p.strategy = store.StrategyFallback
				p.single(routing.Target{Provider: prov, Model: model, Weight: 1})
			}
		}
		if p.targets == nil {
			return apierr.New(http.StatusBadRequest, apierr.CodeUnknownModel, "model %q is neither provider/model, a route of this gateway nor a model id of one of its providers", model).WithParam("model")
		}
	}
	if e := h.checkTargets(c, p); e != nil {
		return e
	}
	c.rec.Route = route
	return nil
}

// checkTargets applies the tenant's provider allow-list, the token's model
// allow-list, provider capabilities, keys and sunset dates.
func (h *Inference) checkTargets(c *call, p *plan) *apierr.Error {
	if e := allowedTargets(c.tok.AllowedModels, c.in.model, p); e != nil {
		return e
	}
	kept := p.targets[:0]
	var first *apierr.Error
	keep := func(e *apierr.Error) {
		if first == nil {
			first = e
		}
	}
	for _, t := range p.targets {
		if _, known := catalog.LookupProvider(t.Provider); !known {
			if c.route.provider != nil {
				return apierr.NotFound("provider")
			}
			keep(apierr.New(http.StatusBadRequest, apierr.CodeUnknownModel, "unknown provider %q in model %q", t.Provider, c.in.model).WithParam("model"))
			continue
		}
		if allowed := c.gw.Tenant.Settings.AllowedProviders; len(allowed) > 0 && !contains(allowed, t.Provider) {
			keep(apierr.New(http.StatusForbidden, apierr.CodeProviderNotAllowed, "provider %s is not allowed for this tenant", t.Provider))
			continue
		}
		prov, ok := h.cfg.Providers.Get(t.Provider)
		if !ok {
			keep(apierr.New(http.StatusBadRequest, apierr.CodeProviderNotSupported, "provider %s is not supported by this gateway version", t.Provider))
			continue
		}
		if e := capable(prov, c.route.op, c.in.stream); e != nil {
			keep(e)
			continue
		}
		if len(keysFor(c.gw, t)) == 0 {
			keep(apierr.New(http.StatusBadRequest, apierr.CodeProviderNotConfigured, "no %s key on this gateway serves model %s", t.Provider, t.Model))
			continue
		}
		if pr, ok := c.snap.Price(t.Provider, t.Model); ok && pr.SunsetAt != nil && !c.start.Before(*pr.SunsetAt) {
			keep(apierr.New(http.StatusGone, apierr.CodeModelSunset, "model %s/%s reached its sunset date %s", t.Provider, t.Model, pr.SunsetAt.Format(time.DateOnly)))
			continue
		}
		kept = append(kept, t)
	}
	p.targets = kept
	if len(kept) == 0 {
		return first
	}
	return nil
}

// allowedTargets applies a token's allowed_models to the plan: with a
// list, only the targets it names stay — by provider/model or by the bare
// model id (any provider's) — unless it names the requested model itself
// (a route's name, or the model as the request wrote it), which allows
// every target of it. No target left is a 403.
func allowedTargets(list []string, requested string, p *plan) *apierr.Error {
	if len(list) == 0 || contains(list, requested) {
		return nil
	}
	kept := p.targets[:0]
	for _, t := range p.targets {
		if contains(list, t.Model) || contains(list, t.Provider+"/"+t.Model) {
			kept = append(kept, t)
		}
	}
	p.targets = kept
	if len(kept) == 0 {
		return apierr.New(http.StatusForbidden, apierr.CodeModelNotAllowed, "this token may not use model %q", requested)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// capable answers 400 for an operation the provider does not serve.
func capable(p providers.Provider, op llm.Operation, stream bool) *apierr.Error {
	switch op {
	case llm.OpCompletions:
		if _, ok := p.(providers.Completer); !ok {
			return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature, "provider %s does not support legacy completions", p.Name())
		}
	case llm.OpEmbeddings:
		if _, ok := p.(providers.Embedder); !ok {
			return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature, "provider %s does not support embeddings", p.Name())
		}
	}
	return nil
}

// keysFor returns the keys of the gateway that may serve target t.
func keysFor(gw *snapshot.Gateway, t routing.Target) []*snapshot.Key {
	all := gw.Keys[t.Provider]
	out := make([]*snapshot.Key, 0, len(all))
	for _, k := range all {
		if t.KeyAlias != "" && k.Alias != t.KeyAlias {
			continue
		}
		if len(k.Models) > 0 && !contains(k.Models, t.Model) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// baseURL is the key's base URL or its provider's default.
func baseURL(k *snapshot.Key) string {
	if k.BaseURL != "" {
		return strings.TrimSuffix(k.BaseURL, "/")
	}
	p, _ := catalog.LookupProvider(k.Provider)
	return strings.TrimSuffix(p.DefaultBaseURL, "/")
}

// single makes t the plan's only target.
func (p *plan) single(t routing.Target) {
	p.one[0] = t
	p.targets = p.one[:]
}
