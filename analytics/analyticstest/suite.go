package analyticstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sluicehq/sluice/analytics"
)

// floats compares float fields (percentiles, rates, durations) to 1e-9.
var floats = cmpopts.EquateApprox(0, 1e-9)

// Run holds a backend to the definitions of analytics.Backend. newBackend
// returns an empty backend; it is called once per group of subtests that
// writes (a shared read-only group, idempotency, Retain, PurgeTenant) and
// owns its cleanup (t.Cleanup); the suite never calls Close.
func Run(t *testing.T, newBackend func(t *testing.T) analytics.Backend) {
	recs := Dataset()
	batches := Batches(recs, 250, "batch")
	want := newRef(recs)
	t.Logf("data set: %s in %d batches", want.summary(), len(batches))

	t.Run("Queries", func(t *testing.T) {
		b := newBackend(t)
		write(t, b, batches)
		s := &suite{b: b, ref: want}
		t.Run("Stats", s.stats)
		t.Run("Timeseries", s.timeseries)
		t.Run("Analysis", s.analysis)
		t.Run("GroupTimeseries", s.groupTimeseries)
		t.Run("Spend", s.spend)
		t.Run("TenantAnalysis", s.tenantAnalysis)
		t.Run("Logs", s.logs)
		t.Run("Log", s.log)
		t.Run("Traces", s.traces)
		t.Run("Trace", s.trace)
		t.Run("GuardrailStats", s.guardrailStats)
		t.Run("GuardrailEvents", s.guardrailEvents)
		t.Run("SpendSince", s.spendSince)
		t.Run("InvalidArguments", s.invalid)
	})
	t.Run("WriteIsIdempotent", func(t *testing.T) {
		b := newBackend(t)
		write(t, b, batches)
		write(t, b, batches)
		write(t, b, batches[:1])
		write(t, b, []*analytics.Batch{{ID: "empty"}})
		s := &suite{b: b, ref: want}
		s.checkAll(t)
	})
	t.Run("SharedTraceID", func(t *testing.T) { sharedTraceID(t, newBackend(t)) })
	t.Run("Retain", func(t *testing.T) {
		b := newBackend(t)
		write(t, b, batches)
		cut := RetainCut
		for range 2 { // a second pass removes nothing more
			if err := b.Retain(t.Context(), "t-alpha", cut); err != nil {
				t.Fatalf("Retain: %v", err)
			}
		}
		gone := func(rec *analytics.Record) bool { return rec.TenantID == "t-alpha" && rec.TS.Before(cut) }
		s := &suite{b: b, ref: want.without(gone, func(ev analytics.GuardrailEvent) bool {
			return ev.TenantID == "t-alpha" && ev.TS.Before(cut)
		})}
		s.checkAll(t)
		s.checkGone(t, recs, gone)
	})
	t.Run("PurgeTenant", func(t *testing.T) {
		b := newBackend(t)
		write(t, b, batches)
		if err := b.PurgeTenant(t.Context(), "t-beta"); err != nil {
			t.Fatalf("PurgeTenant: %v", err)
		}
		gone := func(rec *analytics.Record) bool { return rec.TenantID == "t-beta" }
		s := &suite{b: b, ref: want.without(gone, func(ev analytics.GuardrailEvent) bool { return ev.TenantID == "t-beta" })}
		s.checkAll(t)
		s.checkGone(t, recs, gone)
	})
}

func write(t *testing.T, b analytics.Backend, batches []*analytics.Batch) {
	t.Helper()
	for _, bt := range batches {
		if err := b.Write(t.Context(), bt); err != nil {
			t.Fatalf("Write(%s): %v", bt.ID, err)
		}
	}
}

type suite struct {
	b   analytics.Backend
	ref *ref
}

func check[T any](t *testing.T, what string, got T, err error, want T, opts ...cmp.Option) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if d := cmp.Diff(want, got, append([]cmp.Option{floats}, opts...)...); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

func checkUTC(t *testing.T, what string, ts ...time.Time) {
	t.Helper()
	for _, x := range ts {
		if x.Location() != time.UTC {
			t.Errorf("%s: time %v is in %v, want UTC", what, x, x.Location())
			return
		}
	}
}

var (
	whole    = analytics.Query{From: Base.Add(-time.Hour), To: Base.Add(80 * time.Hour)}
	subRange = analytics.Query{From: SubFrom, To: SubTo}
)

func with(q analytics.Query, tenant, gateway, user string) analytics.Query {
	q.TenantID, q.GatewayID, q.UserID = tenant, gateway, user
	return q
}

