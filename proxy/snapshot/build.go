package snapshot

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
)

// Opener opens sealed provider keys. *secret.Box implements it; a box
// given the previous master key (secret.Box.WithPrevious) also opens the
// keys sealed with it, during a master-key rotation.
type Opener interface {
	Open(sealed string) (secret.Value, error)
}

var _ Opener = (*secret.Box)(nil)

// rows is everything Build reads from the store in one transaction.
type rows struct {
	version  int64
	tenants  []store.Tenant
	gateways []store.Gateway
	rules    []store.Rule
	users    []store.User
	assigned []store.UserGateway
	tokens   []store.Token
	prices   []store.ModelPrice
	keys     []store.ProviderKey
}

// openedKey is a provider key with its opened secret.
type openedKey struct {
	store.ProviderKey
	Secret secret.Value
}

// UnopenedKey is a provider key that did not open with the master key
// (corrupt, or sealed with another master key). It is left out of the
// snapshot, so that one bad row does not take every other key out of
// service; the Holder logs it by id.
type UnopenedKey struct {
	ID, GatewayID, Provider, Alias string
	Err                            error
}

// Build reads the configuration from st in one read-only transaction
// (REPEATABLE READ on PostgreSQL; SQLite's WAL read transactions see one
// snapshot), opens the provider keys with box and assembles a snapshot.
// The keys are read in the same transaction as the rest, so they belong
// to the same configuration version. Tokens that expired more than a day
// ago are left out, and so are keys that do not open (Snapshot.Unopened).
//
// The snapshot's in-flight counters are new; BuildWith keeps them across
// builds.
func Build(ctx context.Context, st *store.Store, box Opener, now time.Time) (*Snapshot, error) {
	return BuildWith(ctx, st, box, now, nil)
}

// BuildWith is Build with the in-flight counters taken from counters: an
// object that was in the previous snapshot built with them gets the same
// counter, so requests in flight stay counted across rebuilds. Nil counters
// means new ones.
func BuildWith(ctx context.Context, st *store.Store, box Opener, now time.Time, counters *Counters) (*Snapshot, error) {
	r, err := read(ctx, st)
	if err != nil {
		return nil, err
	}
	keys, unopened := open(r.keys, box)
	if counters == nil {
		counters = NewCounters()
	}
	s := assemble(r, keys, now, counters)
	s.unopened = unopened
	return s, nil
}

// open opens the sealed provider keys with box, by gateway id. A key that
// does not open is returned in unopened instead; a disabled key is left
// out: the proxy sends nothing with it.
func open(rows []store.ProviderKey, box Opener) (keys map[string][]openedKey, unopened []UnopenedKey) {
	keys = make(map[string][]openedKey)
	for _, k := range rows {
		if k.Disabled {
			continue
		}
		v, err := box.Open(k.SealedKey)
		if err != nil {
			unopened = append(unopened, UnopenedKey{ID: k.ID, GatewayID: k.GatewayID, Provider: k.Provider, Alias: k.Alias, Err: err})
			continue
		}
		keys[k.GatewayID] = append(keys[k.GatewayID], openedKey{ProviderKey: k, Secret: v})
	}
	return keys, unopened
}

