// Package snapshot is the proxy's in-memory configuration: tenants,
// gateways with their decrypted provider keys and enabled rules, inference
// tokens, users and model prices, read from the store in one consistent read
// and never changed afterwards. A Holder keeps the current Snapshot behind an
// atomic.Pointer and swaps in a new one when the configuration changes, so
// the hot path reads configuration with no lock and no I/O (the
// VictoriaMetrics vmauth model, STYLE.md).
//
// Everything reachable from a Snapshot is shared by every request that
// loaded it: callers read it and never modify it. The one exception is the
// InFlight counters, which count requests in flight and outlive the
// snapshot (Counters).
package snapshot

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers"
)

// Snapshot is one immutable view of the configuration.
type Snapshot struct {
	// Version is the store's configuration version the snapshot was built
	// from: every change committed after the read has a higher version.
	Version int64
	// BuiltAt is when the snapshot was built.
	BuiltAt time.Time

	tenants   map[string]*Tenant
	bySlug    map[gatewayKey]*Gateway
	byID      map[string]*Gateway
	gateways  []*Gateway // ordered by id
	tokens    map[[32]byte]*Token
	prices    map[priceKey]*Price
	userCount int
	// unopened are the provider keys left out because they do not open.
	unopened []UnopenedKey
}

type gatewayKey struct{ tenant, slug string }

// Unopened returns the provider keys left out of the snapshot because they
// do not open with the master key.
func (s *Snapshot) Unopened() []UnopenedKey { return s.unopened }

type priceKey struct{ provider, model string }

// Tenant is a tenant as the proxy sees it. Every tenant is present, deleted
// ones included (their gateways are not).
type Tenant struct {
	ID       string
	Status   string // store.TenantActive, TenantSuspended or TenantDeleted
	Settings store.TenantSettings
	Budget   *store.Budget // configuration only; nil means none
	// InFlight counts the tenant's requests in flight.
	InFlight *InFlight
}

// Gateway is a servable gateway: one whose tenant is not deleted.
type Gateway struct {
	// Gateway holds the stored settings, Budget (configuration only)
	// included.
	store.Gateway
	Tenant *Tenant
	// Keys are the gateway's provider keys by provider id, each list
	// ordered by alias.
	Keys map[string][]*Key
	// Rules are the gateway's enabled content rules in creation order.
	Rules []store.Rule
	// InFlight counts the gateway's requests in flight.
	InFlight *InFlight
}

// Key is a provider key with its decrypted secret. Secret prints as
// [REDACTED]; Secret.Reveal() is for the request to the provider only.
type Key struct {
	ID       string
	Provider string
	Alias    string
	BaseURL  string // "" means the provider's default endpoint
	Weight   int
	Models   []string // models the key serves; empty means any
	Options  providers.KeyOptions
	Secret   secret.Value
	// Upstream counts the calls in flight of the key's tenant to the
	// key's upstream (upstreamID), whichever of the tenant's keys and
	// gateways they use: the tenant's share of that upstream's connections.
	Upstream *InFlight
}

// Token is an inference credential: a gateway token, a user token or a
// playground token. Session tokens are for the admin API only and never
// appear here; neither do revoked tokens, tokens expired when the snapshot
// was built, tokens of disabled or deleted users, and tokens of gateways
// that are not served.
type Token struct {
	ID       string
	Kind     string // store.TokenGateway, TokenUser or TokenPlayground
	TenantID string
	// GatewayID is set for gateway and playground tokens.
	GatewayID string
	// UserID is set for user and playground tokens.
	UserID string
	// ExpiresAt is checked at use (Expired): a token expiring while the
	// snapshot serves needs no rebuild.
	ExpiresAt *time.Time
	// Revoked is always false in a snapshot (revoked tokens are left out);
	// it is kept so that the type reads like the stored token.
	Revoked       bool
	RateLimit     store.RateLimit
	AllowedModels []string      // empty means every model
	Budget        *store.Budget // configuration only; nil means none
	// User is the owner of a user or playground token; nil for gateway
	// tokens.
	User *User
	// InFlight counts the token's requests in flight.
	InFlight *InFlight
}

