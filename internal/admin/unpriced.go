package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// UnpricedModel is a model that answered requests without a price over a
// range and still has none: the price editor's list of prices to add.
// Requests counts its requests flagged unpriced; the tokens are those of
// all its requests in the range.
type UnpricedModel struct {
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Requests  int64  `json:"requests"`
	TokensIn  int64  `json:"tokens_in"`
	TokensOut int64  `json:"tokens_out"`
}

// UnpricedModels lists the models that served requests without a price
// over a range and have no price now, most requests first. The
// Administrator reads one tenant or ("") every tenant; the other roles
// holding View model prices read their own tenant's.
func (s *Service) UnpricedModels(ctx context.Context, p *auth.Principal, tenantID string, r Range) (*List[UnpricedModel], error) {
	q, err := s.rangeScope(ctx, p, auth.OpModelPriceUnpriced, Scope{TenantID: tenantID}, false, r)
	if err != nil {
		return nil, err
	}
	sp, err := s.spend(ctx, q)
	if err != nil {
		return nil, err
	}
	var models []string
	for _, m := range sp.ByModel {
		if m.UnpricedRequests > 0 {
			models = append(models, m.Model)
		}
	}
	out := []UnpricedModel{}
	if len(models) == 0 {
		return &List[UnpricedModel]{Data: out}, nil
	}
	prices, err := store.All[store.ModelPrice](ctx, s.db, "provider", store.In("model", models))
	if err != nil {
		return nil, fmt.Errorf("read prices of unpriced models: %w", err)
	}
	priced := map[[2]string]bool{}
	for _, pr := range prices {
		priced[[2]string{pr.Provider, pr.Model}] = true
	}
	for _, m := range sp.ByModel {
		if m.UnpricedRequests > 0 && !priced[[2]string{m.Provider, m.Model}] {
			out = append(out, UnpricedModel{Provider: m.Provider, Model: m.Model, Requests: m.UnpricedRequests, TokensIn: m.TokensIn, TokensOut: m.TokensOut})
		}
	}
	slices.SortFunc(out, func(a, b UnpricedModel) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Provider, b.Provider), strings.Compare(a.Model, b.Model))
	})
	return &List[UnpricedModel]{Data: out}, nil
}

// PlaygroundRequest is the cost of one request the caller made: the target
// that answered it (after fallbacks), its tokens and its cost. Priced is
// false when that model had no price (the cost is 0 for want of one).
type PlaygroundRequest struct {
	ID        string    `json:"id"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Status    int       `json:"status"`
	TokensIn  int64     `json:"tokens_in"`
	TokensOut int64     `json:"tokens_out"`
	CostUSD   money.USD `json:"cost_usd"`
	Priced    bool      `json:"priced"`
}

// GetPlaygroundRequest reads the cost of one of the caller's own requests
// (made with one of its tokens: the Playground's among them) from its log.
// A request of anyone else, or one not logged yet, answers 404: a Member
// reads neither logs nor prices (CONTRACT §5) but sees the figures of its
// own requests, as the stats scope rule lets it.
func (s *Service) GetPlaygroundRequest(ctx context.Context, p *auth.Principal, id string) (*PlaygroundRequest, error) {
	if err := s.can(ctx, p, auth.OpPlaygroundRequest); err != nil {
		return nil, err
	}
	rec, err := s.cfg.Analytics.Log(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	if rec == nil {
		return nil, s.missing(ctx, p, "request", id, reasonNotFound)
	}
	if rec.UserID != p.UserID || !p.SeesTenant(rec.TenantID) {
		return nil, s.missing(ctx, p, "request", id, reasonNotVisible)
	}
	return &PlaygroundRequest{ID: rec.ID, Provider: rec.Provider, Model: rec.Model, Status: rec.Status,
		TokensIn: rec.TokensIn, TokensOut: rec.TokensOut, CostUSD: rec.CostUSD, Priced: !analytics.IsUnpriced(rec)}, nil
}
