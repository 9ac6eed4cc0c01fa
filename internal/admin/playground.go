package admin

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/page"
	"github.com/sluicehq/sluice/internal/store"
)

// PlaygroundToken is a short-lived inference token of the caller for one
// gateway, with the path to call it on.
type PlaygroundToken struct {
	Token       string    `json:"token"`
	ExpiresAt   time.Time `json:"expires_at"`
	GatewayID   string    `json:"gateway_id"`
	TenantID    string    `json:"tenant_id"`
	GatewaySlug string    `json:"gateway_slug"`
	// BasePath is "/v1/{tenant}/{gateway}/compat".
	BasePath string `json:"base_path"`
}

// PlaygroundModel is one model the caller can reach: a route of a gateway
// (Route set; Provider and Model of its first target) or a model listed on
// one of the gateway's provider keys (Route empty).
type PlaygroundModel struct {
	GatewayID   string `json:"gateway_id"`
	GatewaySlug string `json:"gateway_slug"`
	TenantID    string `json:"tenant_id"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	Route       string `json:"route"`
	// Kind is the model's kind in the catalog (catalog.KindChat,
	// KindEmbedding, KindCompletion); a model the catalog does not know is
	// an embedding model when its name says so, else a chat model.
	Kind string `json:"kind"`
}

// modelKinds returns the kind of a model (PlaygroundModel.Kind) from the
// catalog.
func modelKinds() func(provider, model string) string {
	kinds := map[[2]string]string{}
	for _, m := range catalog.Models() {
		kinds[[2]string{m.Provider, m.ID}] = m.Kind
	}
	return func(provider, model string) string {
		if k, ok := kinds[[2]string{provider, model}]; ok {
			return k
		}
		if strings.Contains(strings.ToLower(model), "embed") {
			return catalog.KindEmbedding
		}
		return catalog.KindChat
	}
}

const (
	playgroundTokenTTL = 15 * time.Minute
	// maxPlaygroundTokens is the most unexpired playground tokens of one
	// user (docs/security.md); the dashboard keeps one per model it chats
	// with.
	maxPlaygroundTokens = 20
	// The model search answers one page: the default size of every
	// listing, but at most 200 (its own bound: the search is computed in
	// memory over every reachable model).
	playgroundSearchLimit = page.DefaultLimit
	playgroundSearchMax   = 200
)

// errGatewayNotAssigned is the 403 for a Member using a gateway not
// assigned to them.
func errGatewayNotAssigned() error {
	return apierr.New(http.StatusForbidden, apierr.CodeGatewayNotAssigned, "this gateway is not assigned to you; ask a tenant administrator to assign it")
}

// CreatePlaygroundToken mints a 15-minute inference token of the caller for
// a gateway it may use: any gateway it can see, and for a Member only the
// gateways assigned to it.
func (s *Service) CreatePlaygroundToken(ctx context.Context, p *auth.Principal, gatewayID string) (*PlaygroundToken, error) {
	if err := s.can(ctx, p, auth.OpPlaygroundToken); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	if p.Role == auth.Member {
		ok, err := store.Exists[store.UserGateway](ctx, s.db, store.Eq("user_id", p.UserID), store.Eq("gateway_id", g.ID))
		if err != nil {
			return nil, fmt.Errorf("read gateway assignment: %w", err)
		}
		if !ok {
			return nil, errGatewayNotAssigned()
		}
	}
	now := s.now()
	exp := now.Add(playgroundTokenTTL)
	tok, secret := newToken(store.TokenPlayground, g.TenantID, &g.ID, &p.UserID, "playground", now)
	tok.ExpiresAt = &exp
	c := &change{Action: "playground.token", ResourceType: "token", ResourceID: tok.ID, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"gateway_id": g.ID, "user_id": p.UserID, "expires_at": exp, "prefix": tok.Prefix, "last4": tok.Last4}}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		if err := store.Lock[store.User](ctx, tx, store.Eq("id", p.UserID)); err != nil {
			return err
		}
		// Expired playground tokens are of no use to anyone: drop the
		// caller's here, so that the table does not grow with every mint.
		if err := store.DeleteExpiredTokens(ctx, tx, p.UserID, store.TokenPlayground, now, false); err != nil {
			return err
		}
		n, err := store.Count[store.Token](ctx, tx, store.Eq("user_id", p.UserID), store.Eq("kind", store.TokenPlayground))
		if err != nil {
			return fmt.Errorf("count playground tokens: %w", err)
		}
		if n >= maxPlaygroundTokens {
			return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded,
				"you hold %d unexpired playground tokens, the most one user may; reuse one of them, or try again when the oldest expires (each lasts %d minutes)",
				maxPlaygroundTokens, int(playgroundTokenTTL/time.Minute))
		}
		return store.Insert(ctx, tx, tok)
	})
	if err != nil {
		return nil, err
	}
	return &PlaygroundToken{
		Token: secret, ExpiresAt: exp, GatewayID: g.ID, TenantID: g.TenantID, GatewaySlug: g.Slug,
		BasePath: "/v1/" + g.TenantID + "/" + g.Slug + "/compat",
	}, nil
}

// usableGateways returns the gateways the caller may use in the
// playground: every gateway of an active tenant for the Administrator, its
// tenant's for a Tenant Administrator, its assigned ones for a Member.
func (s *Service) usableGateways(ctx context.Context, p *auth.Principal) ([]store.Gateway, error) {
	var scope store.GatewayScope
	switch p.Role {
	case auth.Administrator:
	case auth.TenantAdministrator:
		scope.TenantID = p.TenantID
	default:
		scope.TenantID, scope.AssignedTo = p.TenantID, p.UserID
	}
	rows, err := store.UsableGateways(ctx, s.db, scope)
	if err != nil {
		return nil, fmt.Errorf("list playground gateways: %w", err)
	}
	return rows, nil
}

// SearchPlayground lists the models the caller can reach — the routes of
// its gateways and the models listed on their provider keys — filtered
// case-insensitively by q on provider, model, route and gateway slug.
func (s *Service) SearchPlayground(ctx context.Context, p *auth.Principal, q string, limit int) (*List[PlaygroundModel], error) {
	if err := s.can(ctx, p, auth.OpPlaygroundSearch); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = playgroundSearchLimit
	}
	if limit < 1 || limit > playgroundSearchMax {
		return nil, apierr.Invalid("limit", "limit must be between 1 and %d", playgroundSearchMax)
	}
	if len(q) > 256 {
		return nil, apierr.Invalid("q", "q is longer than 256 bytes")
	}
	gws, err := s.usableGateways(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &List[PlaygroundModel]{Data: []PlaygroundModel{}}
	if len(gws) == 0 {
		return out, nil
	}
	gwIDs := make([]string, len(gws))
	for i := range gws {
		gwIDs[i] = gws[i].ID
	}
	keys, err := store.All[store.ProviderKey](ctx, s.db, "id", store.In("gateway_id", gwIDs))
	if err != nil {
		return nil, fmt.Errorf("list playground keys: %w", err)
	}
	keysOf := make(map[string][]store.ProviderKey, len(gws))
	for _, k := range keys {
		keysOf[k.GatewayID] = append(keysOf[k.GatewayID], k)
	}
	needle := strings.ToLower(q)
	seen := map[PlaygroundModel]bool{}
	kindOf := modelKinds()
	add := func(m PlaygroundModel) bool {
		m.Kind = kindOf(m.Provider, m.Model)
		if seen[m] {
			return true
		}
		seen[m] = true
		hay := strings.ToLower(m.Provider + "\x00" + m.Model + "\x00" + m.Route + "\x00" + m.GatewaySlug)
		if needle == "" || strings.Contains(hay, needle) {
			out.Data = append(out.Data, m)
		}
		return len(out.Data) < limit
	}
	for _, g := range gws {
		base := PlaygroundModel{GatewayID: g.ID, GatewaySlug: g.Slug, TenantID: g.TenantID}
		for _, r := range g.Routes {
			m := base
			m.Route = r.Name
			if len(r.Targets) > 0 {
				m.Provider, m.Model = r.Targets[0].Provider, r.Targets[0].Model
			}
			if !add(m) {
				return out, nil
			}
		}
		for _, k := range keysOf[g.ID] {
			for _, model := range k.Models {
				m := base
				m.Provider, m.Model = k.Provider, model
				if !add(m) {
					return out, nil
				}
			}
		}
	}
	return out, nil
}

// PlaygroundTrace reads the trace of a playground request.
func (s *Service) PlaygroundTrace(ctx context.Context, p *auth.Principal, id string) (*analytics.Trace, error) {
	if err := s.can(ctx, p, auth.OpPlaygroundTrace); err != nil {
		return nil, err
	}
	return s.readTrace(ctx, p, id)
}
