package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// GatewaySettings are the changeable settings of a gateway; absent fields
// stay as they are (on create: the defaults). Budget is set with an object
// and removed with null.
type GatewaySettings struct {
	Name              *string                          `json:"name"`
	LogBodies         *bool                            `json:"log_bodies"`
	BodyLogLimitBytes *int                             `json:"body_log_limit_bytes"`
	Cache             *store.CacheSettings             `json:"cache"`
	RateLimit         *store.RateLimit                 `json:"rate_limit"`
	RequestTimeoutMS  *int                             `json:"request_timeout_ms"`
	Retry             *store.RetrySettings             `json:"retry"`
	Routes            *[]store.Route                   `json:"routes"`
	CircuitBreaker    *store.BreakerSettings           `json:"circuit_breaker"`
	Budget            graphql.Omittable[*store.Budget] `json:"budget"`
}

// GatewayInput creates a gateway.
type GatewayInput struct {
	Slug string `json:"slug"`
	GatewaySettings
}

// defaultGateway returns a gateway with the documented defaults.
func defaultGateway(tenantID, slug string, logBodies bool) *store.Gateway {
	return &store.Gateway{
		TenantID: tenantID, Slug: slug, Name: slug,
		LogBodies: logBodies, BodyLogLimitBytes: 65536,
		Cache:            store.CacheSettings{Enabled: false, TTLSeconds: 300},
		RequestTimeoutMS: 120000,
		Retry:            store.RetrySettings{MaxAttempts: 2, BackoffMS: 200},
		Routes:           store.Routes{},
		CircuitBreaker:   store.BreakerSettings{FailureThreshold: 5, CooldownSeconds: 30},
	}
}

// apply validates in and writes it into g, returning the changed columns
// and the audited changes.
func (in *GatewaySettings) apply(g *store.Gateway) ([]string, store.Changes, error) {
	var cols []string
	ch := store.Changes{}
	set := func(col string, v any) { cols = append(cols, col); ch[col] = v }
	if in.Name != nil {
		if err := checkText("name", *in.Name, 200, true); err != nil {
			return nil, nil, err
		}
		g.Name = *in.Name
		set("name", g.Name)
	}
	if in.LogBodies != nil {
		g.LogBodies = *in.LogBodies
		set("log_bodies", g.LogBodies)
	}
	if in.BodyLogLimitBytes != nil {
		if v := *in.BodyLogLimitBytes; v < 0 || v > 1<<20 {
			return nil, nil, apierr.Invalid("body_log_limit_bytes", "body_log_limit_bytes must be between 0 and 1048576")
		}
		g.BodyLogLimitBytes = *in.BodyLogLimitBytes
		set("body_log_limit_bytes", g.BodyLogLimitBytes)
	}
	if in.Cache != nil {
		if v := in.Cache.TTLSeconds; v < 1 || v > 7*86400 {
			return nil, nil, apierr.Invalid("cache.ttl_seconds", "cache.ttl_seconds must be between 1 and 604800")
		}
		g.Cache = *in.Cache
		set("cache", g.Cache)
	}
	if in.RateLimit != nil {
		if err := checkRateLimit("rate_limit", in.RateLimit); err != nil {
			return nil, nil, err
		}
		g.RateLimit = *in.RateLimit
		set("rate_limit", g.RateLimit)
	}
	if in.RequestTimeoutMS != nil {
		if v := *in.RequestTimeoutMS; v < 1000 || v > 600000 {
			return nil, nil, apierr.Invalid("request_timeout_ms", "request_timeout_ms must be between 1000 and 600000")
		}
		g.RequestTimeoutMS = *in.RequestTimeoutMS
		set("request_timeout_ms", g.RequestTimeoutMS)
	}
	if in.Retry != nil {
		if v := in.Retry.MaxAttempts; v < 1 || v > 10 {
			return nil, nil, apierr.Invalid("retry.max_attempts", "retry.max_attempts must be between 1 and 10 (attempts in total, across targets)")
		}
		if v := in.Retry.BackoffMS; v < 0 || v > 60000 {
			return nil, nil, apierr.Invalid("retry.backoff_ms", "retry.backoff_ms must be between 0 and 60000")
		}
		g.Retry = *in.Retry
		set("retry", g.Retry)
	}
	if in.Routes != nil {
		routes, err := checkRoutes(*in.Routes)
		if err != nil {
			return nil, nil, err
		}
		g.Routes = routes
		set("routes", g.Routes)
	}
	if in.CircuitBreaker != nil {
		if v := in.CircuitBreaker.FailureThreshold; v < 1 || v > 1000 {
			return nil, nil, apierr.Invalid("circuit_breaker.failure_threshold", "circuit_breaker.failure_threshold must be between 1 and 1000")
		}
		if v := in.CircuitBreaker.CooldownSeconds; v < 1 || v > 600 {
			return nil, nil, apierr.Invalid("circuit_breaker.cooldown_seconds", "circuit_breaker.cooldown_seconds must be between 1 and 600")
		}
		g.CircuitBreaker = *in.CircuitBreaker
		set("circuit_breaker", g.CircuitBreaker)
	}
	if b, ok := in.Budget.ValueOK(); ok {
		if b != nil {
			if err := checkBudget(b); err != nil {
				return nil, nil, err
			}
		}
		g.Budget = b
		set("budget", b)
	}
	return cols, ch, nil
}

