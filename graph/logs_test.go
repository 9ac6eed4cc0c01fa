package graph

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
	"github.com/sluicehq/sluice/analytics/embedded/embeddedtest"
	"github.com/sluicehq/sluice/internal/admin"
)

// countingAnalytics is a real analytics store that counts its LogCount
// calls.
type countingAnalytics struct {
	admin.Analytics
	counts *atomic.Int32
}

func (a countingAnalytics) LogCount(ctx context.Context, f analytics.LogFilter) (int64, error) {
	a.counts.Add(1)
	return a.Analytics.LogCount(ctx, f)
}

// ids returns the ids of a logs connection's data.
func ids(data map[string]any) []string {
	out := []string{}
	rows, _ := get(data, "logs", "data").([]any)
	for i := range rows {
		out = append(out, get(rows[i], "id").(string))
	}
	return out
}

// TestLogsExplorer: the logs query filters by status class, model, token,
// latency and cost ranges and free text, sorts by latency both ways with
// a cursor that keeps the order, and counts the matches only when
// totalCount is selected.
func TestLogsExplorer(t *testing.T) {
	var counts atomic.Int32
	store := embeddedtest.Open(t, analyticstest.Triage("platform", time.Now().UTC())...)
	e := newEnvWith(t, func(c *admin.Config) { c.Analytics = countingAnalytics{store, &counts} })
	const q = `query($f: LogFilterInput, $s: LogSortInput, $c: String) {
		logs(filter: $f, sort: $s, limit: 2, cursor: $c) { data { id } nextCursor totalCount } }`
	errorsOfModel := map[string]any{"statusClass": "errors", "provider": "openai", "model": "gpt-4o-mini"}
	asc := map[string]any{"by": "latency", "order": "asc"}
	data := e.mustDo(e.admin, q, map[string]any{"f": errorsOfModel, "s": asc})
	if d := cmp.Diff([]string{analyticstest.TriageRefused, analyticstest.TriageUpstream}, ids(data)); d != "" {
		t.Errorf("errors of the model by latency, page 1 (-want +got):\n%s", d)
	}
	if n := get(data, "logs", "totalCount"); n != float64(3) {
		t.Errorf("totalCount %v, want 3", n)
	}
	data = e.mustDo(e.admin, q, map[string]any{"f": errorsOfModel, "s": asc, "c": get(data, "logs", "nextCursor")})
	if d := cmp.Diff([]string{analyticstest.TriageStreamCut}, ids(data)); d != "" {
		t.Errorf("page 2 (-want +got):\n%s", d)
	}
	if next := get(data, "logs", "nextCursor"); next != nil {
		t.Errorf("the last page has a next cursor %v", next)
	}

	for _, c := range []struct {
		name string
		f    map[string]any
		s    map[string]any
		want []string
	}{
		{"4xx", map[string]any{"statusClass": "4xx"}, nil, []string{analyticstest.TriageLimited, analyticstest.TriageRefused}},
		{"token", map[string]any{"tokenId": "tok_b"}, nil, []string{analyticstest.TriageLimited, analyticstest.TriageRefused}},
		{"latency range", map[string]any{"minLatencyMs": 100, "maxLatencyMs": 900}, nil, []string{analyticstest.TriageUpstream, analyticstest.TriageOK}},
		{"cost at least", map[string]any{"minCostUsd": 0.0000015}, nil, []string{analyticstest.TriageOK}},
		{"search a metadata value", map[string]any{"search": "search"}, nil, []string{analyticstest.TriageOK}},
		{"search a request id", map[string]any{"search": analyticstest.TriageLimited[9:18]}, nil, []string{analyticstest.TriageLimited}},
		{"latency, slowest first", nil, map[string]any{"by": "latency"}, []string{analyticstest.TriageStreamCut, analyticstest.TriageUpstream}},
		{"status, lowest first", nil, map[string]any{"by": "status", "order": "asc"}, []string{analyticstest.TriageOK, analyticstest.TriageStreamCut}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := e.mustDo(e.admin, q, map[string]any{"f": c.f, "s": c.s})
			if d := cmp.Diff(c.want, ids(data)); d != "" {
				t.Errorf("ids (-want +got):\n%s", d)
			}
		})
	}

	t.Run("no count unless selected", func(t *testing.T) {
		before := counts.Load()
		e.mustDo(e.admin, `{ logs { data { id } nextCursor } }`, nil)
		if n := counts.Load() - before; n != 0 {
			t.Errorf("LogCount called %d times without totalCount selected", n)
		}
	})

	for _, c := range []struct {
		name, param string
		f, s        map[string]any
	}{
		{"unknown sort", "sort", nil, map[string]any{"by": "route"}},
		{"unknown order", "order", nil, map[string]any{"order": "up"}},
		{"unknown status class", "status_class", map[string]any{"statusClass": "6xx"}, nil},
		{"latency bounds crossed", "latency_ms", map[string]any{"minLatencyMs": 10, "maxLatencyMs": 5}, nil},
		{"negative cost", "cost_usd", map[string]any{"minCostUsd": -1}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			gerr := onlyError(t, e.do(e.admin, q, map[string]any{"f": c.f, "s": c.s}))
			checkCode(t, gerr, "BAD_USER_INPUT")
			if gerr.Extensions["param"] != c.param {
				t.Errorf("error %+v, want param %s", gerr, c.param)
			}
		})
	}
}