// scopes are the queries every figure is checked over.
var scopes = []struct {
	name string
	q    analytics.Query
}{
	{"all tenants", whole},
	{"tenant alpha", with(whole, "t-alpha", "", "")},
	{"tenant beta", with(whole, "t-beta", "", "")},
	{"tenant gamma", with(whole, "t-gamma", "", "")},
	{"all tenants, sub-range", subRange},
	{"tenant alpha, sub-range", with(subRange, "t-alpha", "", "")},
	{"gateway", with(subRange, "t-alpha", "gw-alpha-2", "")},
	{"gateway without tenant", with(whole, "", "gw-beta-1", "")},
	{"user", with(whole, "t-alpha", "", "u-alpha-03")},
	{"user and gateway", with(subRange, "t-beta", "gw-beta-2", "u-beta-1")},
	{"exactly one record", analytics.Query{TenantID: "t-alpha", From: SubFrom, To: SubFrom.Add(time.Millisecond)}},
	{"empty range", analytics.Query{From: Base.Add(-48 * time.Hour), To: Base.Add(-24 * time.Hour)}},
	{"unknown tenant", with(whole, "t-none", "", "")},
}

func (s *suite) stats(t *testing.T) {
	for _, sc := range scopes {
		t.Run(sc.name, func(t *testing.T) {
			got, err := s.b.Stats(t.Context(), sc.q)
			check(t, "Stats", got, err, s.ref.stats(sc.q))
		})
	}
	// The data set splits its errors both ways: the split above is not
	// vacuous.
	if all := s.ref.stats(scopes[0].q); all.UpstreamErrors == 0 || all.Refusals == 0 {
		t.Errorf("reference stats of %q: %d upstream errors, refusals %v; want both kinds", scopes[0].name, all.UpstreamErrors, all.RefusalsByReason)
	}
}

func (s *suite) timeseries(t *testing.T) {
	threeHours := analytics.Query{From: Base.Add(10*time.Hour + 30*time.Second + 5*time.Millisecond), To: Base.Add(13*time.Hour + 15*time.Second)}
	cases := []struct {
		name     string
		q        analytics.Query
		interval string
	}{
		{"minute, all tenants", threeHours, "minute"},
		{"minute, tenant beta", with(threeHours, "t-beta", "", ""), "minute"},
		{"minute, gateway", with(threeHours, "t-alpha", "gw-alpha-1", ""), "minute"},
		{"hour, sub-range", subRange, "hour"},
		{"hour, tenant alpha", with(whole, "t-alpha", "", ""), "hour"},
		{"hour, user", with(whole, "t-alpha", "", "u-alpha-07"), "hour"},
		{"day, all tenants with empty days", analytics.Query{From: Base.Add(-50 * time.Hour), To: Base.Add(7 * 24 * time.Hour)}, "day"},
		{"day, tenant gamma sub-range", with(subRange, "t-gamma", "", ""), "day"},
		{"hour, empty range", analytics.Query{From: Base.Add(-48 * time.Hour), To: Base.Add(-24 * time.Hour)}, "hour"},
		{"hour, range within one bucket", analytics.Query{From: Base.Add(5*time.Hour + time.Minute), To: Base.Add(5*time.Hour + 2*time.Minute)}, "hour"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.b.Timeseries(t.Context(), c.q, c.interval)
			check(t, "Timeseries", got, err, s.ref.timeseries(c.q, c.interval))
			if got != nil {
				for _, p := range got.Points {
					checkUTC(t, "point", p.TS)
				}
			}
		})
	}
}

var groupBys = []string{"model", "provider", "gateway", "user", "token", "status", "error_code"}

func (s *suite) analysis(t *testing.T) {
	for _, by := range groupBys {
		for _, sc := range scopes {
			t.Run(by+"/"+sc.name, func(t *testing.T) {
				got, err := s.b.Analysis(t.Context(), sc.q, by)
				check(t, "Analysis", got, err, s.ref.analysis(sc.q, by))
			})
		}
	}
}

