package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
)

// KeyPatch changes how a provider key is used: its weight among the keys
// of its provider, whether it is disabled (retired: the proxy no longer
// sends requests with it) and the models it serves. A nil field keeps its
// value. Where the key is sent (base URL, options) cannot change: that
// takes a new key (docs/decisions.md, "Provider keys").
type KeyPatch struct {
	Weight   *int     `json:"weight"`
	Disabled *bool    `json:"disabled"`
	Models   []string `json:"models"`
}

// KeyProbe is the one minimal upstream call of a key test: a chat request
// for one output token to Model with the key.
type KeyProbe struct {
	Provider string
	Model    string
	// BaseURL is the key's base URL, "" for the provider's default.
	BaseURL string
	Key     secret.Value
	Options store.KeyOptions
}

// KeyTester makes the call of a key test; cmd/sluice implements it with
// the proxy's provider adapters. The error is the upstream's answer,
// scrubbed of the key.
type KeyTester interface {
	TestKey(ctx context.Context, pr KeyProbe) error
}

// KeyTest is the outcome of a key test.
type KeyTest struct {
	OK        bool    `json:"ok"`
	Model     string  `json:"model"`
	LatencyMS float64 `json:"latency_ms"`
	// Message is why the call failed ("" when it succeeded), never
	// containing the key.
	Message string `json:"message"`
}

const (
	// maxKeyTestsPerMinute bounds the tests of one key a minute: each is an
	// upstream call the tenant pays for.
	maxKeyTestsPerMinute = 10
	// keyTestTimeout bounds the upstream call of a key test.
	keyTestTimeout    = 20 * time.Second
	maxKeyTestMessage = 300
)

// UpdateKey changes the weight, the disabled flag or the models of a
// provider key. Disabling a key that a route names is refused with 409,
// like deleting it: the route could no longer be served.
func (s *Service) UpdateKey(ctx context.Context, p *auth.Principal, gatewayID, provider, alias string, in KeyPatch) (*store.ProviderKey, error) {
	if err := s.can(ctx, p, auth.OpKeyUpdate); err != nil {
		return nil, err
	}
	g, k, err := s.key(ctx, p, gatewayID, provider, alias)
	if err != nil {
		return nil, err
	}
	changes := store.Changes{"gateway_id": g.ID, "provider": k.Provider, "alias": k.Alias, "last4": k.Last4}
	if in.Weight != nil {
		if *in.Weight < 1 || *in.Weight > 1000 {
			return nil, apierr.Invalid("weight", "weight must be between 1 and 1000")
		}
		changes["weight"] = map[string]any{"from": k.Weight, "to": *in.Weight}
		k.Weight = *in.Weight
	}
	if in.Models != nil {
		models, err := checkKeyModels(in.Models)
		if err != nil {
			return nil, err
		}
		changes["models"] = map[string]any{"from": k.Models, "to": models}
		k.Models = models
	}
	if in.Disabled != nil {
		changes["disabled"] = map[string]any{"from": k.Disabled, "to": *in.Disabled}
		k.Disabled = *in.Disabled
	}
	k.UpdatedAt = s.now()
	c := &change{Action: "key.update", ResourceType: "provider_key", ResourceID: k.ID, TenantID: g.TenantID, Config: true, Changes: changes}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		if in.Disabled != nil && *in.Disabled {
			cur, err := store.Get[store.Gateway](ctx, tx, store.Eq("id", g.ID))
			if err != nil {
				return notFound(err, "gateway")
			}
			if route, ok := routeNaming(cur.Routes, k.Provider, k.Alias); ok {
				return apierr.Conflict("disabled", "route %q uses the %s key %q; change the route before disabling the key", route, k.Provider, k.Alias)
			}
		}
		return notFound(store.Update(ctx, tx, k, "weight", "models", "disabled", "updated_at"), "provider key")
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// TestKey makes one minimal upstream call with a provider key (a chat
// request for one output token to model, or to the key's first chat model,
// or to the provider's first in the catalog) and answers whether it
// worked, how long it took and, when it failed, the upstream's message.
// The key never leaves the server. Tests are audited (key.test) and
// limited to maxKeyTestsPerMinute per key.
func (s *Service) TestKey(ctx context.Context, p *auth.Principal, gatewayID, provider, alias, model string) (*KeyTest, error) {
	if err := s.can(ctx, p, auth.OpKeyTest); err != nil {
		return nil, err
	}
	g, k, err := s.key(ctx, p, gatewayID, provider, alias)
	if err != nil {
		return nil, err
	}
	if s.cfg.KeyTester == nil {
		return nil, apierr.Unavailable("this process cannot call providers; test the key where the proxy runs")
	}
	if model == "" {
		model = probeModel(k)
	}
	if model == "" {
		return nil, apierr.Invalid("model", "the key lists no chat model and the catalog none for %s: name the model to test", k.Provider)
	}
	if err := checkText("model", model, 256, true); err != nil {
		return nil, err
	}
	if !s.keyTests.allow(k.ID, s.now()) {
		return nil, apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded,
			"a key is tested at most %d times a minute; try again in a minute", maxKeyTestsPerMinute)
	}
	v, err := s.cfg.Box.Open(k.SealedKey)
	if err != nil {
		return nil, fmt.Errorf("open provider key %s: %w", k.ID, err)
	}
	tctx, cancel := context.WithTimeout(ctx, keyTestTimeout)
	defer cancel()
	start := time.Now()
	callErr := s.cfg.KeyTester.TestKey(tctx, KeyProbe{Provider: k.Provider, Model: model, BaseURL: k.BaseURL, Key: v, Options: k.Options})
	res := &KeyTest{OK: callErr == nil, Model: model, LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
	if callErr != nil {
		res.Message = keyTestMessage(callErr, v)
	}
	c := &change{Action: "key.test", ResourceType: "provider_key", ResourceID: k.ID, TenantID: g.TenantID,
		Changes: store.Changes{"gateway_id": g.ID, "provider": k.Provider, "alias": k.Alias, "last4": k.Last4,
			"model": model, "ok": res.OK, "latency_ms": res.LatencyMS, "message": res.Message}}
	if err := s.write(ctx, p, c, func(bun.Tx) error { return nil }); err != nil {
		return nil, err
	}
	return res, nil
}

// key loads a provider key of a gateway the principal may see, or answers 404.
func (s *Service) key(ctx context.Context, p *auth.Principal, gatewayID, provider, alias string) (*store.Gateway, *store.ProviderKey, error) {
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, nil, err
	}
	k, err := store.Get[store.ProviderKey](ctx, s.db, store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID),
		store.Eq("provider", provider), store.Eq("alias", alias))
	if isNotFound(err) {
		return nil, nil, s.missing(ctx, p, "provider key", provider+"/"+alias, reasonNotVisible)
	}
	if err != nil {
		return nil, nil, notFound(err, "provider key")
	}
	return g, k, nil
}

