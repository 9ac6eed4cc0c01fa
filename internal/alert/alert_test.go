package alert_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/alert"
	"github.com/sluicehq/sluice/internal/alert/alerttest"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

const signingSecret = "whsec-canary-7f3a9c2e51d84b06"

var t0 = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

func newBox(t *testing.T) *secret.Box {
	t.Helper()
	box, err := secret.NewBox([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// seed inserts a tenant (with the webhook url and the signing secret when
// url is not "") and a gateway and user of it.
func seed(t *testing.T, db *store.Store, box *secret.Box, tenantID, url string) {
	t.Helper()
	ctx := context.Background()
	tn := &store.Tenant{ID: tenantID, Name: tenantID, Status: store.TenantActive, CreatedAt: t0, UpdatedAt: t0}
	if url != "" {
		sealed, err := box.Seal(signingSecret)
		if err != nil {
			t.Fatal(err)
		}
		tn.Settings.AlertWebhookURL, tn.WebhookSecret = url, &sealed
	}
	gw := &store.Gateway{ID: "gw_" + tenantID, TenantID: tenantID, Slug: "main", Name: "main", CreatedAt: t0, UpdatedAt: t0}
	u := &store.User{ID: "usr_" + tenantID, TenantID: tenantID, Email: tenantID + "@example.com", Name: "u", Role: "Member",
		Status: "active", CreatedAt: t0, UpdatedAt: t0}
	tok := &store.Token{ID: "tok_" + tenantID, Kind: store.TokenGateway, TenantID: tenantID, GatewayID: &gw.ID, Name: "t",
		Hash: "hash-" + tenantID, Prefix: "sk-sl-", Last4: "abcd", CreatedAt: t0, UpdatedAt: t0}
	for _, err := range []error{store.Insert(ctx, db.DB, tn), store.Insert(ctx, db.DB, gw), store.Insert(ctx, db.DB, u),
		store.Insert(ctx, db.DB, tok)} {
		if err != nil {
			t.Fatalf("seed %s: %v", tenantID, err)
		}
	}
}

// replica is one proxy's part in alerts: a budget manager on the shared
// Redis whose settles feed an alerter on the shared PostgreSQL.
type replica struct {
	budgets *budget.Manager
	alerts  *alert.Alerter
}

func newReplica(t *testing.T, ctx context.Context, dsn string, box *secret.Box, redisPrefix string) *replica {
	t.Helper()
	st, err := store.Open(ctx, store.Config{DatabaseURL: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	a, err := alert.New(alert.Config{DB: st.DB, Box: box, AllowPrivate: true, FirstRetry: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := testenv.Redis(t)
	m, err := budget.NewManager(budget.Config{Redis: rc, Prefix: redisPrefix, OnSettle: a.OnSettle})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	rctx, cancel := context.WithCancel(ctx)
	go func() { defer close(done); _ = a.Run(rctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &replica{budgets: m, alerts: a}
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func alertRows(t *testing.T, st *store.Store, tenantID string) []store.Alert {
	t.Helper()
	rows, _, err := store.ListAlerts(context.Background(), st.DB, tenantID, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestThresholdsOnceAcrossReplicas: two replicas share PostgreSQL and
// Redis and settle requests of one tenant concurrently against a soft
// gateway budget and a hard user budget. Each of the six thresholds
// reaches the receiver exactly once, signed, with the contract's payload,
// though the receiver fails the first two POSTs of every alert; a
// replica started afterwards (a restart) sends nothing again.
func TestThresholdsOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	st := testenv.Store(t, testenv.Postgres)
	box := newBox(t)
	rcv := alerttest.New(t, signingSecret, 2)
	seed(t, st, box, "acme", rcv.URL+"/hooks/sluice")
	_, prefix := testenv.Redis(t)
	replicas := []*replica{newReplica(t, ctx, st.DSN(), box, prefix), newReplica(t, ctx, st.DSN(), box, prefix)}

	cent := money.USD(money.PerDollar / 100)
	limits := []budget.Limit{
		{Scope: budget.GatewayScope("gw_acme"), Amount: money.USD(money.PerDollar), Period: store.PeriodMonthly},
		{Scope: budget.UserScope("usr_acme"), Amount: 2 * money.USD(money.PerDollar), Period: store.PeriodDaily, Hard: true},
	}
	var wg sync.WaitGroup
	for _, r := range replicas {
		for range 2 { // two clients per replica
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 60 {
					res, ref := r.budgets.Reserve(ctx, time.Now(), limits, cent)
					if ref != nil {
						return // the hard user budget is spent
					}
					r.budgets.Settle(ctx, res, cent)
				}
			}()
		}
	}
	wg.Wait()

	want := map[string]bool{}
	for _, s := range []string{"gateway/gw_acme", "user/usr_acme"} {
		for _, th := range alert.Thresholds {
			want[fmt.Sprintf("%s/%d", s, th)] = true
		}
	}
	waitFor(t, "six deliveries", func() bool { return len(rcv.Deliveries()) == len(want) })
	// Give a duplicate the time to show up: several retry intervals.
	time.Sleep(300 * time.Millisecond)

	var wantList []string
	for k := range want {
		wantList = append(wantList, k)
	}
	rcv.CheckOnce(t, wantList)
	got := rcv.Deliveries()
	wantKeys := []string{"amount_usd", "at", "period", "scope", "scope_id", "spent_usd", "tenant", "threshold", "type"}
	p := got["gateway/gw_acme/80"][0]
	var keys []string
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("payload keys (-want +got):\n%s", diff)
	}
	if p["type"] != "budget.threshold" || p["tenant"] != "acme" || p["period"] != "monthly" || p["amount_usd"] != 1.0 {
		t.Errorf("payload = %v", p)
	}
	if spent := p["spent_usd"].(float64); spent < 0.8 || spent > 1.0 {
		t.Errorf("spent_usd at the 80 %% alert = %v, want in [0.8, 1.0]", spent)
	}

	waitFor(t, "six delivered rows", func() bool {
		rows := alertRows(t, st, "acme")
		n := 0
		for _, a := range rows {
			if a.Status == store.AlertDelivered {
				n++
			}
		}
		return n == len(want)
	})
	for _, a := range alertRows(t, st, "acme") {
		if a.Attempts != 3 || a.DeliveredAt == nil || a.LastError != "" {
			t.Errorf("alert %s/%s/%d: attempts %d, delivered_at %v, last_error %q; want 3 attempts, delivered",
				a.Scope, a.ScopeID, a.Threshold, a.Attempts, a.DeliveredAt, a.LastError)
		}
	}

	// A restarted replica remembers nothing in memory: its claims find
	// the rows and it sends nothing.
	later := newReplica(t, ctx, st.DSN(), box, prefix)
	res, ref := later.budgets.Reserve(ctx, time.Now(), limits[:1], cent)
	if ref != nil {
		t.Fatalf("soft budget refused: %+v", ref)
	}
	later.budgets.Settle(ctx, res, cent)
	seed(t, st, box, "probe", rcv.URL+"/hooks/sluice")
	later.alerts.OnSettle(ctx, budget.Settlement{Kind: budget.KindGateway, ID: "gw_probe", Period: store.PeriodTotal,
		Spent: money.USD(money.PerDollar), Amount: money.USD(money.PerDollar)})
	// The probe's alerts come after the restarted replica's claims of
	// acme's (one worker, in order).
	waitFor(t, "the probe's alerts", func() bool { return len(rcv.Deliveries()) == len(want)+3 })
	for k, ps := range rcv.Deliveries() {
		if len(ps) != 1 {
			t.Errorf("after a restart, alert %s delivered %d times, want once", k, len(ps))
		}
	}
	if n := len(alertRows(t, st, "acme")); n != len(want) {
		t.Errorf("acme has %d alerts, want %d", n, len(want))
	}
}

// TestNoAlertWithoutURL: a tenant without a webhook gets no alert and no
// alert row; its neighbour's alerts, queued after, still go out, for its
// gateway's, its own and its token's budgets.
func TestNoAlertWithoutURL(t *testing.T) {
	ctx := context.Background()
	st := testenv.Store(t, testenv.Postgres)
	box := newBox(t)
	rcv := alerttest.New(t, signingSecret, 0)
	seed(t, st, box, "quiet", "")
	seed(t, st, box, "loud", rcv.URL)
	_, prefix := testenv.Redis(t)
	r := newReplica(t, ctx, st.DSN(), box, prefix)
	full := budget.Settlement{Period: store.PeriodDaily, PeriodStart: t0, Spent: money.USD(money.PerDollar), Amount: money.USD(money.PerDollar)}
	for _, s := range []budget.Settlement{
		{Kind: budget.KindTenant, ID: "quiet"}, {Kind: budget.KindGateway, ID: "gw_quiet"}, {Kind: budget.KindUser, ID: "usr_quiet"},
		{Kind: budget.KindGateway, ID: "gw_loud"}, {Kind: budget.KindTenant, ID: "loud"}, {Kind: budget.KindToken, ID: "tok_loud"},
	} {
		s.Period, s.PeriodStart, s.Spent, s.Amount = full.Period, full.PeriodStart, full.Spent, full.Amount
		r.alerts.OnSettle(ctx, s)
	}
	var want []string
	for _, sc := range []string{"gateway/gw_loud/", "tenant/loud/", "token/tok_loud/"} {
		for _, th := range alert.Thresholds {
			want = append(want, fmt.Sprintf("%s%d", sc, th))
		}
	}
	waitFor(t, "loud's alerts", func() bool { return len(rcv.Deliveries()) == len(want) })
	rcv.CheckOnce(t, want)
	if rows := alertRows(t, st, "quiet"); len(rows) != 0 {
		t.Errorf("quiet has %d alerts, want none", len(rows))
	}
}

// TestGiveUp: a receiver that always fails gets MaxAttempts POSTs; the
// alert is recorded failed with the last error.
func TestGiveUp(t *testing.T) {
	ctx := context.Background()
	st := testenv.Store(t, testenv.SQLite)
	box := newBox(t)
	rcv := alerttest.New(t, signingSecret, 1000)
	seed(t, st, box, "acme", rcv.URL)
	a, err := alert.New(alert.Config{DB: st.DB, Box: box, AllowPrivate: true, FirstRetry: 5 * time.Millisecond, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(rctx) }()
	defer func() { cancel(); <-done }()
	a.OnSettle(ctx, budget.Settlement{Kind: budget.KindTenant, ID: "acme", Period: store.PeriodWeekly, PeriodStart: t0,
		Spent: 60, Amount: 100})
	waitFor(t, "a failed alert", func() bool {
		rows := alertRows(t, st, "acme")
		return len(rows) == 1 && rows[0].Status == store.AlertFailed
	})
	a0 := alertRows(t, st, "acme")[0]
	if a0.Attempts != 3 || a0.Threshold != 50 || a0.LastError != "the receiver answered 500" || a0.DeliveredAt != nil {
		t.Errorf("alert = %+v, want 3 attempts at threshold 50, failed with the receiver's 500", a0)
	}
	if n := rcv.Tries(a0.ID); n != 3 {
		t.Errorf("receiver saw %d POSTs, want 3", n)
	}
}

// TestClientRefusesLinkLocal: the webhook client's dialer refuses a
// link-local (metadata) address even when private addresses are allowed.
func TestClientRefusesLinkLocal(t *testing.T) {
	c := alert.NewClient(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://169.254.169.254/latest", nil)
	_, err := c.Do(req)
	if err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("POST to 169.254.169.254: %v, want refused as link-local", err)
	}
}