// groupTimeseries checks every group_by over scopes and intervals, with
// limits that leave an "other" series, that leave none, and one series.
func (s *suite) groupTimeseries(t *testing.T) {
	cases := []struct {
		name     string
		q        analytics.Query
		interval string
		limit    int
	}{
		{"hour, sub-range", subRange, "hour", 3},
		{"hour, tenant alpha", with(whole, "t-alpha", "", ""), "hour", analytics.DefaultSeries},
		{"day, all tenants, every group", whole, "day", analytics.MaxSeries},
		{"day, all tenants, one series", whole, "day", 1},
		{"minute, gateway", with(analytics.Query{From: Base.Add(10*time.Hour + 30*time.Second), To: Base.Add(11*time.Hour + 5*time.Millisecond)}, "t-alpha", "gw-alpha-1", ""), "minute", 2},
		{"hour, user", with(whole, "t-alpha", "", "u-alpha-07"), "hour", 2},
		{"hour, empty range", analytics.Query{From: Base.Add(-48 * time.Hour), To: Base.Add(-24 * time.Hour)}, "hour", 5},
	}
	others := 0
	for _, by := range append(slices.Clone(groupBys), analytics.GroupErrorReason) {
		for _, c := range cases {
			t.Run(by+"/"+c.name, func(t *testing.T) {
				got, err := s.b.GroupTimeseries(t.Context(), c.q, by, c.interval, c.limit)
				want := s.ref.groupTimeseries(c.q, by, c.interval, c.limit)
				check(t, "GroupTimeseries", got, err, want)
				if want.Other != nil {
					others++
				}
			})
		}
	}
	// Some cases leave groups to "other" and error_reason splits both
	// kinds of errors: the comparisons above are not vacuous.
	reasons := s.ref.groupTimeseries(whole, analytics.GroupErrorReason, "day", analytics.MaxSeries)
	if others == 0 || len(reasons.Series) < 2 || !slices.ContainsFunc(reasons.Series, func(x analytics.Series) bool { return x.Key == analytics.ReasonUpstream }) {
		t.Errorf("reference: %d answers with other; error reasons %d series; want some with other, and a refusal reason beside upstream", others, len(reasons.Series))
	}
}

func (s *suite) spend(t *testing.T) {
	for _, sc := range scopes {
		t.Run(sc.name, func(t *testing.T) {
			got, err := s.b.Spend(t.Context(), sc.q)
			check(t, "Spend", got, err, s.ref.spend(sc.q))
		})
	}
}

func (s *suite) tenantAnalysis(t *testing.T) {
	for _, sc := range scopes {
		t.Run(sc.name, func(t *testing.T) {
			got, err := s.b.TenantAnalysis(t.Context(), sc.q)
			check(t, "TenantAnalysis", got, err, s.ref.tenantAnalysis(sc.q))
		})
	}
}

// page is one call of a paginated listing.
type page[T any] func(limit int, cursor string) ([]T, *string, error)

// collect reads every page of a listing with the given limit. Every page
// but the last must be full; the last answers a nil cursor.
func collect[T any](t *testing.T, what string, limit int, p page[T]) []T {
	t.Helper()
	all := []T{}
	cursor := ""
	for n := 0; ; n++ {
		if n > 10000 {
			t.Fatalf("%s: more than 10000 pages; the cursor does not advance", what)
		}
		rows, next, err := p(limit, cursor)
		if err != nil {
			t.Fatalf("%s page %d: %v", what, n, err)
		}
		if rows == nil {
			t.Fatalf("%s page %d: nil slice, want a non-nil (possibly empty) one", what, n)
		}
		if n > 0 && len(rows) == 0 {
			t.Fatalf("%s page %d: empty, but the page before answered a next cursor", what, n)
		}
		all = append(all, rows...)
		if next == nil {
			if len(rows) > limit {
				t.Fatalf("%s page %d: %d rows, want at most %d", what, n, len(rows), limit)
			}
			return all
		}
		if len(rows) != limit {
			t.Fatalf("%s page %d: %d rows and a next cursor, want a full page of %d", what, n, len(rows), limit)
		}
		if *next == "" || *next == cursor {
			t.Fatalf("%s page %d: next cursor %q does not advance", what, n, *next)
		}
		cursor = *next
	}
}

// exactPage checks that a listing of exactly limit entries fits one page
// with no next cursor.
func exactPage[T any](t *testing.T, what string, want int, p page[T]) {
	t.Helper()
	if want == 0 || want > 1000 {
		return
	}
	rows, next, err := p(want, "")
	if err != nil {
		t.Fatalf("%s with limit %d: %v", what, want, err)
	}
	if len(rows) != want || next != nil {
		t.Errorf("%s with limit %d, the number of entries: got %d entries and next cursor %v, want %d and none",
			what, want, len(rows), next != nil, want)
	}
}

// logCase is a log listing read page by page with limit.
type logCase struct {
	name  string
	f     analytics.LogFilter
	limit int
}

func ptr(n int64) *int64 { return &n }

func bounds(lo, hi *int64) analytics.Bounds { return analytics.Bounds{Min: lo, Max: hi} }