// probeModel is the model a key test asks when none is named: the key's
// first model that the catalog does not know as an embedding or
// completion model, else the provider's first chat model in the catalog.
func probeModel(k *store.ProviderKey) string {
	kinds := map[string]string{}
	var first string
	for _, m := range catalog.Models() {
		if m.Provider != k.Provider {
			continue
		}
		kinds[m.ID] = m.Kind
		if first == "" && m.Kind == "chat" {
			first = m.ID
		}
	}
	for _, m := range k.Models {
		if kind, ok := kinds[m]; !ok || kind == "chat" {
			return m
		}
	}
	return first
}

// keyTestMessage is the message of a failed key test: the upstream's,
// without the key (the adapters scrub it already; this is the second
// lock), cut to maxKeyTestMessage bytes.
func keyTestMessage(err error, key secret.Value) string {
	msg := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "the provider did not answer within " + keyTestTimeout.String()
	}
	if k := key.Reveal(); len(k) >= 4 {
		msg = strings.ReplaceAll(msg, k, "[key]")
	}
	if len(msg) > maxKeyTestMessage {
		msg = strings.ToValidUTF8(msg[:maxKeyTestMessage], "") + "…"
	}
	return msg
}

// GatewayBaseURL is the base URL of a gateway's inference API: the public
// URL (--public-url) followed by /v1/{tenant}/{slug}, or that path alone
// when no public URL is configured (the dashboard then puts its own origin
// in front). The doors follow it: /compat, /openai, /anthropic, ….
func (s *Service) GatewayBaseURL(g *store.Gateway) string {
	return s.cfg.PublicURL + "/v1/" + g.TenantID + "/" + g.Slug
}
