package main

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestDoorErrorsEndToEnd drives every door of issue 14 — /compat/v1/messages
// and /anthropic/v1/messages with the official @anthropic-ai/sdk client,
// /compat/responses and /openai/responses with the openai client's
// responses.create, and models.list on /compat — into the errors a client
// must be able to tell apart (internal/e2e/node/errors.test.mjs): 401 for
// a bad token, 403 for a Member's token on a gateway it is not assigned
// to, 404 for a gateway that does not exist, and 429 budget_exceeded from
// a gateway whose hard budget is spent. Each raises the SDK's own
// exception. The 429 goes to a client with the SDK's default retries and
// a fetch that counts: the client sent it once (the gateway says
// x-should-retry: false), the gateway logged exactly one refusal per door,
// and no refused request reached the provider.
func TestDoorErrorsEndToEnd(t *testing.T) {
	nodeDir := nodeE2EDir(t, "openai")
	nodeE2EDir(t, "@anthropic-ai", "sdk")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	// prod serves; staging is a gateway the Member is not assigned to;
	// tight has a hard budget smaller than any request.
	gateways := map[string]string{}
	for _, slug := range []string{"prod", "staging", "tight"} {
		gateways[slug] = call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"`+slug+`"}`, 201)["id"].(string)
		addMatrixKeys(t, base, gateways[slug], mockURL, []e2eProvider{
			{Provider: "openai", key: e2eOpenAIKey},
			{Provider: "anthropic", key: e2eAnthropicKey},
		})
	}
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gateways["prod"]+"/tokens", `{"name":"e2e"}`, 201)["secret"].(string)
	tightTok := call(t, base, "POST", "/admin/v1/gateways/"+gateways["tight"]+"/tokens", `{"name":"e2e"}`, 201)["secret"].(string)
	member := call(t, base, "POST", "/admin/v1/tenants/acme/users", `{"email":"dev@acme.test","name":"Dev","role":"member"}`, 201)["id"].(string)
	if st := postJSON(t, base+"/admin/v1/users/"+member+"/gateways/"+gateways["prod"], testAdminToken, ""); st != 204 {
		t.Fatalf("assign the gateway: status %d", st)
	}
	memberTok := call(t, base, "POST", "/admin/v1/users/"+member+"/tokens", `{"name":"dev"}`, 201)["secret"].(string)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", tok)
	waitServing(t, base+"/v1/acme/prod/compat/chat/completions", memberTok)
	// The tight gateway serves one request, which spends more than its
	// budget will be; then the budget refuses every request.
	tightChat := base + "/v1/acme/tight/compat/chat/completions"
	waitServing(t, tightChat, tightTok)
	call(t, base, "PATCH", "/admin/v1/gateways/"+gateways["tight"], `{"budget":{"amount_usd":0.000001,"period":"total","hard":true}}`, 200)
	deadline := time.Now().Add(5 * time.Second)
	for postJSON(t, tightChat, tightTok, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"ping"}]}`) != 429 {
		if time.Now().After(deadline) {
			t.Fatal("the tight gateway's budget does not refuse")
		}
		time.Sleep(50 * time.Millisecond)
	}
	upstream := mock.Count()

	out, err := runNodeTests(ctx, t, nodeDir, "errors.test.mjs", "SLUICE_BASE="+base+"/v1/acme", "SLUICE_TOKEN="+tok,
		"SLUICE_MEMBER_TOKEN="+memberTok, "SLUICE_TIGHT_TOKEN="+tightTok)
	if err != nil {
		t.Fatalf("the client tests failed: %v", err)
	}
	if tests, pass := nodeCount(out, "tests"), nodeCount(out, "pass"); tests < 5*4 || pass != tests {
		t.Fatalf("node ran %d tests, %d passed; want at least 20, all passing", tests, pass)
	}
	// Only the Member's four requests on its own gateway reached the
	// provider; no refused one did.
	if n := mock.Count() - upstream; n != 4 {
		t.Errorf("the provider saw %d requests, want the Member's 4", n)
	}

	// One refusal logged per door that spends (the chat polls above are
	// operation chat): two Messages doors and two Responses doors.
	want := map[string]int{"messages": 2, "responses": 2}
	var got map[string]int
	deadline = time.Now().Add(10 * time.Second)
	for {
		got = map[string]int{}
		logs := call(t, base, "GET", "/admin/v1/logs?tenant=acme&error_code=budget_exceeded&limit=1000", "", 200)
		for _, r := range logs["data"].([]any) {
			rec := r.(map[string]any)
			if op := rec["operation"].(string); op != "chat" {
				got[op]++
				if rec["status"] != float64(429) {
					t.Errorf("a budget refusal logged with status %v", rec["status"])
				}
			}
		}
		if got["messages"] >= want["messages"] && got["responses"] >= want["responses"] || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("budget refusals logged by operation %v, want %v (one per door: no retry)", got, want)
	}
}