func (s *suite) logs(t *testing.T) {
	md := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	alpha := with(whole, "t-alpha", "", "")
	cases := []logCase{
		{"tenant", analytics.LogFilter{Query: alpha}, 37},
		{"all tenants", analytics.LogFilter{Query: whole}, 100},
		{"one page", analytics.LogFilter{Query: with(whole, "t-gamma", "", "")}, 1000},
		{"gateway", analytics.LogFilter{Query: with(whole, "t-beta", "gw-beta-2", "")}, 37},
		{"gateway without tenant", analytics.LogFilter{Query: with(whole, "", "gw-alpha-3", "")}, 37},
		{"user", analytics.LogFilter{Query: with(whole, "t-alpha", "", "u-alpha-05")}, 7},
		{"provider", analytics.LogFilter{Query: alpha, Provider: "anthropic"}, 37},
		{"model under two providers", analytics.LogFilter{Query: whole, Model: "gpt-4o-mini"}, 37},
		{"provider and model", analytics.LogFilter{Query: whole, Provider: "azure", Model: "gpt-4o-mini"}, 37},
		{"status", analytics.LogFilter{Query: whole, Status: 429}, 37},
		{"status 499", analytics.LogFilter{Query: alpha, Status: 499}, 37},
		{"error code", analytics.LogFilter{Query: whole, ErrorCode: "upstream_error"}, 37},
		{"metadata pair", analytics.LogFilter{Query: alpha, Metadata: md("env", "prod")}, 37},
		{"metadata two pairs with quotes", analytics.LogFilter{Query: whole, Metadata: md("env", "staging", "team", `o'brien "ml"`)}, 5},
		{"metadata dotted key", analytics.LogFilter{Query: whole, Metadata: md("app.version", "1.3")}, 37},
		{"metadata value of another key", analytics.LogFilter{Query: whole, Metadata: md("team", "prod")}, 37},
		{"metadata unknown key", analytics.LogFilter{Query: whole, Metadata: md("nope", "prod")}, 37},
		{"range boundaries", analytics.LogFilter{Query: subRange}, 37},
		{"exactly one record", analytics.LogFilter{Query: analytics.Query{From: SubFrom, To: SubFrom.Add(time.Millisecond)}}, 10},
		{"empty range", analytics.LogFilter{Query: analytics.Query{From: Base.Add(-48 * time.Hour), To: Base.Add(-24 * time.Hour)}}, 10},
		{"everything", analytics.LogFilter{Query: with(subRange, "t-alpha", "gw-alpha-1", "u-alpha-02"),
			Provider: "openai", Status: 200, Metadata: md("env", "prod")}, 2},
		{"status and error code", analytics.LogFilter{Query: with(whole, "t-beta", "", ""), Status: 429, ErrorCode: "budget_exceeded"}, 3},
		{"operation", analytics.LogFilter{Query: whole, Operation: "messages"}, 37},
		{"operation and provider", analytics.LogFilter{Query: alpha, Operation: "chat", Provider: "openai"}, 37},
		{"status class 2xx", analytics.LogFilter{Query: alpha, StatusClass: "2xx"}, 97},
		{"status class 4xx", analytics.LogFilter{Query: whole, StatusClass: "4xx"}, 37},
		{"status class 5xx", analytics.LogFilter{Query: whole, StatusClass: "5xx"}, 37},
		{"status class 3xx (none)", analytics.LogFilter{Query: whole, StatusClass: "3xx"}, 10},
		{"errors, a 200 with an error code among them", analytics.LogFilter{Query: whole, StatusClass: "errors"}, 37},
		{"errors of one model", analytics.LogFilter{Query: whole, StatusClass: "errors", Provider: "openai", Model: "gpt-4o-mini"}, 7},
		{"token", analytics.LogFilter{Query: whole, TokenID: "tok-u-beta-2"}, 37},
		{"service token and user scope", analytics.LogFilter{Query: with(whole, "t-alpha", "", ""), TokenID: "tok-svc-gw-alpha-1"}, 37},
		{"latency range", analytics.LogFilter{Query: whole, LatencyMS: bounds(ptr(1000), ptr(2000))}, 37},
		{"latency at most", analytics.LogFilter{Query: alpha, LatencyMS: bounds(nil, ptr(40))}, 37},
		{"cost at least", analytics.LogFilter{Query: whole, CostUSD: bounds(ptr(10_000_000), nil)}, 37},
		{"free of cost", analytics.LogFilter{Query: alpha, CostUSD: bounds(nil, ptr(0)), StatusClass: "2xx"}, 37},
		{"search a metadata value without case", analytics.LogFilter{Query: whole, Search: "BRIEN"}, 37},
		{"search a metadata value's part", analytics.LogFilter{Query: alpha, Search: "taging"}, 37},
		{"search a request id", analytics.LogFilter{Query: whole, Search: strings.ToUpper(s.ref.recs[7].ID[4:14])}, 10},
		{"search a quote", analytics.LogFilter{Query: whole, Search: `"ml"`}, 37},
		{"search a SQL wildcard", analytics.LogFilter{Query: whole, Search: "%"}, 10},
		{"search with other filters", analytics.LogFilter{Query: alpha, Search: "prod", StatusClass: "errors", LatencyMS: bounds(ptr(100), nil)}, 11},
	}
	for _, by := range []string{"ts", "latency", "cost", "tokens", "status"} {
		for _, asc := range []bool{false, true} {
			order := map[bool]string{false: "desc", true: "asc"}[asc]
			sort := analytics.LogSort{By: by, Asc: asc}
			cases = append(cases,
				logCase{"sort " + by + " " + order, analytics.LogFilter{Query: alpha, Sort: sort}, 41},
				logCase{"sort " + by + " " + order + ", errors of a sub-range", analytics.LogFilter{Query: subRange, StatusClass: "errors", Sort: sort}, 13})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := func(limit int, cursor string) ([]analytics.Record, *string, error) {
				f := c.f
				f.Limit, f.Cursor = limit, cursor
				return s.b.Logs(t.Context(), f)
			}
			got := collect(t, "Logs", c.limit, p)
			want := s.ref.logs(c.f)
			exactPage(t, "Logs", len(want), p)
			if d := cmp.Diff(want, got, floats); d != "" {
				t.Errorf("Logs (%d records, want %d) mismatch (-want +got):\n%s", len(got), len(want), d)
			}
			for _, r := range got {
				checkUTC(t, "record "+r.ID, r.TS)
			}
			n, err := s.b.LogCount(t.Context(), c.f)
			check(t, "LogCount", n, err, int64(len(want)))
		})
	}
	t.Run("a cursor of another order is refused", func(t *testing.T) {
		f := analytics.LogFilter{Query: whole, Limit: 5, Sort: analytics.LogSort{By: "latency"}}
		_, next, err := s.b.Logs(t.Context(), f)
		if err != nil || next == nil {
			t.Fatalf("Logs by latency: next %v, %v", next, err)
		}
		for _, other := range []analytics.LogSort{{By: "latency", Asc: true}, {By: "cost"}, {}} {
			f.Sort, f.Cursor = other, *next
			_, _, err := s.b.Logs(t.Context(), f)
			if qe, ok := errors.AsType[*analytics.QueryError](err); !ok || qe.Param != "cursor" {
				t.Errorf("Logs in order %+v with a cursor of latency desc: %v, want a cursor QueryError", other, err)
			}
		}
	})
	t.Run("default limit", func(t *testing.T) {
		got, next, err := s.b.Logs(t.Context(), analytics.LogFilter{Query: whole})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 50 || next == nil {
			t.Errorf("Logs with limit 0: got %d records (next %v), want 50 and a next cursor", len(got), next != nil)
		}
	})
	t.Run("limit capped at 1000", func(t *testing.T) {
		got, _, err := s.b.Logs(t.Context(), analytics.LogFilter{Query: whole, Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1000 {
			t.Errorf("Logs with limit 5000: got %d records, want 1000", len(got))
		}
	})
}

func (s *suite) log(t *testing.T) {
	for i, rec := range s.ref.recs {
		if i%10 != 0 && len(rec.Events) == 0 && rec.TraceID != "" {
			continue
		}
		got, err := s.b.Log(t.Context(), rec.ID)
		check(t, "Log "+rec.ID, got, err, s.ref.log(rec.ID))
		if got != nil {
			checkUTC(t, "Log "+rec.ID, got.TS)
		}
	}
	got, err := s.b.Log(t.Context(), "req_unknown")
	if err != nil || got != nil {
		t.Errorf("Log(unknown): got %v, %v; want nil, nil", got, err)
	}
}

func (s *suite) traces(t *testing.T) {
	cases := []struct {
		name  string
		q     analytics.Query
		limit int
	}{
		{"gateway alpha-1", with(whole, "t-alpha", "gw-alpha-1", ""), 25},
		{"gateway beta-2", with(whole, "t-beta", "gw-beta-2", ""), 40},
		{"gateway gamma-1, one page", with(whole, "t-gamma", "gw-gamma-1", ""), 1000},
		{"gateway, sub-range", with(subRange, "t-alpha", "gw-alpha-2", ""), 13},
		{"tenant", with(whole, "t-beta", "", ""), 50},
		{"empty range", with(analytics.Query{From: Base.Add(-48 * time.Hour), To: Base.Add(-24 * time.Hour)}, "t-alpha", "gw-alpha-1", ""), 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := func(limit int, cursor string) ([]analytics.TraceSummary, *string, error) {
				return s.b.Traces(t.Context(), c.q, limit, cursor)
			}
			want := s.ref.traces(c.q)
			got := collect(t, "Traces", c.limit, p)
			check(t, "Traces", got, nil, want)
			exactPage(t, "Traces", len(want), p)
			for _, tr := range got {
				checkUTC(t, "trace "+tr.ID, tr.Start)
			}
		})
	}
}