func read(ctx context.Context, st *store.Store) (*rows, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if st.Postgres() {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := st.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("begin configuration read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: there is nothing to keep or lose

	var r rows
	// The version is read first, so that the snapshot holds at least every
	// change up to it.
	v, ok, err := st.Meta(ctx, tx, "config_version")
	if err != nil {
		return nil, fmt.Errorf("read configuration version: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("read configuration version: missing (is the store migrated?)")
	}
	if r.version, err = strconv.ParseInt(v, 10, 64); err != nil {
		return nil, fmt.Errorf("parse configuration version %q: %w", v, err)
	}
	steps := []struct {
		what string
		load func() error
	}{
		{"tenants", func() (err error) { r.tenants, err = store.All[store.Tenant](ctx, tx, "id"); return err }},
		{"gateways", func() (err error) { r.gateways, err = store.All[store.Gateway](ctx, tx, "id"); return err }},
		{"rules", func() (err error) { r.rules, err = store.All[store.Rule](ctx, tx, "id"); return err }},
		{"users", func() (err error) {
			r.users, err = store.All[store.User](ctx, tx, "id", store.Eq("status", store.UserActive))
			return err
		}},
		{"gateway assignments", func() (err error) {
			r.assigned, err = store.All[store.UserGateway](ctx, tx, "user_id")
			return err
		}},
		{"tokens", func() (err error) {
			// Revocation and expiry are checked in Go: the columns' encodings
			// differ between the dialects, the kind column does not.
			r.tokens, err = store.All[store.Token](ctx, tx, "id",
				store.In("kind", []string{store.TokenGateway, store.TokenUser, store.TokenPlayground}))
			return err
		}},
		{"model prices", func() (err error) { r.prices, err = store.All[store.ModelPrice](ctx, tx, "provider"); return err }},
		{"provider keys", func() (err error) { r.keys, err = store.All[store.ProviderKey](ctx, tx, "id"); return err }},
	}
	for _, s := range steps {
		if err := s.load(); err != nil {
			return nil, fmt.Errorf("read %s: %w", s.what, err)
		}
	}
	return &r, nil
}

// assemble links the rows into a snapshot. It leaves out what the proxy must
// not serve: gateways of deleted tenants, disabled rules, revoked and
// long-expired tokens, tokens of users not active and of gateways not served.
func assemble(r *rows, keys map[string][]openedKey, now time.Time, counters *Counters) *Snapshot {
	cb := counters.begin()
	defer cb.done()
	s := &Snapshot{
		Version:  r.version,
		BuiltAt:  now,
		tenants:  make(map[string]*Tenant, len(r.tenants)),
		bySlug:   make(map[gatewayKey]*Gateway, len(r.gateways)),
		byID:     make(map[string]*Gateway, len(r.gateways)),
		gateways: make([]*Gateway, 0, len(r.gateways)),
		tokens:   make(map[[32]byte]*Token, len(r.tokens)),
		prices:   make(map[priceKey]*Price, len(r.prices)),
	}
	for _, t := range r.tenants {
		s.tenants[t.ID] = &Tenant{ID: t.ID, Status: t.Status, Settings: t.Settings, Budget: t.Budget, InFlight: cb.get("tenant", t.ID)}
	}
	for _, g := range r.gateways {
		t := s.tenants[g.TenantID]
		if t == nil || t.Status == store.TenantDeleted {
			continue // its paths answer 404
		}
		gw := &Gateway{Gateway: g, Tenant: t, Keys: map[string][]*Key{}, InFlight: cb.get("gateway", g.ID)}
		s.bySlug[gatewayKey{g.TenantID, g.Slug}] = gw
		s.byID[g.ID] = gw
		s.gateways = append(s.gateways, gw) // r.gateways is ordered by id
	}
	for _, rule := range r.rules {
		if g := s.byID[rule.GatewayID]; g != nil && rule.Enabled && rule.TenantID == g.TenantID {
			g.Rules = append(g.Rules, rule) // r.rules is ordered by id: creation order
		}
	}
	for gatewayID, ks := range keys {
		g := s.byID[gatewayID]
		if g == nil {
			continue
		}
		for _, k := range ks {
			if k.TenantID != g.TenantID {
				continue
			}
			key := &Key{
				ID: k.ID, Provider: k.Provider, Alias: k.Alias, BaseURL: k.BaseURL, Weight: k.Weight,
				Models: []string(k.Models), Options: KeyOptions(k.Options), Secret: k.Secret,
			}
			key.Upstream = cb.get("upstream", g.TenantID+" "+upstreamID(key))
			g.Keys[k.Provider] = append(g.Keys[k.Provider], key)
		}
		for _, list := range g.Keys {
			slices.SortFunc(list, func(a, b *Key) int { return cmp.Or(cmp.Compare(a.Alias, b.Alias), cmp.Compare(a.ID, b.ID)) })
		}
	}
	users := make(map[string]*User, len(r.users))
	for _, u := range r.users {
		if u.Status != store.UserActive {
			continue
		}
		users[u.ID] = &User{ID: u.ID, TenantID: u.TenantID, Role: u.Role, Status: u.Status,
			Budget: u.Budget, RateLimit: u.RateLimit, Gateways: map[string]bool{}, InFlight: cb.get("user", u.ID)}
	}
	s.userCount = len(users)
	for _, a := range r.assigned {
		if u := users[a.UserID]; u != nil && s.byID[a.GatewayID] != nil && a.TenantID == u.TenantID {
			u.Gateways[a.GatewayID] = true
		}
	}
	for _, t := range r.tokens {
		if tok := token(&t, s, users, now); tok != nil {
			var h [32]byte
			if n, err := hex.Decode(h[:], []byte(t.Hash)); err != nil || n != len(h) {
				continue // cannot match any secret
			}
			tok.InFlight = cb.get("token", tok.ID)
			s.tokens[h] = tok
		}
	}
	for _, p := range r.prices {
		s.prices[priceKey{p.Provider, p.Model}] = &Price{ModelPrice: p}
	}
	return s
}

// token returns the snapshot's form of t, or nil when t must not be served.
func token(t *store.Token, s *Snapshot, users map[string]*User, now time.Time) *Token {
	// Expired tokens stay (for a day) so that the proxy can answer
	// token_expired rather than invalid_token; expiry is checked at use.
	if t.Revoked || (t.ExpiresAt != nil && now.Sub(*t.ExpiresAt) > 24*time.Hour) {
		return nil
	}
	out := &Token{
		ID: t.ID, Kind: t.Kind, TenantID: t.TenantID, ExpiresAt: t.ExpiresAt,
		RateLimit: t.RateLimit, AllowedModels: []string(t.AllowedModels), Budget: t.Budget,
	}
	if t.GatewayID != nil {
		out.GatewayID = *t.GatewayID
	}
	if t.UserID != nil {
		out.UserID = *t.UserID
	}
	switch t.Kind {
	case store.TokenGateway:
		if g := s.byID[out.GatewayID]; g == nil || g.TenantID != t.TenantID {
			return nil
		}
	case store.TokenUser:
		if out.User = users[out.UserID]; out.User == nil {
			return nil
		}
	case store.TokenPlayground:
		if out.User = users[out.UserID]; out.User == nil || s.byID[out.GatewayID] == nil {
			return nil
		}
	default:
		return nil
	}
	return out
}
