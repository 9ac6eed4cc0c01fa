package graph

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
)

// TestUnpricedShown: a log answered by a model without a price reads
// priced: false, the figures count it, the price editor's list names the
// model, and the Member reads the served target of its own request.
func TestUnpricedShown(t *testing.T) {
	an, err := embedded.Open(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { an.Close() })
	e := newEnvWith(t, func(c *admin.Config) { c.Analytics = an })
	gw := e.setupTenant("acme")
	member := &auth.Principal{UserID: "usr_m", Email: "m@acme.test", Role: auth.Member, TenantID: "acme"}
	ts := time.Now().Add(-time.Hour).UTC()
	err = an.Write(context.Background(), &analytics.Batch{ID: "b", Records: []*analytics.Record{
		{ID: "r1", TS: ts, TenantID: "acme", GatewayID: gw, UserID: "usr_m", Provider: "openai", Model: "gpt-4o", Status: 200,
			TokensIn: 10, TokensOut: 5, CostUSD: money.FromFloat(0.5)},
		{ID: "r2", TS: ts, TenantID: "acme", GatewayID: gw, UserID: "usr_m", Provider: "mistral", Model: "unknown-x", Status: 200,
			TokensIn: 7, TokensOut: 3, Flags: []string{analytics.UnpricedFlag}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	d := e.mustDo(e.admin, `{ logs(filter: {tenantId: "acme"}) { data { id priced flags costUsd } }
		stats(tenantId: "acme") { unpricedRequests }
		analytics(tenantId: "acme", groupBy: "model") { groups { key unpricedRequests } }
		tenantSpend(tenantId: "acme") { unpricedRequests byModel { model tokensIn unpricedRequests } byUser { id unpricedRequests } }
		unpricedModels(tenantId: "acme") { data { provider model requests tokensIn tokensOut } } }`, nil)
	for i := range 2 {
		id, priced := str(d, "logs", "data", i, "id"), get(d, "logs", "data", i, "priced")
		if want := id == "r1"; priced != want {
			t.Errorf("log %s priced = %v, want %v", id, priced, want)
		}
	}
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"stats", "unpricedRequests"}, 1.0},
		{[]any{"tenantSpend", "unpricedRequests"}, 1.0},
		{[]any{"tenantSpend", "byUser", 0, "unpricedRequests"}, 1.0},
		{[]any{"unpricedModels", "data", 0, "model"}, "unknown-x"},
		{[]any{"unpricedModels", "data", 0, "requests"}, 1.0},
		{[]any{"unpricedModels", "data", 0, "tokensOut"}, 3.0},
	} {
		if got := get(d, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
	d = e.mustDo(member, `{ playgroundRequest(id: "r2") { provider model costUsd priced } }`, nil)
	if got := get(d, "playgroundRequest"); str(got, "model") != "unknown-x" || get(got, "priced") != false {
		t.Errorf("playgroundRequest = %v, want unknown-x unpriced", got)
	}
	checkCode(t, onlyError(t, e.do(member, `{ unpricedModels { data { model } } }`, nil)), "FORBIDDEN")
}

// TestChangeMyPasswordField: changeMyPassword checks the current password
// and answers BAD_USER_INPUT for a wrong one; the Demo User may not.
func TestChangeMyPasswordField(t *testing.T) {
	e := newEnv(t)
	e.setupTenant("acme")
	const pw = "member password 1"
	e.mustDo(e.admin, `mutation { createUser(tenantId: "acme", input: {email: "m@acme.test", role: "member", password: "`+pw+`"}) { id } }`, nil)
	sess, err := e.svc.CreateSession(context.Background(), "m@acme.test", pw, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.svc.Authenticate(context.Background(), sess.Token)
	if err != nil {
		t.Fatal(err)
	}
	const q = `mutation($c: String!, $n: String!) { changeMyPassword(currentPassword: $c, newPassword: $n) }`
	checkCode(t, onlyError(t, e.do(p, q, map[string]any{"c": "wrong password!", "n": "a brand new passphrase"})), "BAD_USER_INPUT")
	if d := e.mustDo(p, q, map[string]any{"c": pw, "n": "a brand new passphrase"}); get(d, "changeMyPassword") != true {
		t.Fatalf("changeMyPassword = %v, want true", d)
	}
	if _, err := e.svc.CreateSession(context.Background(), "m@acme.test", "a brand new passphrase", "10.0.0.1"); err != nil {
		t.Fatalf("sign in with the new password: %v", err)
	}
	demo := &auth.Principal{UserID: "usr_d", Email: "d@acme.test", Role: auth.DemoUser, TenantID: "acme"}
	checkCode(t, onlyError(t, e.do(demo, q, map[string]any{"c": "x", "n": "a brand new passphrase"})), "FORBIDDEN")
}