func (s *suite) trace(t *testing.T) {
	n := 0
	for i, rec := range s.ref.recs {
		if rec.TraceID == "" || (i%20 != 0 && len(rec.Spans) != 4) {
			continue
		}
		n++
		got, err := s.b.Trace(t.Context(), rec.TraceID, "")
		check(t, "Trace "+rec.TraceID, got, err, s.ref.trace(rec.TraceID), cmpopts.EquateEmpty())
		if got != nil {
			checkUTC(t, "Trace "+rec.TraceID, got.Start, got.Root.Start)
		}
	}
	if n == 0 {
		t.Fatal("no trace checked")
	}
	got, err := s.b.Trace(t.Context(), "0123456789abcdef0123456789abcdef", "")
	if err != nil || got != nil {
		t.Errorf("Trace(unknown): got %v, %v; want nil, nil", got, err)
	}
}

// guardrailScopes add a range over 90 days (daily points) to the scopes.
func guardrailScopes() []struct {
	name string
	q    analytics.Query
} {
	out := append([]struct {
		name string
		q    analytics.Query
	}{}, scopes...)
	return append(out, struct {
		name string
		q    analytics.Query
	}{"gateway over 100 days", analytics.Query{TenantID: "t-alpha", GatewayID: "gw-alpha-1",
		From: Base.Add(-50 * 24 * time.Hour), To: Base.Add(50 * 24 * time.Hour)}})
}

