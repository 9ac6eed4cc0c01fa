package analyticstest

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// TestDataset checks that the data set exercises what the suite claims.
func TestDataset(t *testing.T) {
	recs := Dataset()
	r := newRef(recs)
	ids := map[string]bool{}
	var ties, noTrace, rootOnly, bodies int
	for i, rec := range recs {
		if ids[rec.ID] {
			t.Fatalf("duplicate id %s", rec.ID)
		}
		ids[rec.ID] = true
		if i > 0 && rec.TS.Equal(recs[i-1].TS) && rec.TenantID == recs[i-1].TenantID {
			ties++
		}
		if rec.TraceID == "" {
			noTrace++
		} else if len(rec.Spans) == 1 {
			rootOnly++
		}
		if rec.RequestBody != "" {
			bodies++
		}
		if rec.TS.Before(Base) || !rec.TS.Before(Base.Add(72*time.Hour)) || rec.TS.Truncate(time.Millisecond) != rec.TS {
			t.Errorf("record %s at %v: outside the data set's range or not on a millisecond", rec.ID, rec.TS)
		}
	}
	alpha := with(whole, "t-alpha", "", "")
	users, models := len(r.groups(alpha, "user")), len(r.groups(alpha, "model"))
	t.Logf("%s; ties %d, no trace %d, root only %d, bodies %d; alpha users %d, models %d",
		r.summary(), ties, noTrace, rootOnly, bodies, users, models)
	if ties < 20 || noTrace == 0 || rootOnly == 0 || users <= 10 || models <= 10 || len(r.events) < 100 {
		t.Error("the data set misses a case the suite relies on")
	}
	for _, at := range []time.Time{SubFrom, SubTo, RetainCut.Add(-time.Millisecond)} {
		f := analytics.LogFilter{Query: analytics.Query{From: at, To: at.Add(time.Millisecond)}}
		if n := len(r.logs(f)); n != 1 {
			t.Errorf("records at %v: %d, want 1", at, n)
		}
	}
	// The log filters' cases are not vacuous: "errors" holds a 200 with an
	// error code, the searches find records, the sorts have ties.
	errs, fails := len(r.logs(analytics.LogFilter{Query: whole, StatusClass: "errors"})), 0
	for _, rec := range recs {
		if rec.Status >= 400 {
			fails++
		}
	}
	if errs <= fails {
		t.Errorf("errors class: %d records, status >= 400: %d; want a 200 with an error code among the errors", errs, fails)
	}
	for _, text := range []string{"BRIEN", "taging", `"ml"`} {
		if len(r.logs(analytics.LogFilter{Query: whole, Search: text})) == 0 {
			t.Errorf("search %q finds nothing", text)
		}
	}
	if n := len(r.logs(analytics.LogFilter{Query: whole, Search: strings.ToUpper(recs[7].ID[4:14])})); n != 1 {
		t.Errorf("search of an id: %d records, want 1", n)
	}
}