func checkRateLimit(param string, r *store.RateLimit) error {
	if v := r.RequestsPerMinute; v != nil && (*v < 1 || *v > 10_000_000) {
		return apierr.Invalid(param+".requests_per_minute", "requests_per_minute must be null or between 1 and 10000000")
	}
	if v := r.TokensPerMinute; v != nil && (*v < 1 || *v > 2_000_000_000) {
		return apierr.Invalid(param+".tokens_per_minute", "tokens_per_minute must be null or between 1 and 2000000000")
	}
	return checkMaxInFlight(param+".max_in_flight", r.MaxInFlight)
}

// maxInFlightLimit bounds every max_in_flight: far above what one process
// can hold open, low enough that a count never nears overflow.
const maxInFlightLimit = 1_000_000

func checkMaxInFlight(param string, v *int) error {
	if v != nil && (*v < 1 || *v > maxInFlightLimit) {
		return apierr.Invalid(param, "max_in_flight must be null or between 1 and %d", maxInFlightLimit)
	}
	return nil
}

func checkBudget(b *store.Budget) error {
	if b.AmountUSD <= 0 {
		return apierr.Invalid("budget.amount_usd", "budget.amount_usd must be greater than 0")
	}
	if !budget.ValidPeriod(b.Period) {
		return apierr.Invalid("budget.period", "budget.period must be daily, weekly, monthly or total")
	}
	return nil
}