func (s *suite) guardrailStats(t *testing.T) {
	for _, sc := range guardrailScopes() {
		t.Run(sc.name, func(t *testing.T) {
			got, err := s.b.GuardrailStats(t.Context(), sc.q)
			check(t, "GuardrailStats", got, err, s.ref.guardrailStats(sc.q))
		})
	}
}

func (s *suite) guardrailEvents(t *testing.T) {
	for _, sc := range guardrailScopes() {
		t.Run(sc.name, func(t *testing.T) {
			p := func(limit int, cursor string) ([]analytics.GuardrailEvent, *string, error) {
				return s.b.GuardrailEvents(t.Context(), sc.q, limit, cursor)
			}
			got := collect(t, "GuardrailEvents", 9, p)
			want := s.ref.guardrailEvents(sc.q)
			check(t, "GuardrailEvents", got, nil, want)
			exactPage(t, "GuardrailEvents", len(want), p)
			for _, ev := range got {
				checkUTC(t, "event "+ev.ID, ev.TS)
			}
		})
	}
}

func (s *suite) spendSince(t *testing.T) {
	cases := []struct {
		scope string
		start time.Time
	}{
		{"gateway:gw-alpha-1", Base.Add(30 * time.Hour)},
		{"gateway:gw-beta-2", Base.Add(-time.Hour)},
		{"gateway:gw-gamma-1", SubTo},
		{"user:u-beta-2", Base.Add(12*time.Hour + 17*time.Millisecond)},
		{"user:u-alpha-11", Base.Add(24 * time.Hour)},
		{"gateway:gw-none", Base},
		{"user:u-alpha-01", Base.Add(100 * time.Hour)},
		{"tenant:t-alpha", Base.Add(30 * time.Hour)},
		{"tenant:t-beta", time.Unix(0, 0).UTC()},
		{"tenant:t-none", Base},
		{"token:tok-u-beta-2", Base.Add(12*time.Hour + 17*time.Millisecond)},
		{"token:tok-svc-gw-alpha-1", Base},
		{"token:tok-none", Base},
	}
	for _, c := range cases {
		t.Run(c.scope, func(t *testing.T) {
			got, err := s.b.SpendSince(t.Context(), c.scope, c.start)
			check(t, "SpendSince", got, err, s.ref.spendSince(c.scope, c.start))
		})
	}
	for _, scope := range []string{"team:t-alpha", "gw-alpha-1", "token:", ""} {
		if _, err := s.b.SpendSince(t.Context(), scope, Base); err == nil {
			t.Errorf("SpendSince(%q): no error, want one", scope)
		}
	}
}

