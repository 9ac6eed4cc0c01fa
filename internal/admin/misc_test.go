package admin

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// recordingAnalytics is a test double of the Analytics interface: it
// records the queries it is asked and answers fixed records and traces.
type recordingAnalytics struct {
	noAnalytics
	mu       sync.Mutex
	queries  []analytics.Query
	interval string
	groupBy  string
	logs     map[string]*analytics.Record
	traces   map[string]*analytics.Trace
	filter   analytics.LogFilter
	// traceTenant is the tenant of the last Trace call.
	traceTenant string
}

func (a *recordingAnalytics) record(q analytics.Query) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queries = append(a.queries, q)
}

func (a *recordingAnalytics) last() analytics.Query {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.queries[len(a.queries)-1]
}

func (a *recordingAnalytics) Stats(ctx context.Context, q analytics.Query) (*analytics.Stats, error) {
	a.record(q)
	return a.noAnalytics.Stats(ctx, q)
}

func (a *recordingAnalytics) Timeseries(ctx context.Context, q analytics.Query, iv string) (*analytics.Timeseries, error) {
	a.record(q)
	a.interval = iv
	return a.noAnalytics.Timeseries(ctx, q, iv)
}

func (a *recordingAnalytics) Analysis(ctx context.Context, q analytics.Query, g string) (*analytics.Analysis, error) {
	a.record(q)
	a.groupBy = g
	return a.noAnalytics.Analysis(ctx, q, g)
}

func (a *recordingAnalytics) Spend(ctx context.Context, q analytics.Query) (*analytics.Spend, error) {
	a.record(q)
	sp, _ := a.noAnalytics.Spend(ctx, q)
	sp.TotalUSD = money.FromFloat(1.5)
	return sp, nil
}

func (a *recordingAnalytics) Logs(ctx context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error) {
	a.record(f.Query)
	a.filter = f
	return a.noAnalytics.Logs(ctx, f)
}

func (a *recordingAnalytics) Log(_ context.Context, id string) (*analytics.Record, error) {
	return a.logs[id], nil
}

func (a *recordingAnalytics) Trace(_ context.Context, id, tenantID string) (*analytics.Trace, error) {
	a.traceTenant = tenantID
	if tr := a.traces[id]; tr != nil && (tenantID == "" || tr.TenantID == tenantID) {
		return tr, nil
	}
	return nil, nil
}

// fakeBreakers reports fixed circuit-breaker states.
type fakeBreakers map[string]map[string]BreakerState

func (f fakeBreakers) BreakerStates(gatewayID string) map[string]BreakerState { return f[gatewayID] }

func TestCatalogLists(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		viewer := &auth.Principal{UserID: "usr_v", Role: auth.Viewer, TenantID: "acme"}
		pl, err := s.ListProviders(ctx, viewer)
		if err != nil || len(pl.Data) < 17 || pl.NextCursor != nil {
			t.Fatalf("providers: %v %+v", err, pl)
		}
		ml, err := s.ListModels(ctx, viewer)
		if err != nil || len(ml.Data) == 0 {
			t.Fatalf("models: %v", err)
		}
		demo := &auth.Principal{UserID: "usr_d", Role: auth.DemoUser, TenantID: "acme"}
		_, err = s.ListProviders(ctx, demo)
		wantCode(t, err, 403, "forbidden")
		_, err = s.ListModels(ctx, demo)
		wantCode(t, err, 403, "forbidden")
	})
}

func TestAuditLog(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		start := s.now().Add(-time.Second)
		for _, id := range []string{"t-one", "t-two", "t-three"} {
			if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		mkGateway(t, s, admin, "t-four")
		var got []string
		pg := Page{Limit: 2}
		for {
			l, err := s.ListAudit(ctx, admin, AuditFilter{Action: "tenant.create"}, pg)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range l.Data {
				got = append(got, e.TenantID)
			}
			if l.NextCursor == nil {
				break
			}
			pg.Cursor = *l.NextCursor
		}
		if want := "t-four t-three t-two t-one"; strings.Join(got, " ") != want {
			t.Fatalf("audit newest first %q, want %q", strings.Join(got, " "), want)
		}
		l, err := s.ListAudit(ctx, admin, AuditFilter{TenantID: "t-four", ResourceType: "gateway"}, Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].Action != "gateway.create" || l.Data[0].ActorID != "usr_root" {
			t.Fatalf("filtered: %v %+v", err, l)
		}
		from, to := start, s.now().Add(time.Second)
		l, err = s.ListAudit(ctx, admin, AuditFilter{ActorID: "usr_root", From: &from, To: &to}, Page{})
		if err != nil || len(l.Data) != 5 {
			t.Fatalf("time window: %v %d entries, want 5", err, len(l.Data))
		}
		l, err = s.ListAudit(ctx, admin, AuditFilter{To: &start}, Page{})
		if err != nil || len(l.Data) != 0 {
			t.Fatalf("before start: %v %d entries, want 0", err, len(l.Data))
		}
		_, err = s.ListAudit(ctx, admin, AuditFilter{From: &to, To: &from}, Page{})
		wantErrParam(t, err, 400, "invalid_request", "from")
		ta := &auth.Principal{UserID: "usr_ta", Role: auth.TenantAdministrator, TenantID: "t-one"}
		_, err = s.ListAudit(ctx, ta, AuditFilter{}, Page{})
		wantCode(t, err, 403, "forbidden")
	})
}

func TestClientErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		viewer := &auth.Principal{UserID: "usr_v", Role: auth.Viewer, TenantID: "platform"}
		in := ClientErrorInput{Message: "TypeError: x is undefined", Stack: "at render (app.js:10)\nat main (app.js:1)",
			URL: "https://dash.example/gateways/gw_1?tab=keys", Release: "1.0.0", Context: map[string]any{"route": "/gateways"}}
		a, err := s.ReportClientError(ctx, viewer, in)
		if err != nil {
			t.Fatal(err)
		}
		in.URL = "https://dash.example/gateways/gw_1?tab=rules" // same path
		in.Stack = "at render (app.js:10)\nat other (app.js:2)" // same first line
		b, err := s.ReportClientError(ctx, viewer, in)
		if err != nil || b.ID != a.ID {
			t.Fatalf("repeat: %v %+v, want id %s", err, b, a.ID)
		}
		in.Message = "RangeError: " + ids.NewSecret()
		c, err := s.ReportClientError(ctx, viewer, in)
		if err != nil || c.ID == a.ID {
			t.Fatalf("other error: %v %+v", err, c)
		}

		l, err := s.ListClientErrors(ctx, admin, Page{})
		if err != nil || len(l.Data) != 2 {
			t.Fatalf("list: %v %+v", err, l)
		}
		if l.Data[0].ID != c.ID || l.Data[1].Count != 2 || l.Data[1].TenantID != "platform" || l.Data[1].UserID != "usr_v" {
			t.Fatalf("list %+v, want newest first and the repeat counted", l.Data)
		}
		if !strings.Contains(l.Data[0].Message, "sk-sl-[REDACTED]") {
			t.Fatalf("message %q, want the token secret masked", l.Data[0].Message)
		}
		ta := &auth.Principal{UserID: "usr_ta", Role: auth.TenantAdministrator, TenantID: "platform"}
		_, err = s.ListClientErrors(ctx, ta, Page{})
		wantCode(t, err, 403, "forbidden")
		demo := &auth.Principal{UserID: "usr_d", Role: auth.DemoUser, TenantID: "platform"}
		_, err = s.ReportClientError(ctx, demo, in)
		wantCode(t, err, 403, "forbidden")

		_, err = s.ReportClientError(ctx, viewer, ClientErrorInput{Stack: "x"})
		wantErrParam(t, err, 400, "invalid_request", "message")
		_, err = s.ReportClientError(ctx, viewer, ClientErrorInput{Message: "m", Stack: strings.Repeat("s", 16<<10+1)})
		wantErrParam(t, err, 400, "invalid_request", "stack")
		_, err = s.ReportClientError(ctx, viewer, ClientErrorInput{Message: strings.Repeat("m", 9000), Stack: strings.Repeat("s", 9000)})
		wantErrParam(t, err, 400, "invalid_request", "")
		_, err = s.ReportClientError(ctx, viewer, ClientErrorInput{Message: "m", Context: map[string]any{"big": strings.Repeat("c", 16<<10)}})
		wantErrParam(t, err, 400, "invalid_request", "")

		member := &auth.Principal{UserID: "usr_m", Role: auth.Member, TenantID: "platform"}
		for i := range 30 {
			if _, err := s.ReportClientError(ctx, member, ClientErrorInput{Message: "flood"}); err != nil {
				t.Fatalf("report %d: %v", i, err)
			}
		}
		_, err = s.ReportClientError(ctx, member, ClientErrorInput{Message: "flood"})
		wantCode(t, err, 429, "rate_limit_exceeded")
		if _, err := s.ReportClientError(ctx, viewer, ClientErrorInput{Message: "still fine"}); err != nil {
			t.Fatalf("another caller is limited separately: %v", err)
		}
		n, _ := store.Count[store.AuditEntry](ctx, s.db, store.Eq("resource_type", "client_error"))
		if n != 0 {
			t.Fatalf("%d audit rows for client errors, want 0", n)
		}
	})
}

