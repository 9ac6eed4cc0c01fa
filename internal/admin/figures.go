package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/page"
	"github.com/sluicehq/sluice/internal/store"
)

// Range is the time span of a figure. The zero Range is the last 24 hours
// ending now; a zero From is 24 hours before To, a zero To is now.
type Range struct {
	From, To time.Time
}

// Spend is the cost of a gateway or tenant with the budget state (the
// gateway's or the tenant's budget; nil without one). A tenant's spend is
// also broken down by gateway, user and token (see TenantSpend).
type Spend struct {
	analytics.Spend
	Budget    *store.Budget `json:"budget"`
	ByGateway []ScopeSpend  `json:"by_gateway,omitempty"`
	ByUser    []ScopeSpend  `json:"by_user,omitempty"`
	ByToken   []ScopeSpend  `json:"by_token,omitempty"`
}

// LogQuery selects request logs. Zero fields match everything; the
// fields not described here mean what analytics.LogFilter's do.
type LogQuery struct {
	TenantID, GatewayID, UserID, TokenID, Provider, Model, ErrorCode string
	// Operation is one of the operations of CONTRACT §12 (analytics.OpChat, …).
	Operation   string
	Status      int
	StatusClass string
	Metadata    map[string]string
	Search      string
	LatencyMS   analytics.Bounds
	CostUSD     analytics.Bounds
	// SortBy is ts (the default), latency, cost, tokens or status; Order
	// is desc (the default) or asc.
	SortBy, Order string
	// Count asks for the total count of the matching logs.
	Count bool
	Range Range
	Page  Page
}

const (
	maxRange       = 400 * 24 * time.Hour
	maxMinuteRange = 2 * 24 * time.Hour
	maxHourRange   = 90 * 24 * time.Hour
	// maxLogMetadata matches the inference header x-sluice-metadata, which
	// carries at most 8 values.
	maxLogMetadata = 8
)

// Time-series intervals.
const (
	IntervalMinute = "minute"
	IntervalHour   = "hour"
	IntervalDay    = "day"
)

// groupBys are the dimensions of /stats/analytics.
var groupBys = map[string]bool{"model": true, "provider": true, "gateway": true, "user": true, "status": true, "error_code": true}

// checkRange fills the defaults of r and validates it.
func (s *Service) checkRange(r Range) (Range, error) {
	from, to, ok := page.Range(r.From, r.To, s.now())
	if !ok {
		return r, apierr.Invalid("from", "from must be before to")
	}
	r.From, r.To = from, to
	if r.To.Sub(r.From) > maxRange {
		return r, apierr.Invalid("from", "a range spans at most 400 days")
	}
	return r, nil
}

// seesTenantFigures reports whether role r reads its tenant's whole usage
// figures in stats and timeseries. A role that may read the tenant's cost
// breakdowns (Finance) or analytics (AI Manager) is already shown every
// request of the tenant there, so counting only its own tokens in the
// Overview would answer zero for no gain in secrecy (docs/decisions.md).
func seesTenantFigures(r auth.Role) bool {
	return r == auth.TenantAdministrator || r.Has(auth.ViewCost) || r.Has(auth.ViewAnalytics)
}

// Scope selects the requests a figure counts: a tenant ("" for the
// caller's own, or every tenant for the Administrator) and, when GatewayID
// is set, one gateway of it (a gateway page's Activity tab).
type Scope struct {
	TenantID, GatewayID string
}

// scope is the analytics query of the scope rule for tenantID: the
// Administrator sees the tenant given (or all with ""); every other role
// its own tenant, a tenant id of another answering 404. With ownOnly, the
// roles seesTenantFigures refuses see only requests made with their own tokens.
func (s *Service) scope(ctx context.Context, p *auth.Principal, tenantID string, ownOnly bool) (analytics.Query, error) {
	return s.scopeOf(ctx, p, Scope{TenantID: tenantID}, ownOnly)
}

