package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// TestTenantAlertsGraphQL: the webhook settings through GraphQL (the
// secret write-only, read back as alertWebhookSecretSet, in no answer and
// no log line), a link-local webhook refused, and Tenant.alerts listing
// the alerts with their fields, newest first, paginated; a Member may not
// read them.
func TestTenantAlertsGraphQL(t *testing.T) {
	const canary = "whsec-graphql-canary-41c7e9"
	e := newEnv(t)
	e.mustDo(e.admin, `mutation { createTenant(input: {id: "acme"}) { id } }`, nil)

	res := e.do(e.admin, `mutation($s: TenantSettingsInput!) { updateTenant(id: "acme", input: {settings: $s}) { id } }`,
		map[string]any{"s": map[string]any{"alertWebhookUrl": "http://169.254.169.254/latest/meta-data", "alertWebhookSecret": canary}})
	if e := onlyError(t, res); !strings.Contains(e.Message, "link-local") {
		t.Errorf("link-local webhook: %s, want refused as link-local", res.raw)
	}

	settings := map[string]any{"alertWebhookUrl": "http://127.0.0.1:9/hooks", "alertWebhookSecret": canary}
	res = e.do(e.admin, `mutation($s: TenantSettingsInput!) { updateTenant(id: "acme", input: {settings: $s}) {
		settings { alertWebhookUrl alertWebhookSecretSet } } }`, map[string]any{"s": settings})
	if res.status != http.StatusOK || len(res.Errors) > 0 {
		t.Fatalf("updateTenant: HTTP %d %s", res.status, res.raw)
	}
	if got := get(res.Data, "updateTenant", "settings", "alertWebhookSecretSet"); got != true {
		t.Errorf("alertWebhookSecretSet = %v, want true", got)
	}
	answers := []string{res.raw}

	// No field reads the secret back.
	res = e.do(e.admin, `query { tenant(id: "acme") { settings { alertWebhookSecret } } }`, nil)
	if res.status != http.StatusBadRequest || len(res.Errors) == 0 {
		t.Errorf("query of the secret field: HTTP %d %s", res.status, res.raw)
	}
	answers = append(answers, res.raw)

	ctx := context.Background()
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for i, th := range []int{50, 80, 100} {
		a := &store.Alert{ID: "alert_0" + string(rune('1'+i)), TenantID: "acme", Scope: "gateway", ScopeID: "gw_1", Period: "monthly",
			PeriodStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix(), Threshold: th,
			SpentUSD: money.USD(th) * money.PerDollar / 100, AmountUSD: money.PerDollar, At: at, Status: store.AlertDelivered,
			Attempts: 1, LastAttemptAt: &at, DeliveredAt: &at}
		if _, err := store.ClaimAlert(ctx, e.st.DB, a); err != nil {
			t.Fatal(err)
		}
	}
	q := `query($c: String) { tenant(id: "acme") { settings { alertWebhookUrl alertWebhookSecretSet }
		alerts(limit: 2, cursor: $c) { data { id tenantId scope scopeId period periodStart threshold spentUsd amountUsd at
			status attempts lastError lastAttemptAt deliveredAt } nextCursor } } }`
	d := e.mustDo(e.admin, q, nil)
	if got := str(d, "tenant", "settings", "alertWebhookUrl"); got != "http://127.0.0.1:9/hooks" {
		t.Errorf("alertWebhookUrl = %q", got)
	}
	first := get(d, "tenant", "alerts", "data", 0).(map[string]any)
	if first["threshold"] != float64(100) || first["spentUsd"] != float64(1) || first["periodStart"] != "2026-11-01T00:00:00Z" ||
		first["status"] != "delivered" || first["scope"] != "gateway" || first["attempts"] != float64(1) {
		t.Errorf("newest alert = %v", first)
	}
	cursor := str(d, "tenant", "alerts", "nextCursor")
	if cursor == "" {
		t.Fatal("no next cursor after a page of 2 of 3 alerts")
	}
	d = e.mustDo(e.admin, q, map[string]any{"c": cursor})
	if got := str(d, "tenant", "alerts", "data", 0, "id"); got != "alert_01" || get(d, "tenant", "alerts", "nextCursor") != nil {
		t.Errorf("second page = %v", get(d, "tenant", "alerts"))
	}

	member := &auth.Principal{UserID: "usr_m", Email: "m@acme.test", Role: auth.Member, TenantID: "acme", RequestID: "req-2"}
	res = e.do(member, `query { tenant(id: "acme") { alerts { data { id } } } }`, nil)
	if len(res.Errors) == 0 || strings.Contains(res.raw, "alert_0") {
		t.Errorf("a Member read the alerts: %s", res.raw)
	}

	answers = append(answers, e.do(e.admin, `query { tenants { data { id settings { alertWebhookUrl alertWebhookSecretSet } } } }`, nil).raw)
	for _, a := range answers {
		if strings.Contains(a, canary) {
			t.Errorf("the secret is in an answer: %s", a)
		}
	}
	audit, _, err := store.ListAudit(ctx, e.st.DB, store.AuditFilter{TenantID: "acme"}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(audit)
	if strings.Contains(string(raw), canary) || !strings.Contains(string(raw), `"alert_webhook_secret":"set"`) {
		t.Errorf("audit log = %s, want the secret's change recorded as \"set\", never the secret", raw)
	}
	if strings.Contains(e.logs.String(), canary) {
		t.Error("the secret is in the log")
	}
}