// invalid checks that a cursor the backend did not issue, an unknown
// interval and an unknown group_by are refused as the caller's error: an
// *analytics.QueryError naming the parameter (which the admin API answers
// 400 invalid_request).
func (s *suite) invalid(t *testing.T) {
	ctx := t.Context()
	refused := func(what, param string, err error) {
		t.Helper()
		qe, ok := errors.AsType[*analytics.QueryError](err)
		if !ok || qe.Param != param || qe.Reason == "" {
			t.Errorf("%s: got error %v, want an *analytics.QueryError with param %s and a reason", what, err, param)
		}
	}
	for _, c := range []string{"not a cursor", "eyJ4IjoxfQ", "%%%"} {
		_, _, err := s.b.Logs(ctx, analytics.LogFilter{Query: whole, Cursor: c})
		refused(fmt.Sprintf("Logs(cursor %q)", c), "cursor", err)
		_, _, err = s.b.Traces(ctx, with(whole, "t-alpha", "gw-alpha-1", ""), 10, c)
		refused(fmt.Sprintf("Traces(cursor %q)", c), "cursor", err)
		_, _, err = s.b.GuardrailEvents(ctx, with(whole, "t-alpha", "gw-alpha-1", ""), 10, c)
		refused(fmt.Sprintf("GuardrailEvents(cursor %q)", c), "cursor", err)
	}
	_, _, err := s.b.Logs(ctx, analytics.LogFilter{Query: whole, Sort: analytics.LogSort{By: "route"}})
	refused("Logs(sort route)", "sort", err)
	_, _, err = s.b.Logs(ctx, analytics.LogFilter{Query: whole, StatusClass: "6xx"})
	refused("Logs(status class 6xx)", "status_class", err)
	_, err = s.b.LogCount(ctx, analytics.LogFilter{Query: whole, StatusClass: "bad"})
	refused("LogCount(status class bad)", "status_class", err)
	_, err = s.b.Timeseries(ctx, whole, "week")
	refused("Timeseries(week)", "interval", err)
	_, err = s.b.Analysis(ctx, whole, "route")
	refused("Analysis(route)", "group_by", err)
	_, err = s.b.GroupTimeseries(ctx, whole, "route", "hour", 5)
	refused("GroupTimeseries(route)", "group_by", err)
	_, err = s.b.GroupTimeseries(ctx, whole, "model", "week", 5)
	refused("GroupTimeseries(week)", "interval", err)
	_, err = s.b.GroupTimeseries(ctx, whole, "model", "hour", analytics.MaxSeries+1)
	refused("GroupTimeseries(limit 21)", "limit", err)
}

// checkAll checks the main figures of the scopes and the listings after a
// write or a removal.
func (s *suite) checkAll(t *testing.T) {
	t.Run("Stats", s.stats)
	t.Run("Analysis", func(t *testing.T) {
		for _, sc := range scopes {
			got, err := s.b.Analysis(t.Context(), sc.q, "gateway")
			check(t, "Analysis "+sc.name, got, err, s.ref.analysis(sc.q, "gateway"))
		}
	})
	t.Run("Spend", s.spend)
	t.Run("TenantAnalysis", s.tenantAnalysis)
	t.Run("Logs", func(t *testing.T) {
		got := collect(t, "Logs", 500, func(limit int, cursor string) ([]analytics.Record, *string, error) {
			return s.b.Logs(t.Context(), analytics.LogFilter{Query: whole, Limit: limit, Cursor: cursor})
		})
		check(t, "Logs", got, nil, s.ref.logs(analytics.LogFilter{Query: whole}))
		n, err := s.b.LogCount(t.Context(), analytics.LogFilter{Query: whole})
		check(t, "LogCount", n, err, int64(len(got)))
	})
	t.Run("Traces", func(t *testing.T) {
		for _, gw := range []string{"gw-alpha-1", "gw-beta-1", "gw-gamma-1"} {
			q := with(whole, "", gw, "")
			got := collect(t, "Traces", 500, func(limit int, cursor string) ([]analytics.TraceSummary, *string, error) {
				return s.b.Traces(t.Context(), q, limit, cursor)
			})
			check(t, "Traces "+gw, got, nil, s.ref.traces(q))
		}
	})
	t.Run("GuardrailStats", s.guardrailStats)
	t.Run("GuardrailEvents", func(t *testing.T) {
		got := collect(t, "GuardrailEvents", 500, func(limit int, cursor string) ([]analytics.GuardrailEvent, *string, error) {
			return s.b.GuardrailEvents(t.Context(), whole, limit, cursor)
		})
		check(t, "GuardrailEvents", got, nil, s.ref.guardrailEvents(whole))
	})
	t.Run("SpendSince", s.spendSince)
}

// checkGone checks that the removed records, their traces and their events
// are gone, and that a kept record of each tenant is still there.
func (s *suite) checkGone(t *testing.T, recs []*analytics.Record, gone func(*analytics.Record) bool) {
	ctx := context.WithoutCancel(t.Context())
	removed := 0
	for _, rec := range recs {
		if !gone(rec) {
			continue
		}
		removed++
		if got, err := s.b.Log(ctx, rec.ID); err != nil || got != nil {
			t.Errorf("Log(%s) of a removed record: got %v, %v; want nil, nil", rec.ID, got != nil, err)
		}
		if rec.TraceID != "" {
			if got, err := s.b.Trace(ctx, rec.TraceID, ""); err != nil || got != nil {
				t.Errorf("Trace(%s) of a removed record: got %v, %v; want nil, nil", rec.TraceID, got != nil, err)
			}
		}
	}
	if removed == 0 {
		t.Fatal("nothing was to be removed: the test checks nothing")
	}
	kept := map[string]bool{}
	for _, rec := range recs {
		if gone(rec) || kept[rec.TenantID] || rec.TraceID == "" {
			continue
		}
		kept[rec.TenantID] = true
		got, err := s.b.Log(ctx, rec.ID)
		check(t, "Log of a kept record", got, err, s.ref.log(rec.ID))
		tr, err := s.b.Trace(ctx, rec.TraceID, "")
		check(t, "Trace of a kept record", tr, err, s.ref.trace(rec.TraceID), cmpopts.EquateEmpty())
	}
}

