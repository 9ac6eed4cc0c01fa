package rest

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics/analyticstest"
	"github.com/sluicehq/sluice/analytics/embedded/embeddedtest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestLogsExplorer: GET /logs filters by status class, model, token,
// latency and cost ranges and free text, sorts with a cursor that keeps
// the order, and answers total_count when count=true.
func TestLogsExplorer(t *testing.T) {
	store := embeddedtest.Open(t, analyticstest.Triage("acme", time.Now().UTC())...)
	s := newAdminServerWith(t, testenv.SQLite, func(c *admin.Config) { c.Analytics = store })
	type page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
		TotalCount *int64  `json:"total_count"`
	}
	list := func(q url.Values) (ids []string, p page) {
		t.Helper()
		r := s.ok(testAdminToken, "GET", "/admin/v1/logs?"+q.Encode(), nil, 200, &p)
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(r.body, &raw)
		if _, has := raw["total_count"]; has != (q.Get("count") == "true") {
			t.Errorf("GET /logs?%s: total_count given %v, want it only with count=true", q.Encode(), has)
		}
		ids = []string{}
		for _, d := range p.Data {
			ids = append(ids, d.ID)
		}
		return ids, p
	}

	q := url.Values{"status_class": {"errors"}, "provider": {"openai"}, "model": {"gpt-4o-mini"},
		"sort": {"latency"}, "order": {"asc"}, "limit": {"2"}, "count": {"true"}}
	got, p := list(q)
	if d := cmp.Diff([]string{analyticstest.TriageRefused, analyticstest.TriageUpstream}, got); d != "" {
		t.Errorf("errors of the model by latency, page 1 (-want +got):\n%s", d)
	}
	if p.TotalCount == nil || *p.TotalCount != 3 || p.NextCursor == nil {
		t.Fatalf("page 1: total_count %v, next_cursor %v; want 3 and a cursor", p.TotalCount, p.NextCursor)
	}
	q.Set("cursor", *p.NextCursor)
	if got, _ := list(q); !cmp.Equal(got, []string{analyticstest.TriageStreamCut}) {
		t.Errorf("page 2: %v, want the cut stream", got)
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"status_class=4xx", []string{analyticstest.TriageLimited, analyticstest.TriageRefused}},
		{"token=tok_b&sort=latency", []string{analyticstest.TriageLimited, analyticstest.TriageRefused}},
		{"min_latency_ms=100&max_latency_ms=900", []string{analyticstest.TriageUpstream, analyticstest.TriageOK}},
		{"min_cost_usd=0.0000015", []string{analyticstest.TriageOK}},
		{"search=SEARCH", []string{analyticstest.TriageOK}},
		{"sort=tokens&limit=1", []string{analyticstest.TriageOK}},
	} {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := list(v); !cmp.Equal(got, c.want) {
			t.Errorf("GET /logs?%s: %v, want %v", c.query, got, c.want)
		}
	}

	for _, c := range []struct{ query, param string }{
		{"sort=route", "sort"},
		{"order=up", "order"},
		{"status_class=6xx", "status_class"},
		{"min_latency_ms=1.5", "min_latency_ms"},
		{"max_cost_usd=abc", "max_cost_usd"},
		{"min_latency_ms=10&max_latency_ms=5", "latency_ms"},
		{"count=maybe", "count"},
		{"sort=latency&cursor=" + *p.NextCursor, "cursor"},
	} {
		r := s.do(testAdminToken, "GET", "/admin/v1/logs?"+c.query, nil)
		var body struct {
			Error struct {
				Param string `json:"param"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.body, &body)
		if r.status != 400 || body.Error.Param != c.param {
			t.Errorf("GET /logs?%s: %d %s, want 400 naming %s", c.query, r.status, r.body, c.param)
		}
	}
}