func checkRoutes(in []store.Route) (store.Routes, error) {
	if len(in) > 100 {
		return nil, apierr.Invalid("routes", "a gateway has at most 100 routes")
	}
	seen := map[string]bool{}
	out := make(store.Routes, 0, len(in))
	for i, r := range in {
		param := fmt.Sprintf("routes[%d]", i)
		if err := checkText(param+".name", r.Name, 128, true); err != nil {
			return nil, err
		}
		if strings.ContainsAny(r.Name, "/ ") {
			return nil, apierr.Invalid(param+".name", "a route name may not contain '/' or spaces: '/' separates provider and model in /compat")
		}
		if seen[r.Name] {
			return nil, apierr.Invalid(param+".name", "route %q is defined twice", r.Name)
		}
		seen[r.Name] = true
		if r.Strategy == "" {
			r.Strategy = store.StrategyFallback
		}
		if r.Strategy != store.StrategyFallback && r.Strategy != store.StrategyLoadBalance {
			return nil, apierr.Invalid(param+".strategy", "strategy must be fallback or loadbalance")
		}
		if len(r.Targets) == 0 || len(r.Targets) > 16 {
			return nil, apierr.Invalid(param+".targets", "a route has 1 to 16 targets")
		}
		for j := range r.Targets {
			t := &r.Targets[j]
			tp := fmt.Sprintf("%s.targets[%d]", param, j)
			if _, ok := catalog.LookupProvider(t.Provider); !ok {
				return nil, apierr.Invalid(tp+".provider", "unknown provider %q", t.Provider)
			}
			if err := checkText(tp+".model", t.Model, 256, true); err != nil {
				return nil, err
			}
			if t.Weight == 0 {
				t.Weight = 1
			}
			if t.Weight < 0 || t.Weight > 1000 {
				return nil, apierr.Invalid(tp+".weight", "weight must be between 1 and 1000")
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// checkRouteKeys refuses routes of g whose targets name a key alias the
// gateway has no key of that provider for: such a target could never be
// served, so the inconsistency is refused when it is written rather than
// found out by requests. db is the writing transaction, so that a key
// deleted meanwhile is seen (DeleteKey checks the other way round).
func checkRouteKeys(ctx context.Context, db bun.IDB, g *store.Gateway) error {
	var keys []store.ProviderKey
	loaded := false
	for i, r := range g.Routes {
		for j, t := range r.Targets {
			if t.KeyAlias == nil || *t.KeyAlias == "" {
				continue
			}
			if !loaded {
				var err error
				if keys, err = store.All[store.ProviderKey](ctx, db, "id", store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID)); err != nil {
					return fmt.Errorf("read provider keys: %w", err)
				}
				loaded = true
			}
			if !slices.ContainsFunc(keys, func(k store.ProviderKey) bool { return k.Provider == t.Provider && k.Alias == *t.KeyAlias }) {
				return apierr.Invalid(fmt.Sprintf("routes[%d].targets[%d].key_alias", i, j),
					"route %q names the %s key %q, which this gateway does not have; add the key first", r.Name, t.Provider, *t.KeyAlias)
			}
		}
	}
	return nil
}

// routeNaming returns the first route with a target that names the key of
// provider and alias.
func routeNaming(routes store.Routes, provider, alias string) (string, bool) {
	for _, r := range routes {
		for _, t := range r.Targets {
			if t.Provider == provider && t.KeyAlias != nil && *t.KeyAlias == alias {
				return r.Name, true
			}
		}
	}
	return "", false
}

// gateway loads a gateway the principal may see, or answers 404.
func (s *Service) gateway(ctx context.Context, db bun.IDB, p *auth.Principal, id string) (*store.Gateway, error) {
	g, err := store.Get[store.Gateway](ctx, db, store.Eq("id", id))
	if isNotFound(err) {
		return nil, s.missing(ctx, p, "gateway", id, reasonNotFound)
	}
	if err != nil {
		return nil, notFound(err, "gateway")
	}
	if !p.SeesTenant(g.TenantID) {
		return nil, s.missing(ctx, p, "gateway", id, reasonOtherTenant)
	}
	return g, nil
}

// fillBudget computes the state fields of b for scope.
func (s *Service) fillBudget(ctx context.Context, b *store.Budget, scope string) {
	if b == nil {
		return
	}
	start, resets := budget.Window(b.Period, s.now())
	b.ResetsAt = resets
	if s.cfg.Budgets != nil {
		spent, err := s.cfg.Budgets.Spent(ctx, scope, start)
		if err != nil {
			s.log.WarnContext(ctx, "read budget spend", "scope", scope, "err", err)
		}
		b.SpentUSD = spent
	}
	b.RemainingUSD = max(b.AmountUSD-b.SpentUSD, 0)
}

// ListGateways lists the gateways of a tenant.
func (s *Service) ListGateways(ctx context.Context, p *auth.Principal, tenantID string, pg Page) (*List[store.Gateway], error) {
	if err := s.can(ctx, p, auth.OpGatewayList); err != nil {
		return nil, err
	}
	if _, err := s.tenant(ctx, s.db, p, tenantID); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	rows, next, err := store.List(ctx, s.db, "id", func(g *store.Gateway) string { return g.ID }, pg, store.Eq("tenant_id", tenantID))
	if err != nil {
		return nil, fmt.Errorf("list gateways: %w", err)
	}
	for i := range rows {
		s.fillBudget(ctx, rows[i].Budget, "gateway:"+rows[i].ID)
	}
	return &List[store.Gateway]{Data: rows, NextCursor: next}, nil
}

// GetGateway reads a gateway with its budget state.
func (s *Service) GetGateway(ctx context.Context, p *auth.Principal, id string) (*store.Gateway, error) {
	if err := s.can(ctx, p, auth.OpGatewayRead); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	s.fillBudget(ctx, g.Budget, "gateway:"+g.ID)
	return g, nil
}

// CreateGateway creates a gateway in a tenant.
func (s *Service) CreateGateway(ctx context.Context, p *auth.Principal, tenantID string, in GatewayInput) (*store.Gateway, error) {
	if err := s.can(ctx, p, auth.OpGatewayCreate); err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx, s.db, p, tenantID)
	if err != nil {
		return nil, err
	}
	if t.Status == store.TenantDeleted {
		return nil, apierr.NotFound("tenant")
	}
	if err := checkSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	g := defaultGateway(tenantID, in.Slug, t.Settings.LogBodiesDefault)
	_, changes, err := in.apply(g)
	if err != nil {
		return nil, err
	}
	now := s.now()
	g.ID, g.CreatedAt, g.UpdatedAt = ids.New("gw"), now, now
	changes["slug"] = g.Slug
	c := &change{Action: "gateway.create", ResourceType: "gateway", ResourceID: g.ID, TenantID: tenantID, Changes: changes, Config: true}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		if err := checkRouteKeys(ctx, tx, g); err != nil {
			return err
		}
		return store.Insert(ctx, tx, g)
	})
	if err != nil {
		if ae, ok := apierr.From(err); ok && ae.Code == apierr.CodeConflict {
			return nil, apierr.Conflict("slug", "gateway %q already exists in tenant %s", in.Slug, tenantID)
		}
		return nil, err
	}
	s.fillBudget(ctx, g.Budget, "gateway:"+g.ID)
	return g, nil
}

