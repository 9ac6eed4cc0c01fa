package graph

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestStoreOutageIsUnavailable checks defect 15 of issue 12 on the GraphQL
// transport: a field whose store cannot be reached resolves to a 503
// SERVICE_UNAVAILABLE error (before: INTERNAL_SERVER_ERROR, a 500), the
// cause is logged, and the next operation after the database is back
// succeeds.
func TestStoreOutageIsUnavailable(t *testing.T) {
	ctx := context.Background()
	base := testenv.Store(t, testenv.Postgres)
	u, err := url.Parse(base.DSN())
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	st, err := store.Open(ctx, store.Config{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	e := &env{t: t, svc: svc, st: st, logs: logs, h: NewHandler(svc, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}),
		admin: newEnv(t).admin}

	proxy.Break()
	res := e.do(e.admin, `{ tenants { data { id } } }`, nil)
	err1 := onlyError(t, res)
	checkCode(t, err1, "SERVICE_UNAVAILABLE")
	if res.status != 200 || err1.Extensions["status"] != float64(503) || !strings.Contains(err1.Message, "database is unavailable") {
		t.Errorf("HTTP %d, error %+v", res.status, err1)
	}
	if !strings.Contains(logs.String(), "graphql: internal error") {
		t.Errorf("the cause was not logged: %s", logs.String())
	}

	proxy.Restore()
	if res := e.do(e.admin, `{ tenants { data { id } } }`, nil); len(res.Errors) > 0 {
		t.Errorf("after the database is back: %s", res.raw)
	}
}
