package graph

import (
	"context"
	"log/slog"
	"testing"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
)

// operationAnalytics keeps the log filter it was given and answers one
// record of a model listing; it implements nothing else.
type operationAnalytics struct {
	admin.Analytics
	filter *analytics.LogFilter
}

func (a operationAnalytics) Logs(_ context.Context, f analytics.LogFilter) ([]analytics.Record, *string, error) {
	*a.filter = f
	return []analytics.Record{{ID: "log_1", TenantID: "acme", Operation: analytics.OpModels}}, nil, nil
}

// TestLogsOperation: the logs query filters by operation and returns the
// record's; an unknown operation is the caller's error.
func TestLogsOperation(t *testing.T) {
	e := newEnv(t)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	var got analytics.LogFilter
	svc, err := admin.New(admin.Config{Store: e.st, Box: box, Analytics: operationAnalytics{filter: &got}, AllowPrivateBaseURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	e.h = NewHandler(svc, Options{Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	data := e.mustDo(e.admin, `{ logs(filter: {operation: "models"}) { data { id operation } } }`, nil)
	if op := get(data, "logs", "data", 0, "operation"); op != "models" || got.Operation != "models" {
		t.Errorf("operation %v, filter %q; want models for both", op, got.Operation)
	}
	gerr := onlyError(t, e.do(e.admin, `{ logs(filter: {operation: "chat/completions"}) { data { id } } }`, nil))
	checkCode(t, gerr, "BAD_USER_INPUT")
	if gerr.Extensions["param"] != "operation" {
		t.Errorf("error %+v, want param operation", gerr)
	}
}