// UpdateGateway changes a gateway's settings, routes or budget.
func (s *Service) UpdateGateway(ctx context.Context, p *auth.Principal, id string, in GatewaySettings) (*store.Gateway, error) {
	if err := s.can(ctx, p, auth.OpGatewayUpdate); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	cols, changes, err := in.apply(g)
	if err != nil {
		return nil, err
	}
	if len(cols) > 0 {
		g.UpdatedAt = s.now()
		cols = append(cols, "updated_at")
		c := &change{Action: "gateway.update", ResourceType: "gateway", ResourceID: id, TenantID: g.TenantID, Changes: changes, Config: true}
		err := s.write(ctx, p, c, func(tx bun.Tx) error {
			if in.Routes != nil {
				if err := checkRouteKeys(ctx, tx, g); err != nil {
					return err
				}
			}
			return store.Update(ctx, tx, g, cols...)
		})
		if err != nil {
			return nil, err
		}
	}
	s.fillBudget(ctx, g.Budget, "gateway:"+g.ID)
	return g, nil
}

// DeleteGateway deletes a gateway with its keys, rules, tokens and
// assignments.
func (s *Service) DeleteGateway(ctx context.Context, p *auth.Principal, id string) error {
	if err := s.can(ctx, p, auth.OpGatewayDelete); err != nil {
		return err
	}
	g, err := s.gateway(ctx, s.db, p, id)
	if err != nil {
		return err
	}
	c := &change{Action: "gateway.delete", ResourceType: "gateway", ResourceID: id, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"slug": g.Slug}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		return deleteInOrder("gateway "+id,
			func() (int64, error) { return store.Delete[store.Token](ctx, tx, store.Eq("gateway_id", id)) },
			func() (int64, error) { return store.Delete[store.UserGateway](ctx, tx, store.Eq("gateway_id", id)) },
			func() (int64, error) { return store.Delete[store.Rule](ctx, tx, store.Eq("gateway_id", id)) },
			func() (int64, error) { return store.Delete[store.ProviderKey](ctx, tx, store.Eq("gateway_id", id)) },
			func() (int64, error) { return store.Delete[store.Gateway](ctx, tx, store.Eq("id", id)) })
	})
}

// DeleteGatewayBudget removes a gateway's budget.
func (s *Service) DeleteGatewayBudget(ctx context.Context, p *auth.Principal, id string) error {
	if err := s.can(ctx, p, auth.OpGatewayBudgetDelete); err != nil {
		return err
	}
	g, err := s.gateway(ctx, s.db, p, id)
	if err != nil {
		return err
	}
	if g.Budget == nil {
		return nil
	}
	g.Budget, g.UpdatedAt = nil, s.now()
	c := &change{Action: "gateway.budget.delete", ResourceType: "gateway", ResourceID: id, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"budget": nil}}
	return s.write(ctx, p, c, func(tx bun.Tx) error { return store.Update(ctx, tx, g, "budget", "updated_at") })
}
