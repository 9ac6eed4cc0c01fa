package proxy

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/alert"
	"github.com/sluicehq/sluice/internal/alert/alerttest"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestAlertsTwoReplicas (CONTRACT §14, alerts): two proxies share Redis
// for their budgets and PostgreSQL for their alert claims; clients send
// requests to both under a soft gateway budget of ten requests' cost,
// past its amount. The tenant's webhook, which fails the first two POSTs
// of every alert, gets each of the 50, 80 and 100 % alerts exactly once,
// signed, and the alerts list says delivered after 3 attempts.
func TestAlertsTwoReplicas(t *testing.T) {
	t.Parallel()
	const secret = "whsec-proxy-replicas-9a1f"
	h := newHarness(t, harnessConfig{})
	setPrice(h)
	amount := 10 * realCost
	h.update(admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: amount, Period: "monthly", Hard: false})})

	// The alerts' store: PostgreSQL, holding the tenant (with its webhook)
	// and the gateway the proxies serve.
	pg := testenv.Store(t, testenv.Postgres)
	rcv := alerttest.New(t, secret, 2)
	sealed, err := h.box.Seal(secret)
	must(t, err)
	now := time.Now().UTC()
	tn := &store.Tenant{ID: testTenant, Name: testTenant, Status: store.TenantActive, WebhookSecret: &sealed, CreatedAt: now, UpdatedAt: now}
	tn.Settings.AlertWebhookURL = rcv.URL + "/sluice"
	must(t, store.Insert(h.ctx, pg.DB, tn))
	must(t, store.Insert(h.ctx, pg.DB, &store.Gateway{ID: h.gw.ID, TenantID: testTenant, Slug: testGateway, Name: testGateway,
		CreatedAt: now, UpdatedAt: now}))

	_, prefix := testenv.Redis(t)
	discard := slog.New(slog.DiscardHandler)
	var addrs []string
	for range 2 {
		st, err := store.Open(h.ctx, store.Config{DatabaseURL: pg.DSN()})
		must(t, err)
		t.Cleanup(func() { _ = st.Close() })
		a, err := alert.New(alert.Config{DB: st.DB, Box: h.box, AllowPrivate: true, FirstRetry: 20 * time.Millisecond, Logger: discard})
		must(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = a.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		rc := redisClient(t, "")
		b, err := budget.NewManager(budget.Config{Redis: rc, Prefix: prefix + "budget:", Timeout: 10 * time.Second,
			Logger: discard, OnSettle: a.OnSettle})
		must(t, err)
		addrs = append(addrs, h.limitReplica(t, nil, b).addr)
	}

	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for range 4 {
				resp, b := h.post(addrs[c%2], chatPath, h.token, pricedBody)
				wantStatus(t, resp, b, 200)
			}
		})
	}
	wg.Wait()

	gw := "gateway/" + h.gw.ID + "/"
	want := []string{gw + "50", gw + "80", gw + "100"}
	if !waitFor(20*time.Second, func() bool { return len(rcv.Deliveries()) == len(want) }) {
		t.Fatalf("deliveries %v, want %v", rcv.Deliveries(), want)
	}
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show
	rcv.CheckOnce(t, want)
	if !waitFor(10*time.Second, func() bool {
		rows, _, err := store.ListAlerts(h.ctx, pg.DB, testTenant, store.Page{Limit: 10})
		must(t, err)
		for _, a := range rows {
			if a.Status != store.AlertDelivered || a.Attempts != 3 {
				return false
			}
		}
		return len(rows) == 3
	}) {
		t.Error("the three alerts are not recorded delivered after 3 attempts")
	}
}
