package graph

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicehq/sluice/internal/admin"
)

// failingTester answers every key test with an upstream refusal.
type failingTester struct{}

func (failingTester) TestKey(context.Context, admin.KeyProbe) error {
	return errors.New("upstream answered 401: invalid api key")
}

// TestGatewayPageFields: the fields the gateway pages use over GraphQL —
// figures of one gateway, the gateway's base URL with the public URL, a
// key's update (rotation) and test, and the breaker state with its last
// error.
func TestGatewayPageFields(t *testing.T) {
	e := newEnvWith(t, func(c *admin.Config) {
		c.PublicURL = "https://ai.example.com"
		c.KeyTester = failingTester{}
	})
	gw := e.setupTenant("acme")
	vars := map[string]any{"g": gw}
	d := e.mustDo(e.admin, `query($g: ID!) { gateway(id: $g) { baseUrl }
		stats(gatewayId: $g) { requests upstreamErrors refusals latencyMs { p50 p99 } }
		timeseries(gatewayId: $g, interval: "hour") { interval }
		analytics(gatewayId: $g, groupBy: "model") { groups { key } } }`, vars)
	if got := str(d, "gateway", "baseUrl"); got != "https://ai.example.com/v1/acme/prod" {
		t.Errorf("baseUrl %q, want the public URL with the gateway's path", got)
	}
	if get(d, "stats", "requests") != float64(0) || str(d, "timeseries", "interval") != "hour" {
		t.Errorf("gateway figures %v", d)
	}
	other := e.setupTenant("other")
	res := e.do(e.admin, `query($t: ID!, $g: ID!) { stats(tenantId: $t, gatewayId: $g) { requests } }`, map[string]any{"t": "acme", "g": other})
	checkCode(t, onlyError(t, res), "NOT_FOUND")

	e.mustDo(e.admin, `mutation($g: ID!) { addProviderKey(gatewayId: $g, input: {provider: "openai", alias: "old", key: "sk-proj-old-0123456789abcdef"}) { id } }`, vars)
	d = e.mustDo(e.admin, `mutation($g: ID!) { updateProviderKey(gatewayId: $g, provider: "openai", alias: "old", input: {weight: 5, disabled: true}) { weight disabled } }`, vars)
	if get(d, "updateProviderKey", "weight") != float64(5) || get(d, "updateProviderKey", "disabled") != true {
		t.Errorf("updated key %v", d)
	}
	d = e.mustDo(e.admin, `mutation($g: ID!) { testProviderKey(gatewayId: $g, provider: "openai", alias: "old") { ok model latencyMs message } }`, vars)
	if get(d, "testProviderKey", "ok") != false || str(d, "testProviderKey", "message") != "upstream answered 401: invalid api key" ||
		str(d, "testProviderKey", "model") == "" {
		t.Errorf("key test %v", d)
	}
	d = e.mustDo(e.admin, `query($g: ID!) { circuitBreaker(gatewayId: $g) { data { provider keyAlias state lastError lastErrorAt } } }`, vars)
	if str(d, "circuitBreaker", "data", 0, "state") != "closed" || str(d, "circuitBreaker", "data", 0, "lastError") != "" {
		t.Errorf("breaker of a key without traffic %v", d)
	}
}