func TestPlayground(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		other := mkGateway(t, s, admin, "other")
		routes := []store.Route{{Name: "smart", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o"}}}}
		if _, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "anthropic", Alias: "main", Key: testKey,
			Models: []string{"claude-sonnet-4-5", "claude-haiku-4-5"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(ctx, admin, other.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey,
			Models: []string{"gpt-4o-mini"}}); err != nil {
			t.Fatal(err)
		}

		member := mkUser(t, s, "acme", auth.Member)
		_, err := s.CreatePlaygroundToken(ctx, member, g.ID)
		wantCode(t, err, 403, "gateway_not_assigned")
		_, err = s.CreatePlaygroundToken(ctx, member, other.ID)
		wantCode(t, err, 404, "not_found")
		l, err := s.SearchPlayground(ctx, member, "", 0)
		if err != nil || len(l.Data) != 0 {
			t.Fatalf("unassigned member search: %v %+v", err, l)
		}

		err = store.Insert(ctx, s.db, &store.UserGateway{UserID: member.UserID, GatewayID: g.ID, TenantID: "acme", CreatedAt: s.now()})
		if err != nil {
			t.Fatal(err)
		}
		before := s.now()
		pt, err := s.CreatePlaygroundToken(ctx, member, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pt.BasePath != "/v1/acme/prod/compat" || pt.GatewayID != g.ID || pt.TenantID != "acme" || pt.GatewaySlug != "prod" {
			t.Fatalf("got %+v", pt)
		}
		if d := pt.ExpiresAt.Sub(before); d < 15*time.Minute || d > 15*time.Minute+time.Minute {
			t.Fatalf("expires in %v, want 15 min", d)
		}
		tok, err := store.Get[store.Token](ctx, s.db, store.Eq("hash", ids.Hash(pt.Token)))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind != store.TokenPlayground || *tok.UserID != member.UserID || *tok.GatewayID != g.ID || tok.ExpiresAt == nil {
			t.Fatalf("stored token %+v", tok)
		}
		if n, _ := store.Count[store.AuditEntry](ctx, s.db, store.Eq("action", "playground.token")); n != 1 {
			t.Fatalf("%d playground.token audit rows, want 1", n)
		}

		l, err = s.SearchPlayground(ctx, member, "", 0)
		if err != nil || len(l.Data) != 3 {
			t.Fatalf("member search: %v %+v", err, l)
		}
		if r := l.Data[0]; r.Route != "smart" || r.Provider != "openai" || r.Model != "gpt-4o" || r.GatewaySlug != "prod" {
			t.Fatalf("route entry %+v", r)
		}
		l, err = s.SearchPlayground(ctx, member, "HAIKU", 0)
		if err != nil || len(l.Data) != 1 || l.Data[0].Model != "claude-haiku-4-5" {
			t.Fatalf("filtered search: %v %+v", err, l)
		}
		l, err = s.SearchPlayground(ctx, admin, "", 2)
		if err != nil || len(l.Data) != 2 {
			t.Fatalf("limited admin search: %v %+v", err, l)
		}
		l, err = s.SearchPlayground(ctx, admin, "mini", 0)
		if err != nil || len(l.Data) != 1 || l.Data[0].GatewayID != other.ID {
			t.Fatalf("admin search across tenants: %v %+v", err, l)
		}
		_, err = s.SearchPlayground(ctx, admin, "", 201)
		wantErrParam(t, err, 400, "invalid_request", "limit")
		viewer := mkUser(t, s, "acme", auth.Viewer)
		_, err = s.CreatePlaygroundToken(ctx, viewer, g.ID)
		wantCode(t, err, 403, "forbidden")

		ta := mkUser(t, s, "acme", auth.TenantAdministrator)
		if _, err := s.CreatePlaygroundToken(ctx, ta, g.ID); err != nil {
			t.Fatalf("tenant admin needs no assignment: %v", err)
		}
		fake := &recordingAnalytics{traces: map[string]*analytics.Trace{
			"tr_acme": {ID: "tr_acme", TenantID: "acme"}, "tr_other": {ID: "tr_other", TenantID: "other"},
		}}
		s.cfg.Analytics = fake
		if tr, err := s.PlaygroundTrace(ctx, ta, "tr_acme"); err != nil || tr.ID != "tr_acme" || fake.traceTenant != "acme" {
			t.Fatalf("trace: %v %+v, read within tenant %q (want acme)", err, tr, fake.traceTenant)
		}
		if tr, err := s.PlaygroundTrace(ctx, admin, "tr_other"); err != nil || tr.ID != "tr_other" || fake.traceTenant != "" {
			t.Fatalf("trace as Administrator: %v %+v, read within tenant %q (want any)", err, tr, fake.traceTenant)
		}
		_, err = s.PlaygroundTrace(ctx, ta, "tr_other")
		wantCode(t, err, 404, "not_found")
		_, err = s.PlaygroundTrace(ctx, ta, "tr_missing")
		wantCode(t, err, 404, "not_found")
		_, err = s.PlaygroundTrace(ctx, member, "tr_acme")
		wantCode(t, err, 403, "forbidden")
	})
}

func TestFigureScopes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		mkGateway(t, s, admin, "other")
		fake := &recordingAnalytics{logs: map[string]*analytics.Record{
			"log_acme": {ID: "log_acme", TenantID: "acme"}, "log_other": {ID: "log_other", TenantID: "other"},
		}}
		s.cfg.Analytics = fake

		member := mkUser(t, s, "acme", auth.Member)
		if _, err := s.Stats(ctx, member, "", Range{}); err != nil {
			t.Fatal(err)
		}
		q := fake.last()
		if q.UserID != member.UserID || q.TenantID != "acme" {
			t.Fatalf("member stats query %+v, want own tenant and user", q)
		}
		if d := q.To.Sub(q.From); d != 24*time.Hour {
			t.Fatalf("default range %v, want 24h", d)
		}
		_, err := s.Stats(ctx, member, "other", Range{})
		wantCode(t, err, 404, "not_found")

		ta := mkUser(t, s, "acme", auth.TenantAdministrator)
		if _, err := s.Timeseries(ctx, ta, "", "", Range{}); err != nil {
			t.Fatal(err)
		}
		if q := fake.last(); q.TenantID != "acme" || q.UserID != "" || fake.interval != "hour" {
			t.Fatalf("tenant admin timeseries %+v %q", q, fake.interval)
		}
		_, err = s.Stats(ctx, ta, "other", Range{})
		wantCode(t, err, 404, "not_found")

		if _, err := s.Stats(ctx, admin, "", Range{}); err != nil {
			t.Fatal(err)
		}
		if q := fake.last(); q.TenantID != "" || q.UserID != "" {
			t.Fatalf("admin stats query %+v, want every tenant", q)
		}
		if _, err := s.Stats(ctx, admin, "other", Range{}); err != nil || fake.last().TenantID != "other" {
			t.Fatalf("admin stats of a tenant: %v %+v", err, fake.last())
		}

		now := time.Now().UTC()
		_, err = s.Stats(ctx, admin, "", Range{From: now, To: now.Add(-time.Hour)})
		wantErrParam(t, err, 400, "invalid_request", "from")
		_, err = s.Stats(ctx, admin, "", Range{From: now.AddDate(0, 0, -401), To: now})
		wantErrParam(t, err, 400, "invalid_request", "from")
		_, err = s.Timeseries(ctx, admin, "", "minute", Range{From: now.AddDate(0, 0, -3), To: now})
		wantErrParam(t, err, 400, "invalid_request", "interval")
		_, err = s.Timeseries(ctx, admin, "", "hour", Range{From: now.AddDate(0, 0, -91), To: now})
		wantErrParam(t, err, 400, "invalid_request", "interval")
		_, err = s.Timeseries(ctx, admin, "", "week", Range{})
		wantErrParam(t, err, 400, "invalid_request", "interval")

		aim := mkUser(t, s, "acme", auth.AIManager)
		if _, err := s.Analysis(ctx, aim, "", "model", Range{}); err != nil || fake.groupBy != "model" || fake.last().TenantID != "acme" {
			t.Fatalf("analysis: %v %+v", err, fake.last())
		}
		_, err = s.Analysis(ctx, aim, "", "color", Range{})
		wantErrParam(t, err, 400, "invalid_request", "group_by")
		_, err = s.Analysis(ctx, member, "", "model", Range{})
		wantCode(t, err, 403, "forbidden")

		fin := mkUser(t, s, "acme", auth.Finance)
		b := &store.Budget{AmountUSD: money.FromFloat(100), Period: "monthly", Hard: true}
		set := GatewaySettings{Budget: graphql.OmittableOf(b)}
		if _, err := s.UpdateGateway(ctx, admin, g.ID, set); err != nil {
			t.Fatal(err)
		}
		sp, err := s.GatewaySpend(ctx, fin, g.ID, Range{})
		if err != nil || sp.Budget == nil || sp.Budget.RemainingUSD != money.FromFloat(100) || sp.TotalUSD != money.FromFloat(1.5) {
			t.Fatalf("gateway spend: %v %+v", err, sp)
		}
		if q := fake.last(); q.GatewayID != g.ID || q.TenantID != "acme" {
			t.Fatalf("spend query %+v", q)
		}
		tsp, err := s.TenantSpend(ctx, fin, "acme", Range{})
		if err != nil || tsp.Budget != nil {
			t.Fatalf("tenant spend: %v %+v", err, tsp)
		}
		_, err = s.TenantSpend(ctx, fin, "other", Range{})
		wantCode(t, err, 404, "not_found")

		if _, err := s.Logs(ctx, ta, LogQuery{Status: 429, Metadata: map[string]string{"team": "a"}}); err != nil {
			t.Fatal(err)
		}
		if f := fake.filter; f.TenantID != "acme" || f.Status != 429 || f.Metadata["team"] != "a" || f.Limit != 50 {
			t.Fatalf("log filter %+v", f)
		}
		_, err = s.Logs(ctx, ta, LogQuery{TenantID: "other"})
		wantCode(t, err, 404, "not_found")
		_, err = s.Logs(ctx, ta, LogQuery{Status: 9})
		wantErrParam(t, err, 400, "invalid_request", "status")
		if _, err := s.Logs(ctx, ta, LogQuery{Operation: "models"}); err != nil || fake.filter.Operation != "models" {
			t.Fatalf("operation filter: %v %+v", err, fake.filter)
		}
		_, err = s.Logs(ctx, ta, LogQuery{Operation: "chat/completions"})
		wantErrParam(t, err, 400, "invalid_request", "operation")
		if rec, err := s.Log(ctx, ta, "log_acme"); err != nil || rec.ID != "log_acme" {
			t.Fatalf("log: %v %+v", err, rec)
		}
		_, err = s.Log(ctx, ta, "log_other")
		wantCode(t, err, 404, "not_found")
		_, err = s.Log(ctx, ta, "log_missing")
		wantCode(t, err, 404, "not_found")
		if _, err := s.Log(ctx, admin, "log_other"); err != nil {
			t.Fatal(err)
		}

		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "a", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "b", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		cb, err := s.CircuitBreaker(ctx, ta, g.ID)
		if err != nil || len(cb.Data) != 2 || cb.Data[0].State != "closed" || cb.Data[0].KeyAlias != "a" {
			t.Fatalf("breakers without a reporter: %v %+v", err, cb)
		}
		opened := time.Now().UTC()
		s.cfg.Breakers = fakeBreakers{g.ID: {"openai/b": {State: "open", ConsecutiveFailures: 5, OpenedAt: &opened}}}
		cb, err = s.CircuitBreaker(ctx, ta, g.ID)
		if err != nil || cb.Data[0].State != "closed" || cb.Data[1].State != "open" || cb.Data[1].ConsecutiveFailures != 5 ||
			cb.Data[1].Provider != "openai" || cb.Data[1].KeyAlias != "b" {
			t.Fatalf("breakers: %v %+v", err, cb)
		}
		otherTA := mkUser(t, s, "other", auth.TenantAdministrator)
		_, err = s.CircuitBreaker(ctx, otherTA, g.ID)
		wantCode(t, err, 404, "not_found")
		_, err = s.GuardrailStats(ctx, otherTA, g.ID, Range{})
		wantCode(t, err, 404, "not_found")
		if _, err := s.GuardrailEvents(ctx, ta, g.ID, Range{}, Page{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GatewayTraces(ctx, ta, g.ID, Range{}, Page{}); err != nil {
			t.Fatal(err)
		}
		_, err = s.GatewayTraces(ctx, fin, g.ID, Range{}, Page{})
		wantCode(t, err, 403, "forbidden")
		if _, err := s.TenantAnalysis(ctx, ta, "acme", Range{}); err != nil {
			t.Fatal(err)
		}
		_, err = s.TenantAnalysis(ctx, ta, "other", Range{})
		wantCode(t, err, 404, "not_found")
	})
}
