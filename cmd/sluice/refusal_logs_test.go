package main

import (
	"context"
	"testing"
	"time"
)

// TestServeRecordsRefusalsAndTokenUse drives `sluice serve` on each
// analytics backend: refused requests show in GET /admin/v1/logs with the
// model they asked for and the message the client got, GET
// /admin/v1/stats splits the errors into refusals by reason and upstream
// errors, and the inference token's last_used_at is written by the
// proxy's flusher (--last-use-interval).
func TestServeRecordsRefusalsAndTokenUse(t *testing.T) {
	onEachBackend(t, testServeRefusals)
}

func testServeRefusals(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("SLUICE_LAST_USE_INTERVAL", "100ms")
	base, url, token, _ := serveWithGateway(t, ctx)
	for body, want := range map[string]int{
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`:            200,
		`{"model":"no-such-model","messages":[{"role":"user","content":"hi"}]}`:                 400,
		`{"model":"anthropic/claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`:   400,
		`{"model":"openai/gpt-4o-mini@status=500","messages":[{"role":"user","content":"hi"}]}`: 502,
	} {
		if s := postJSON(t, url, token, body); s != want {
			t.Fatalf("%s: status %d, want %d", body, s, want)
		}
	}

	var logs []any
	for deadline := time.Now().Add(10 * time.Second); ; {
		logs = call(t, base, "GET", "/admin/v1/logs?tenant=acme&limit=100", "", 200)["data"].([]any)
		if len(logs) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := map[string][2]string{ // error code → provider, model
		"unknown_model":           {"", "no-such-model"},
		"provider_not_configured": {"anthropic", "claude-sonnet-4-5"},
		"upstream_error":          {"openai", "gpt-4o-mini@status=500"},
	}
	seen := 0
	for _, l := range logs {
		rec := l.(map[string]any)
		code, _ := rec["error_code"].(string)
		w, ok := want[code]
		if !ok {
			continue
		}
		seen++
		if rec["provider"] != w[0] || rec["model"] != w[1] || rec["error_message"] == "" || rec["error_message"] == nil {
			t.Errorf("%s log: provider %v model %v message %v; want %q/%q and the client's message",
				code, rec["provider"], rec["model"], rec["error_message"], w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of the %d error logs found in %v", seen, len(want), logs)
	}

	st := call(t, base, "GET", "/admin/v1/stats?tenant=acme", "", 200)
	reasons, _ := st["refusals_by_reason"].([]any)
	if st["errors"] != 3.0 || st["refusals"] != 2.0 || st["upstream_errors"] != 1.0 || len(reasons) != 2 {
		t.Errorf("stats errors %v refusals %v upstream_errors %v by reason %v; want 3, 2, 1 and two reasons",
			st["errors"], st["refusals"], st["upstream_errors"], reasons)
	}

	gws := call(t, base, "GET", "/admin/v1/tenants/acme/gateways", "", 200)["data"].([]any)
	gwID := gws[0].(map[string]any)["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; {
		toks := call(t, base, "GET", "/admin/v1/gateways/"+gwID+"/tokens", "", 200)["data"].([]any)
		if len(toks) == 1 && toks[0].(map[string]any)["last_used_at"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the inference token's last_used_at is still unset: %v", toks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
