package rest

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/page"
)

func TestPageParams(t *testing.T) {
	long := strings.Repeat("c", page.MaxCursorLen)
	tests := []struct {
		query      string
		wantLimit  int
		wantCursor string
		wantErr    wireError
	}{
		{query: "", wantLimit: 50},
		{query: "limit=1", wantLimit: 1},
		{query: "limit=1000", wantLimit: 1000},
		{query: "limit=20&cursor=abc", wantLimit: 20, wantCursor: "abc"},
		{query: "cursor=" + long, wantLimit: 50, wantCursor: long},
		{query: "cursor=a%2Bb%3D", wantLimit: 50, wantCursor: "a+b="},
		{query: "limit=0", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=1001", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=-1", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=ten", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=1.5", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=99999999999999999999", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "limit=5&limit=6", wantErr: wantErr(400, "invalid_request", "limit")},
		{query: "cursor=" + long + "c", wantErr: wantErr(400, "invalid_request", "cursor")},
		{query: "cursor=%ff", wantErr: wantErr(400, "invalid_request", "cursor")},
		{query: "cursor=a&cursor=b", wantErr: wantErr(400, "invalid_request", "cursor")},
		{query: "limit=%zz", wantErr: wantErr(400, "invalid_request", "")},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			limit, cursor, err := PageParams(httptest.NewRequest("GET", "/admin/v1/tenants?"+tt.query, nil))
			if tt.wantErr.Status != 0 {
				if diff := diffError(asWire(t, err), tt.wantErr); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("PageParams = %v", err)
			}
			if limit != tt.wantLimit || cursor != tt.wantCursor {
				t.Errorf("PageParams = %d, %q; want %d, %q", limit, cursor, tt.wantLimit, tt.wantCursor)
			}
		})
	}
}

func TestTimeRange(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	tests := []struct {
		query    string
		from, to time.Time
		wantErr  wireError
	}{
		{query: "", from: now.Add(-24 * time.Hour).UTC(), to: now.UTC()},
		{query: "from=2025-05-01T00:00:00Z", from: utc("2025-05-01T00:00:00Z"), to: now.UTC()},
		{query: "to=2025-05-10T00:00:00Z", from: utc("2025-05-09T00:00:00Z"), to: utc("2025-05-10T00:00:00Z")},
		{query: "from=2025-05-01T00:00:00Z&to=2025-05-02T00:00:00.5Z", from: utc("2025-05-01T00:00:00Z"), to: utc("2025-05-02T00:00:00.5Z")},
		{query: "from=2025-05-01T02:00:00%2B02:00&to=2025-05-01T01:00:00Z", from: utc("2025-05-01T00:00:00Z"), to: utc("2025-05-01T01:00:00Z")},
		{query: "from=yesterday", wantErr: wantErr(400, "invalid_request", "from")},
		{query: "from=2025-05-01", wantErr: wantErr(400, "invalid_request", "from")},
		{query: "to=1717243200", wantErr: wantErr(400, "invalid_request", "to")},
		{query: "from=2025-05-02T00:00:00Z&to=2025-05-01T00:00:00Z", wantErr: wantErr(400, "invalid_request", "from")},
		{query: "from=2025-05-01T00:00:00Z&to=2025-05-01T00:00:00Z", wantErr: wantErr(400, "invalid_request", "from")},
		{query: "from=2025-07-01T00:00:00Z", wantErr: wantErr(400, "invalid_request", "from")},
		{query: "to=2025-05-01T00:00:00Z&to=2025-05-02T00:00:00Z", wantErr: wantErr(400, "invalid_request", "to")},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			from, to, err := TimeRange(httptest.NewRequest("GET", "/admin/v1/stats?"+tt.query, nil), now)
			if tt.wantErr.Status != 0 {
				if diff := diffError(asWire(t, err), tt.wantErr); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("TimeRange = %v", err)
			}
			if diff := cmp.Diff([]time.Time{tt.from, tt.to}, []time.Time{from, to}); diff != "" {
				t.Errorf("range (-want +got):\n%s", diff)
			}
			if from.Location() != time.UTC || to.Location() != time.UTC {
				t.Errorf("range %v–%v is not in UTC", from, to)
			}
		})
	}
}