// User is an active user. Disabled users are left out, and with them their
// tokens.
type User struct {
	ID       string
	TenantID string
	// Role is the user's current role. A token whose owner's role may not
	// call inference stays in the snapshot, so that the proxy can answer
	// 403 role_cannot_call_inference rather than 401 (CONTRACT §4).
	Role      auth.Role
	Status    string
	Budget    *store.Budget // configuration only; nil means none
	RateLimit store.RateLimit
	// Gateways holds the ids of the gateways assigned to the user.
	Gateways map[string]bool
	// InFlight counts the user's requests in flight, all tokens together.
	InFlight *InFlight
}

// Price is the list price of a model.
type Price struct {
	store.ModelPrice
}

// Gateway returns the gateway of a tenant by slug, as named in inference
// paths. Gateways of deleted tenants are not found.
func (s *Snapshot) Gateway(tenantID, slug string) (*Gateway, bool) {
	g, ok := s.bySlug[gatewayKey{tenantID, slug}]
	return g, ok
}

// GatewayByID returns a gateway by its id.
func (s *Snapshot) GatewayByID(id string) (*Gateway, bool) {
	g, ok := s.byID[id]
	return g, ok
}

// Gateways returns every served gateway ordered by id. The slice is the
// caller's; the gateways are shared and must not be modified.
func (s *Snapshot) Gateways() []*Gateway { return slices.Clone(s.gateways) }

// Tenant returns a tenant by id; deleted tenants are found too.
func (s *Snapshot) Tenant(id string) (*Tenant, bool) {
	t, ok := s.tenants[id]
	return t, ok
}

// Token returns the inference token whose secret has the given raw SHA-256
// (ids.Hash is its hex form). The caller still checks Expired and ValidOn.
func (s *Snapshot) Token(hash [32]byte) (*Token, bool) {
	t, ok := s.tokens[hash]
	return t, ok
}

// Price returns the price of a model; ok is false for an unpriced model.
func (s *Snapshot) Price(provider, model string) (*store.ModelPrice, bool) {
	p, ok := s.prices[priceKey{provider, model}]
	if !ok {
		return nil, false
	}
	return &p.ModelPrice, true
}

// Counts are the sizes of a snapshot, for /healthz and logs.
type Counts struct {
	Tenants  int `json:"tenants"`
	Gateways int `json:"gateways"`
	Tokens   int `json:"tokens"`
	Users    int `json:"users"`
	Prices   int `json:"prices"`
}

// Counts returns the sizes of the snapshot.
func (s *Snapshot) Counts() Counts {
	return Counts{Tenants: len(s.tenants), Gateways: len(s.gateways), Tokens: len(s.tokens),
		Users: s.userCount, Prices: len(s.prices)}
}

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// ValidOn reports whether the token may call gateway g (CONTRACT §4): a
// gateway token on its own gateway; a user token wherever its owner may
// (User.MayUse); a playground token on the gateway it was minted for, as
// long as its owner may still use that gateway. It checks neither expiry
// (Expired) nor whether the owner's role may call inference at all
// (auth.Role.CanCallInference): those are answered with other errors.
func (t *Token) ValidOn(g *Gateway) bool {
	switch t.Kind {
	case store.TokenGateway:
		return t.GatewayID == g.ID
	case store.TokenUser:
		return t.User != nil && t.User.MayUse(g)
	case store.TokenPlayground:
		return t.GatewayID == g.ID && t.User != nil && t.User.MayUse(g)
	}
	return false
}

// MayUse reports whether the user's tokens are valid on gateway g: an
// Administrator's on any gateway, a Tenant Administrator's on any gateway
// of its tenant, anyone else's on the gateways assigned to them.
func (u *User) MayUse(g *Gateway) bool {
	switch u.Role {
	case auth.Administrator:
		return true
	case auth.TenantAdministrator:
		return g.TenantID == u.TenantID
	}
	return g.TenantID == u.TenantID && u.Gateways[g.ID]
}

// KeyOptions converts a stored key's options into the adapters' own type.
func KeyOptions(o store.KeyOptions) providers.KeyOptions {
	return providers.KeyOptions{
		Resource: o.Resource, Deployments: o.Deployments, APIVersion: o.APIVersion,
		Region: o.Region, AccessKeyID: o.AccessKeyID,
	}
}
