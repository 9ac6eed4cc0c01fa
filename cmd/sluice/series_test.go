package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestServeChartSeries drives `sluice serve` on each analytics backend and
// reads the series the dashboard's charts draw: usage per group over time
// (GET /admin/v1/stats/series and GraphQL seriesByGroup) with the top
// groups and "other", errors by reason (refusals by code, upstream
// failures as one), latency percentiles per time-series bucket, and a
// tenant's guardrail hits.
func TestServeChartSeries(t *testing.T) {
	onEachBackend(t, testServeChartSeries)
}

func testServeChartSeries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, url, token, _ := serveWithGateway(t, ctx)
	for _, c := range []struct {
		model string
		want  int
	}{
		{"openai/gpt-4o-mini", 200},
		{"openai/gpt-4o-mini@latency=150ms", 200},
		{"no-such-model", 400},
		{"anthropic/claude-sonnet-4-5", 400},
		{"openai/gpt-4o-mini@status=500", 502},
	} {
		if s := postJSON(t, url, token, `{"model":"`+c.model+`","messages":[{"role":"user","content":"hi"}]}`); s != c.want {
			t.Fatalf("%s: status %d, want %d", c.model, s, c.want)
		}
	}
	// waitServing sent a request of its own before these five.
	var total float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		st := call(t, base, "GET", "/admin/v1/stats?tenant=acme", "", 200)
		if total = st["requests"].(float64); total >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats after 10 s: %v requests, want 6", total)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Errors by reason: each refusal by its code, the upstream failure as
	// "upstream"; the successes are in no series.
	reasons := call(t, base, "GET", "/admin/v1/stats/series?tenant=acme&group_by=error_reason&interval=minute&from="+
		time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "", 200)
	got := map[string]float64{}
	for _, s := range reasons["series"].([]any) {
		m := s.(map[string]any)
		got[m["key"].(string)] = m["requests"].(float64)
		var sum float64
		for _, p := range m["points"].([]any) {
			sum += p.(map[string]any)["errors"].(float64)
		}
		if sum != m["errors"].(float64) {
			t.Errorf("series %v: points sum to %v errors, want the total %v", m["key"], sum, m["errors"])
		}
	}
	want := map[string]float64{"unknown_model": 1, "provider_not_configured": 1, "upstream": 1}
	if len(got) != len(want) || reasons["other"] != nil || reasons["interval"] != "minute" {
		t.Errorf("error reasons %v other %v interval %v; want %v, no other, minute", got, reasons["other"], reasons["interval"], want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("error reason %s: %v requests, want %v", k, got[k], n)
		}
	}

	// One series of its own, the rest as other; over GraphQL with the
	// per-bucket latency percentiles and the tenant's guardrail hits.
	q, _ := json.Marshal(map[string]string{"query": `{
  seriesByGroup(tenantId: "acme", groupBy: "model", limit: 1) { groupBy series { key requests } other { requests } }
  timeseries(tenantId: "acme") { points { requests latencyMs { p50 p99 } } }
  tenantGuardrailStats(tenantId: "acme") { total }
}`})
	data := call(t, base, "POST", "/admin/graphql", string(q), 200)["data"].(map[string]any)
	sbg := data["seriesByGroup"].(map[string]any)
	series := sbg["series"].([]any)
	other, _ := sbg["other"].(map[string]any)
	if len(series) != 1 || other == nil || series[0].(map[string]any)["requests"].(float64)+other["requests"].(float64) != total {
		t.Errorf("seriesByGroup(model, limit 1): %v; want one series and other summing to %v requests", sbg, total)
	}
	var p99 float64
	for _, p := range data["timeseries"].(map[string]any)["points"].([]any) {
		p99 = max(p99, p.(map[string]any)["latencyMs"].(map[string]any)["p99"].(float64))
	}
	if p99 < 150 {
		t.Errorf("timeseries: highest p99 %v ms, want at least the 150 ms of the slow request", p99)
	}
	if gs := data["tenantGuardrailStats"].(map[string]any); gs["total"] != 0.0 {
		t.Errorf("tenantGuardrailStats total %v, want 0 (no rules)", gs["total"])
	}

	for _, bad := range []string{"group_by=route", "group_by=model&limit=21", "group_by=model&interval=week", ""} {
		res := call(t, base, "GET", "/admin/v1/stats/series?tenant=acme&"+bad, "", 400)
		if res["error"] == nil {
			t.Errorf("series?%s: %v, want an error", bad, res)
		}
	}
}