// scopeOf is scope with an optional gateway: a gateway the caller may not
// see, or of another tenant than sc.TenantID, answers 404 like a tenant.
func (s *Service) scopeOf(ctx context.Context, p *auth.Principal, sc Scope, ownOnly bool) (analytics.Query, error) {
	tenantID := sc.TenantID
	if sc.GatewayID != "" {
		g, err := s.gateway(ctx, s.db, p, sc.GatewayID)
		if err != nil {
			return analytics.Query{}, err
		}
		if tenantID != "" && tenantID != g.TenantID {
			return analytics.Query{}, s.missing(ctx, p, "gateway", sc.GatewayID, reasonOtherTenant)
		}
		tenantID = g.TenantID
	}
	q, err := s.scopeTenant(ctx, p, tenantID, ownOnly)
	q.GatewayID = sc.GatewayID
	return q, err
}

// rangeScope checks op, then answers the analytics query of sc (see
// scopeOf) over r, its defaults filled and validated (see checkRange).
func (s *Service) rangeScope(ctx context.Context, p *auth.Principal, op auth.Op, sc Scope, ownOnly bool, r Range) (analytics.Query, error) {
	if err := s.can(ctx, p, op); err != nil {
		return analytics.Query{}, err
	}
	q, err := s.scopeOf(ctx, p, sc, ownOnly)
	if err != nil {
		return q, err
	}
	if r, err = s.checkRange(r); err != nil {
		return q, err
	}
	q.From, q.To = r.From, r.To
	return q, nil
}

func (s *Service) scopeTenant(ctx context.Context, p *auth.Principal, tenantID string, ownOnly bool) (analytics.Query, error) {
	var q analytics.Query
	if tenantID != "" {
		if _, err := s.tenant(ctx, s.db, p, tenantID); err != nil {
			return q, err
		}
	}
	if p.Role == auth.Administrator {
		q.TenantID = tenantID
		return q, nil
	}
	q.TenantID = p.TenantID
	if ownOnly && !seesTenantFigures(p.Role) {
		q.UserID = p.UserID
	}
	return q, nil
}

// Stats answers the usage figures of a range under the scope rule.
func (s *Service) Stats(ctx context.Context, p *auth.Principal, tenantID string, r Range) (*analytics.Stats, error) {
	return s.stats(ctx, p, auth.OpStats, Scope{TenantID: tenantID}, r)
}

// StatsIn is Stats of a scope that may name one gateway.
func (s *Service) StatsIn(ctx context.Context, p *auth.Principal, sc Scope, r Range) (*analytics.Stats, error) {
	return s.stats(ctx, p, auth.OpStats, sc, r)
}

// stats checks op, then answers the figure of sc.
func (s *Service) stats(ctx context.Context, p *auth.Principal, op auth.Op, sc Scope, r Range) (*analytics.Stats, error) {
	q, err := s.rangeScope(ctx, p, op, sc, true, r)
	if err != nil {
		return nil, err
	}
	st, err := s.cfg.Analytics.Stats(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read stats: %w", err)
	}
	if st == nil {
		st = &analytics.Stats{From: q.From, To: q.To}
	}
	return st, nil
}

// Timeseries answers the usage of a range per minute, hour or day under
// the scope rule. An empty interval is hour for ranges up to 90 days and
// day beyond.
func (s *Service) Timeseries(ctx context.Context, p *auth.Principal, tenantID, interval string, r Range) (*analytics.Timeseries, error) {
	return s.timeseries(ctx, p, auth.OpStatsTimeseries, Scope{TenantID: tenantID}, interval, r)
}

// TimeseriesIn is Timeseries of a scope that may name one gateway.
func (s *Service) TimeseriesIn(ctx context.Context, p *auth.Principal, sc Scope, interval string, r Range) (*analytics.Timeseries, error) {
	return s.timeseries(ctx, p, auth.OpStatsTimeseries, sc, interval, r)
}

// timeseries checks op, then answers the figure of sc.
func (s *Service) timeseries(ctx context.Context, p *auth.Principal, op auth.Op, sc Scope, interval string, r Range) (*analytics.Timeseries, error) {
	q, err := s.rangeScope(ctx, p, op, sc, true, r)
	if err != nil {
		return nil, err
	}
	if interval, err = checkInterval(interval, Range{From: q.From, To: q.To}); err != nil {
		return nil, err
	}
	ts, err := s.cfg.Analytics.Timeseries(ctx, q, interval)
	if err != nil {
		return nil, fmt.Errorf("read timeseries: %w", err)
	}
	if ts == nil {
		ts = &analytics.Timeseries{Interval: interval, Points: []analytics.Point{}}
	}
	return ts, nil
}

