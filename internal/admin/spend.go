package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// ScopeSpend is the cost of one gateway, user or API token of a tenant over
// a range, named, with that object's budget state (nil without one). ID is
// empty for requests made without such an object (a gateway token has no
// user); Name is empty when the object has since been deleted or is of
// another tenant (a platform Administrator using this tenant): names of
// other tenants are not shown.
type ScopeSpend struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Requests int64         `json:"requests"`
	CostUSD  money.USD     `json:"cost_usd"`
	Budget   *store.Budget `json:"budget"`
	// UnpricedRequests counts the requests flagged unpriced (cost 0 for
	// want of a price).
	UnpricedRequests int64 `json:"unpriced_requests"`
}

// TenantSpend answers the cost of a tenant over a range by model, by day,
// by gateway, by user and by API token, with the budget state of the
// tenant and of each gateway, user and token listed. Roles holding View
// cost breakdowns read it; the names come with it because they may not
// list gateways, users or tokens themselves.
func (s *Service) TenantSpend(ctx context.Context, p *auth.Principal, tenantID string, r Range) (*Spend, error) {
	t, q, err := s.tenantFigures(ctx, p, auth.OpTenantSpend, tenantID, r)
	if err != nil {
		return nil, err
	}
	sp, err := s.spend(ctx, q)
	if err != nil {
		return nil, err
	}
	s.fillTenantBudget(ctx, t)
	sp.Budget = t.Budget
	if sp.ByGateway, err = s.scopeSpend(ctx, q, "gateway", gatewayNames); err != nil {
		return nil, err
	}
	if sp.ByUser, err = s.scopeSpend(ctx, q, "user", userNames); err != nil {
		return nil, err
	}
	if sp.ByToken, err = s.scopeSpend(ctx, q, "token", tokenNames); err != nil {
		return nil, err
	}
	return sp, nil
}

// named is an object of a tenant that a spend row names: its name and budget.
type named struct {
	name   string
	budget *store.Budget
}

// namesOf reads the names and budgets of the objects ids of a tenant.
type namesOf func(ctx context.Context, s *Service, tenantID string, ids []string) (map[string]named, error)

// scopeSpend groups the spend of q by a dimension of analytics.Analysis
// (gateway, user or token), costliest first, and names each row.
func (s *Service) scopeSpend(ctx context.Context, q analytics.Query, by string, names namesOf) ([]ScopeSpend, error) {
	a, err := s.cfg.Analytics.Analysis(ctx, q, by)
	if err != nil {
		return nil, fmt.Errorf("read spend by %s: %w", by, err)
	}
	out := []ScopeSpend{}
	if a == nil {
		return out, nil
	}
	ids := make([]string, 0, len(a.Groups))
	for _, g := range a.Groups {
		if g.Key != "" {
			ids = append(ids, g.Key)
		}
	}
	known := map[string]named{}
	if len(ids) > 0 {
		if known, err = names(ctx, s, q.TenantID, ids); err != nil {
			return nil, fmt.Errorf("name the %ss of the spend: %w", by, err)
		}
	}
	for _, g := range a.Groups {
		n := known[g.Key]
		out = append(out, ScopeSpend{ID: g.Key, Name: n.name, Requests: g.Requests, CostUSD: g.CostUSD, Budget: n.budget,
			UnpricedRequests: g.UnpricedRequests})
	}
	sortSpend(out)
	return out, nil
}

// readNames reads the objects T of a tenant with the given ids and fills
// their budgets; fields picks the id, name, budget and budget scope of one.
func readNames[T any](fields func(*T) (id, name string, b *store.Budget, scope string)) namesOf {
	return func(ctx context.Context, s *Service, tenantID string, ids []string) (map[string]named, error) {
		rows, err := store.All[T](ctx, s.db, "id", store.Eq("tenant_id", tenantID), store.In("id", ids))
		if err != nil {
			return nil, err
		}
		m := make(map[string]named, len(rows))
		for i := range rows {
			id, name, b, scope := fields(&rows[i])
			s.fillBudget(ctx, b, scope)
			m[id] = named{name, b}
		}
		return m, nil
	}
}

var (
	gatewayNames = readNames(func(g *store.Gateway) (string, string, *store.Budget, string) {
		return g.ID, g.Name, g.Budget, budget.GatewayScope(g.ID)
	})
	userNames = readNames(func(u *store.User) (string, string, *store.Budget, string) {
		return u.ID, u.Email, u.Budget, budget.UserScope(u.ID)
	})
	tokenNames = readNames(func(t *store.Token) (string, string, *store.Budget, string) {
		return t.ID, t.Name, t.Budget, budget.TokenScope(t.ID)
	})
)

// sortSpend orders rows costliest first, then by name and id.
func sortSpend(rows []ScopeSpend) {
	slices.SortStableFunc(rows, func(a, b ScopeSpend) int {
		if c := cmp.Compare(b.CostUSD, a.CostUSD); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
