package graph

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
)

// refusingAnalytics answers a log listing as a backend answers a cursor it
// did not issue; it implements nothing else.
type refusingAnalytics struct{ admin.Analytics }

func (refusingAnalytics) Logs(context.Context, analytics.LogFilter) ([]analytics.Record, *string, error) {
	return nil, nil, analytics.InvalidCursor()
}

// TestAnalyticsQueryErrorIsTheCallers: a typed analytics error (storage
// decides no status) is answered as admin.ClassifyError maps it, the 400
// REST answers too, and is not logged as an internal error.
func TestAnalyticsQueryErrorIsTheCallers(t *testing.T) {
	e := newEnv(t)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: e.st, Box: box, Analytics: refusingAnalytics{}, AllowPrivateBaseURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	e.h = NewHandler(svc, Options{Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	gerr := onlyError(t, e.do(e.admin, `{ logs(cursor: "not-ours") { data { id } nextCursor } }`, nil))
	checkCode(t, gerr, "BAD_USER_INPUT")
	if gerr.Message != "cursor is not valid" || gerr.Extensions["param"] != "cursor" ||
		gerr.Extensions["errorCode"] != "invalid_request" || gerr.Extensions["status"] != float64(400) {
		t.Errorf("error = %+v, want cursor is not valid, param cursor, invalid_request, 400", gerr)
	}
	if log := e.logs.String(); strings.Contains(log, "internal error") {
		t.Errorf("log = %q, want no internal error for the caller's", log)
	}
}
