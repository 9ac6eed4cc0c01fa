package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/alert/alerttest"
)

// TestAlertsServe runs `sluice serve` (embedded stores): the tenant's
// webhook is set through the admin API, a soft gateway budget is spent
// past its amount, and the webhook gets the 50, 80 and 100 % alerts once
// each, signed; GET /admin/v1/tenants/acme/alerts lists them delivered.
func TestAlertsServe(t *testing.T) {
	const secret = "whsec-serve-e2e-6b2d8f1c"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, mockURL, base := startMockServe(t, ctx)
	rcv := alerttest.New(t, secret, 0)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	tn := call(t, base, "PATCH", "/admin/v1/tenants/acme", fmt.Sprintf(`{"settings":{"log_retention_days":30,
		"log_bodies_default":true,"allowed_providers":[],"alert_webhook_url":%q,"alert_webhook_secret":%q}}`, rcv.URL+"/hook", secret), 200)
	if set := tn["settings"].(map[string]any)["alert_webhook_secret_set"]; set != true {
		t.Fatalf("alert_webhook_secret_set = %v, want true", set)
	}
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)
	gwID := gw["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"mock","key":"sk-mock-upstream-key-0001","base_url":%q}`, mockURL+"/v1"), 201)
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"e2e"}`, 201)["secret"].(string)
	url := base + "/v1/acme/prod/compat/chat/completions"
	waitServing(t, url, tok)
	// A budget of a few requests' cost (gpt-4o-mini at the seeded price,
	// the mock's short answers), spent past its amount by 40 requests.
	call(t, base, "PATCH", "/admin/v1/gateways/"+gwID, `{"budget":{"amount_usd":0.00002,"period":"daily","hard":false}}`, 200)
	time.Sleep(200 * time.Millisecond) // the snapshot picks the budget up
	for range 40 {
		if status := postJSON(t, url, tok, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"say a few words please"}]}`); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	want := []string{"gateway/" + gwID + "/50", "gateway/" + gwID + "/80", "gateway/" + gwID + "/100"}
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.Deliveries()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	rcv.CheckOnce(t, want)
	// The row is updated right after the receiver answers: wait for it.
	var alerts []any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		alerts = call(t, base, "GET", "/admin/v1/tenants/acme/alerts", "", 200)["data"].([]any)
		if len(alerts) == 3 && alerts[0].(map[string]any)["status"] == "delivered" && alerts[1].(map[string]any)["status"] == "delivered" &&
			alerts[2].(map[string]any)["status"] == "delivered" {
			break
		}
	}
	if len(alerts) != 3 {
		t.Fatalf("alerts list = %v, want 3", alerts)
	}
	for _, a := range alerts {
		a := a.(map[string]any)
		if a["status"] != "delivered" || a["scope_id"] != gwID || a["period"] != "daily" {
			t.Errorf("alert %v, want delivered for the gateway's daily budget", a)
		}
	}
}
