package accesslog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/proxy"
)

// A line is one JSON object with the request's fields, and never a body:
// a gateway that logs bodies has them in its record, which the access log
// reads field by field.
func TestLine(t *testing.T) {
	const canary = "PROMPT-CANARY-2b9e"
	rec := &analytics.Record{ID: "req_1", TS: time.Now(), TenantID: "acme", GatewayID: "gw_1", Provider: "openai",
		Model: "gpt-4o-mini", Status: 429, ErrorCode: "rate_limited", LatencyMS: 12, TTFBMS: 0, TokensIn: 7, TokensOut: 0,
		CostUSD: money.USD(1500), Cache: "", Attempts: 0, Operation: analytics.OpMessages, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
		RequestBody: `{"messages":[{"content":"` + canary + `"}]}`, ResponseBody: canary,
		Metadata: map[string]string{"note": canary}, UserAgent: canary, ClientIP: "203.0.113.9"}
	var buf bytes.Buffer
	New(&buf).Observe(&proxy.Finished{Record: rec, Gateway: "acme/prod", RequestModel: "openai/gpt-4o-mini"})
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("want one line, got %q", buf.String())
	}
	if strings.Contains(buf.String(), canary) || strings.Contains(buf.String(), "203.0.113.9") {
		t.Fatalf("the line holds a body, metadata, the user agent or the client IP: %s", buf.String())
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "time")
	want := map[string]any{"level": "INFO", "msg": "request", "request_id": "req_1", "tenant": "acme", "gateway": "acme/prod",
		"gateway_id": "gw_1", "operation": "messages", "provider": "openai", "model": "gpt-4o-mini",
		"requested_model": "openai/gpt-4o-mini", "status": 429.0, "error_code": "rate_limited", "latency_ms": 12.0,
		"ttfb_ms": 0.0, "tokens_in": 7.0, "tokens_out": 0.0, "cached_tokens": 0.0, "cache_write_tokens": 0.0, "reasoning_tokens": 0.0, "cost_usd": money.USD(1500).Float(),
		"cache": "", "attempts": 0.0, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
}
