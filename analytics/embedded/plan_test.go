package embedded

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// TestPlans: the queries that look rows up by user or by trace use their
// index, the partial user index (schema version 6) included, which the
// planner takes only when the query rules the empty user id out.
func TestPlans(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := scope(analytics.Query{UserID: "u1", From: time.Unix(0, 0), To: time.Now()})
	for _, c := range []struct {
		query string
		args  []any
		index string
	}{
		{"SELECT COUNT(*) FROM request_logs" + w.String(), w.args, "request_logs_user_ts"},
		{"SELECT COALESCE(SUM(cost_usd), 0) FROM request_logs WHERE user_id = ? AND user_id != '' AND ts >= ?",
			[]any{"u1", 0}, "request_logs_user_ts"},
		{"SELECT spans FROM request_logs WHERE trace_id = ? AND trace_root = 1 AND (? = '' OR tenant_id = ?)",
			[]any{"t", "", ""}, "request_logs_trace"},
	} {
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "; "); !strings.Contains(p, "INDEX "+c.index+" ") {
			t.Errorf("%s: plan %q, want index %s", c.query, p, c.index)
		}
	}
}
