package analytics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetRefusals: refusals by reason are ordered most first, then by
// reason; the upstream errors are the rest of the errors.
func TestSetRefusals(t *testing.T) {
	s := &Stats{Errors: 10}
	s.SetRefusals([]ReasonCount{{"model_not_allowed", 1}, {"rate_limit_exceeded", 3}, {"budget_exceeded", 3}})
	want := []ReasonCount{{"budget_exceeded", 3}, {"rate_limit_exceeded", 3}, {"model_not_allowed", 1}}
	if d := cmp.Diff(want, s.RefusalsByReason); d != "" || s.Refusals != 7 || s.UpstreamErrors != 3 {
		t.Errorf("refusals %d, upstream errors %d, by reason (-want +got):\n%s", s.Refusals, s.UpstreamErrors, d)
	}
	s = &Stats{Errors: 2}
	s.SetRefusals(nil)
	if s.RefusalsByReason == nil || s.UpstreamErrors != 2 {
		t.Errorf("no refusals: by reason %v (want an empty list), upstream errors %d", s.RefusalsByReason, s.UpstreamErrors)
	}
	for _, tc := range []struct {
		rec  Record
		want bool
	}{
		{Record{Status: 429, ErrorCode: "budget_exceeded"}, true},
		{Record{Status: 502, ErrorCode: "upstream_error", Attempts: 2}, false},
		{Record{Status: 400, ErrorCode: "content_blocked", Attempts: 1}, true},
		{Record{Status: 200, Attempts: 0}, false},
	} {
		if got := IsRefusal(&tc.rec); got != tc.want {
			t.Errorf("IsRefusal(%d %s, %d attempts) = %v", tc.rec.Status, tc.rec.ErrorCode, tc.rec.Attempts, got)
		}
	}
}