// Analysis groups the usage of a range by model, provider, gateway, user,
// status or error code. The Administrator sees any tenant (or all); other
// roles their own tenant.
func (s *Service) Analysis(ctx context.Context, p *auth.Principal, tenantID, groupBy string, r Range) (*analytics.Analysis, error) {
	return s.analysis(ctx, p, auth.OpStatsAnalytics, Scope{TenantID: tenantID}, groupBy, r)
}

// AnalysisIn is Analysis of a scope that may name one gateway.
func (s *Service) AnalysisIn(ctx context.Context, p *auth.Principal, sc Scope, groupBy string, r Range) (*analytics.Analysis, error) {
	return s.analysis(ctx, p, auth.OpStatsAnalytics, sc, groupBy, r)
}

// analysis checks op, then answers the figure of sc.
func (s *Service) analysis(ctx context.Context, p *auth.Principal, op auth.Op, sc Scope, groupBy string, r Range) (*analytics.Analysis, error) {
	if err := s.can(ctx, p, op); err != nil {
		return nil, err
	}
	q, err := s.scopeOf(ctx, p, sc, false)
	if err != nil {
		return nil, err
	}
	if groupBy == "" {
		groupBy = "model"
	}
	if !groupBys[groupBy] {
		return nil, apierr.Invalid("group_by", "group_by must be model, provider, gateway, user, status or error_code")
	}
	if r, err = s.checkRange(r); err != nil {
		return nil, err
	}
	q.From, q.To = r.From, r.To
	a, err := s.cfg.Analytics.Analysis(ctx, q, groupBy)
	if err != nil {
		return nil, fmt.Errorf("read analysis: %w", err)
	}
	if a == nil {
		a = &analytics.Analysis{From: q.From, To: q.To, GroupBy: groupBy, Groups: []analytics.Group{}}
	}
	return a, nil
}

// spend reads the spend of q, never answering nil.
func (s *Service) spend(ctx context.Context, q analytics.Query) (*Spend, error) {
	sp, err := s.cfg.Analytics.Spend(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read spend: %w", err)
	}
	if sp == nil {
		sp = &analytics.Spend{From: q.From, To: q.To, ByModel: []analytics.ModelSpend{}, ByDay: []analytics.DaySpend{}}
	}
	return &Spend{Spend: *sp}, nil
}

// GatewaySpend answers the cost of a gateway over a range, by model and by
// day, with its budget state.
func (s *Service) GatewaySpend(ctx context.Context, p *auth.Principal, gatewayID string, r Range) (*Spend, error) {
	if err := s.can(ctx, p, auth.OpGatewaySpend); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	if r, err = s.checkRange(r); err != nil {
		return nil, err
	}
	sp, err := s.spend(ctx, analytics.Query{TenantID: g.TenantID, GatewayID: g.ID, From: r.From, To: r.To})
	if err != nil {
		return nil, err
	}
	s.fillBudget(ctx, g.Budget, "gateway:"+g.ID)
	sp.Budget = g.Budget
	return sp, nil
}

// TenantAnalysis answers a tenant's top gateways, users and models, error
// rate and cache savings over a range.
func (s *Service) TenantAnalysis(ctx context.Context, p *auth.Principal, tenantID string, r Range) (*analytics.TenantAnalysis, error) {
	_, q, err := s.tenantFigures(ctx, p, auth.OpTenantAnalytics, tenantID, r)
	if err != nil {
		return nil, err
	}
	a, err := s.cfg.Analytics.TenantAnalysis(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read tenant analysis: %w", err)
	}
	if a == nil {
		a = &analytics.TenantAnalysis{From: q.From, To: q.To, TopGateways: []analytics.Group{}, TopUsers: []analytics.Group{}, TopModels: []analytics.Group{}}
	}
	return a, nil
}