// sharedTraceID writes two requests of different tenants under one trace id
// (a client may send the same traceparent anywhere): Trace shows the
// request whose root starts first (within the tenant asked for), with its
// spans only; a span whose parent is missing hangs under the root; each
// request is its own summary.
func sharedTraceID(t *testing.T, b analytics.Backend) {
	const trace = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	at := Base.Add(time.Hour)
	mk := func(id, tenant string, ts time.Time, spans ...analytics.Span) *analytics.Record {
		for i := range spans {
			spans[i].TraceID = trace
			spans[i].Start = ts.Add(spans[i].Start.Sub(time.Time{}))
			if spans[i].Attributes == nil {
				spans[i].Attributes = map[string]string{}
			}
		}
		return &analytics.Record{ID: id, TS: ts, TenantID: tenant, GatewayID: "gw-" + tenant, Provider: "openai",
			Model: "gpt-4o", Status: 200, TraceID: trace, Attempts: 1, Spans: spans, RuleHits: []string{}, Flags: []string{}}
	}
	us := func(n int) time.Time { return time.Time{}.Add(time.Duration(n) * time.Microsecond) }
	first := mk("req_shared_1", "t-one", at,
		analytics.Span{SpanID: "r1", Name: "POST chat/completions", Start: us(0), DurationMS: 5, Status: "ok"},
		analytics.Span{SpanID: "a1", ParentID: "r1", Name: "upstream openai", Start: us(100), DurationMS: 4, Status: "ok"},
		analytics.Span{SpanID: "o1", ParentID: "gone", Name: "orphan", Start: us(50), DurationMS: 1, Status: "ok"})
	second := mk("req_shared_2", "t-two", at.Add(time.Second),
		analytics.Span{SpanID: "r2", Name: "POST chat/completions", Start: us(0), DurationMS: 7, Status: "ok"},
		analytics.Span{SpanID: "a2", ParentID: "r1", Name: "upstream openai", Start: us(10), DurationMS: 6, Status: "ok"})
	write(t, b, []*analytics.Batch{{ID: "shared-2", Records: []*analytics.Record{second}}, {ID: "shared-1", Records: []*analytics.Record{first}}})

	got, err := b.Trace(t.Context(), trace, "")
	if err != nil || got == nil {
		t.Fatalf("Trace: %v, %v", got, err)
	}
	root := first.Spans[0]
	orphan, attempt := first.Spans[2], first.Spans[1]
	root.Children = []*analytics.Span{&orphan, &attempt}
	want := &analytics.Trace{ID: trace, TenantID: "t-one", GatewayID: "gw-t-one", RequestID: "req_shared_1",
		Start: root.Start, DurationMS: 5, Root: &root}
	check(t, "Trace of a shared trace id", got, nil, want, cmpopts.EquateEmpty())

	// Within a tenant: that tenant's request, even when another tenant's
	// starts first.
	got, err = b.Trace(t.Context(), trace, "t-two")
	root2, attempt2 := second.Spans[0], second.Spans[1]
	root2.Children = []*analytics.Span{&attempt2} // its parent r1 is not in this request
	check(t, "Trace within tenant t-two", got, err, &analytics.Trace{ID: trace, TenantID: "t-two", GatewayID: "gw-t-two",
		RequestID: "req_shared_2", Start: root2.Start, DurationMS: 7, Root: &root2}, cmpopts.EquateEmpty())
	if got, err := b.Trace(t.Context(), trace, "t-one"); err != nil || got == nil || got.RequestID != "req_shared_1" {
		t.Errorf("Trace within tenant t-one: %+v, %v", got, err)
	}
	if got, err := b.Trace(t.Context(), trace, "t-none"); err != nil || got != nil {
		t.Errorf("Trace within a tenant without it: %+v, %v; want nil, nil", got, err)
	}

	for _, r := range []*analytics.Record{first, second} {
		q := analytics.Query{TenantID: r.TenantID, GatewayID: r.GatewayID, From: at.Add(-time.Hour), To: at.Add(time.Hour)}
		sums, _, err := b.Traces(t.Context(), q, 10, "")
		want := []analytics.TraceSummary{{ID: trace, RequestID: r.ID, Start: r.Spans[0].Start,
			DurationMS: r.Spans[0].DurationMS, Status: 200, Model: "gpt-4o", Spans: len(r.Spans)}}
		check(t, "Traces of tenant "+r.TenantID, sums, err, want)
	}
}