// checkFigurePage validates the limit of an analytics listing. Its cursor
// belongs to the analytics backend, which checks it; here it is only held
// to the bound of every cursor (page.CursorOK), as REST holds it. The
// backend refuses what is over the bound with the same answer.
func checkFigurePage(pg Page) (Page, error) {
	checked, err := checkPage(Page{Limit: pg.Limit})
	if err != nil {
		return pg, err
	}
	if !page.CursorOK(pg.Cursor) {
		return pg, apierr.Invalid("cursor", "cursor is not valid")
	}
	checked.Cursor = pg.Cursor
	return checked, nil
}

// Logs lists request logs in the order lq asks for (newest first by
// default), with their total count when lq.Count. A caller other than the
// Administrator sees only its own tenant's logs.
func (s *Service) Logs(ctx context.Context, p *auth.Principal, lq LogQuery) (*List[analytics.Record], error) {
	if err := s.can(ctx, p, auth.OpLogList); err != nil {
		return nil, err
	}
	q, err := s.scope(ctx, p, lq.TenantID, false)
	if err != nil {
		return nil, err
	}
	if lq.GatewayID != "" {
		g, err := s.gateway(ctx, s.db, p, lq.GatewayID)
		if err != nil {
			return nil, err
		}
		q.GatewayID = g.ID
	}
	pg, err := checkFigurePage(lq.Page)
	if err != nil {
		return nil, err
	}
	r, err := s.checkRange(lq.Range)
	if err != nil {
		return nil, err
	}
	f, err := lq.filter()
	if err != nil {
		return nil, err
	}
	q.From, q.To = r.From, r.To
	if lq.UserID != "" {
		q.UserID = lq.UserID
	}
	f.Query, f.Limit, f.Cursor = q, pg.Limit, pg.Cursor
	recs, next, err := s.cfg.Analytics.Logs(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	l := &List[analytics.Record]{Data: recs, NextCursor: next}
	if lq.Count {
		n, err := s.cfg.Analytics.LogCount(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("count logs: %w", err)
		}
		l.TotalCount = &n
	}
	if l.Data == nil {
		l.Data = []analytics.Record{}
	}
	return l, nil
}

// Log reads one request log with its bodies and trace id.
func (s *Service) Log(ctx context.Context, p *auth.Principal, id string) (*analytics.Record, error) {
	if err := s.can(ctx, p, auth.OpLogRead); err != nil {
		return nil, err
	}
	rec, err := s.cfg.Analytics.Log(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	if rec == nil {
		return nil, s.missing(ctx, p, "log", id, reasonNotFound)
	}
	if !p.SeesTenant(rec.TenantID) {
		return nil, s.missing(ctx, p, "log", id, reasonOtherTenant)
	}
	return rec, nil
}

// GatewayTraces lists the traces of a gateway over a range, newest first.
func (s *Service) GatewayTraces(ctx context.Context, p *auth.Principal, gatewayID string, r Range, pg Page) (*List[analytics.TraceSummary], error) {
	return gatewayListing(ctx, s, p, auth.OpTraceList, gatewayID, r, pg, "traces", s.cfg.Analytics.Traces)
}

// Trace reads the span tree of one trace.
func (s *Service) Trace(ctx context.Context, p *auth.Principal, id string) (*analytics.Trace, error) {
	if err := s.can(ctx, p, auth.OpTraceRead); err != nil {
		return nil, err
	}
	return s.readTrace(ctx, p, id)
}

// readTrace reads a trace the principal may see, or answers 404.
func (s *Service) readTrace(ctx context.Context, p *auth.Principal, id string) (*analytics.Trace, error) {
	q, err := s.scope(ctx, p, "", false) // an Administrator: any tenant
	if err != nil {
		return nil, err
	}
	tr, err := s.cfg.Analytics.Trace(ctx, id, q.TenantID)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	if tr == nil || !p.SeesTenant(tr.TenantID) {
		return nil, s.missing(ctx, p, "trace", id, reasonNotVisible)
	}
	return tr, nil
}

// GuardrailStats answers the hits of a gateway's content rules over a range.
func (s *Service) GuardrailStats(ctx context.Context, p *auth.Principal, gatewayID string, r Range) (*analytics.GuardrailStats, error) {
	if err := s.can(ctx, p, auth.OpGuardrailStats); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	if r, err = s.checkRange(r); err != nil {
		return nil, err
	}
	return s.guardrailStats(ctx, analytics.Query{TenantID: g.TenantID, GatewayID: g.ID, From: r.From, To: r.To})
}

// guardrailStats reads the rule hits of q, never answering nil.
func (s *Service) guardrailStats(ctx context.Context, q analytics.Query) (*analytics.GuardrailStats, error) {
	gs, err := s.cfg.Analytics.GuardrailStats(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read guardrail stats: %w", err)
	}
	if gs == nil {
		gs = &analytics.GuardrailStats{From: q.From, To: q.To, ByRule: []analytics.RuleHits{}, Points: []analytics.Point{}}
	}
	return gs, nil
}

// GuardrailEvents lists the rule hits of a gateway over a range, newest first.
func (s *Service) GuardrailEvents(ctx context.Context, p *auth.Principal, gatewayID string, r Range, pg Page) (*List[analytics.GuardrailEvent], error) {
	return gatewayListing(ctx, s, p, auth.OpGuardrailEvents, gatewayID, r, pg, "guardrail events", s.cfg.Analytics.GuardrailEvents)
}

// CircuitBreaker lists the circuit-breaker state of every provider key of
// a gateway; a key the breakers have no state for is closed.
func (s *Service) CircuitBreaker(ctx context.Context, p *auth.Principal, gatewayID string) (*List[BreakerState], error) {
	if err := s.can(ctx, p, auth.OpCircuitBreaker); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	keys, err := store.All[store.ProviderKey](ctx, s.db, "id", store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if err != nil {
		return nil, fmt.Errorf("list provider keys: %w", err)
	}
	var states map[string]BreakerState
	if s.cfg.Breakers != nil {
		states = s.cfg.Breakers.BreakerStates(g.ID)
	}
	out := make([]BreakerState, 0, len(keys))
	for _, k := range keys {
		st, ok := states[k.Provider+"/"+k.Alias]
		if !ok || st.State == "" {
			st = BreakerState{State: "closed"}
		}
		st.Provider, st.KeyAlias = k.Provider, k.Alias
		out = append(out, st)
	}
	return &List[BreakerState]{Data: out}, nil
}

// gatewayListing is a paged analytics listing of one gateway over a range:
// the policy check, the gateway's tenant scope, page and range checks,
// then read, with an empty list rather than null.
func gatewayListing[T any](ctx context.Context, s *Service, p *auth.Principal, op auth.Op, gatewayID string, r Range, pg Page, what string,
	read func(ctx context.Context, q analytics.Query, limit int, cursor string) ([]T, *string, error)) (*List[T], error) {
	if err := s.can(ctx, p, op); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	if pg, err = checkFigurePage(pg); err != nil {
		return nil, err
	}
	if r, err = s.checkRange(r); err != nil {
		return nil, err
	}
	rows, next, err := read(ctx, analytics.Query{TenantID: g.TenantID, GatewayID: g.ID, From: r.From, To: r.To}, pg.Limit, pg.Cursor)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if rows == nil {
		rows = []T{}
	}
	return &List[T]{Data: rows, NextCursor: next}, nil
}

// tenantFigures checks that p may do op on the tenant tenantID and that r
// is a valid range; it returns the tenant and the query of its figures
// over r.
func (s *Service) tenantFigures(ctx context.Context, p *auth.Principal, op auth.Op, tenantID string, r Range) (*store.Tenant, analytics.Query, error) {
	if err := s.can(ctx, p, op); err != nil {
		return nil, analytics.Query{}, err
	}
	t, err := s.tenant(ctx, s.db, p, tenantID)
	if err != nil {
		return nil, analytics.Query{}, err
	}
	if r, err = s.checkRange(r); err != nil {
		return nil, analytics.Query{}, err
	}
	return t, analytics.Query{TenantID: t.ID, From: r.From, To: r.To}, nil
}
