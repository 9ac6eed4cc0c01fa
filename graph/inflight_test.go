package graph

import "testing"

// TestMaxInFlightFields checks the concurrency limits of issue 12 over
// GraphQL: rateLimit.maxInFlight on gateways and tokens, and the tenant's
// settings.maxInFlight, with the domain's validation.
func TestMaxInFlightFields(t *testing.T) {
	e := newEnv(t)
	gw := e.setupTenant("acme")
	d := e.mustDo(e.admin, `mutation($g: ID!) { updateGateway(id: $g, input: {rateLimit: {maxInFlight: 20}}) {
		rateLimit { requestsPerMinute tokensPerMinute maxInFlight } } }`, map[string]any{"g": gw})
	if got := get(d, "updateGateway", "rateLimit", "maxInFlight"); got != float64(20) {
		t.Errorf("gateway rateLimit.maxInFlight = %v, want 20", got)
	}
	d = e.mustDo(e.admin, `mutation($g: ID!) { createGatewayToken(gatewayId: $g, input: {name: "ci", rateLimit: {maxInFlight: 5}}) {
		rateLimit { maxInFlight } } }`, map[string]any{"g": gw})
	if got := get(d, "createGatewayToken", "rateLimit", "maxInFlight"); got != float64(5) {
		t.Errorf("token rateLimit.maxInFlight = %v, want 5", got)
	}
	d = e.mustDo(e.admin, `mutation { updateTenant(id: "acme", input: {settings: {maxInFlight: 300}}) {
		settings { logRetentionDays maxInFlight } } }`, nil)
	if got := get(d, "updateTenant", "settings", "maxInFlight"); got != float64(300) {
		t.Errorf("tenant settings.maxInFlight = %v, want 300", got)
	}
	res := e.do(e.admin, `mutation($g: ID!) { updateGateway(id: $g, input: {rateLimit: {maxInFlight: 0}}) { id } }`,
		map[string]any{"g": gw})
	if ext := onlyError(t, res).Extensions; ext["param"] != "rate_limit.max_in_flight" {
		t.Errorf("maxInFlight 0: extensions %v, want param rate_limit.max_in_flight", ext)
	}
}
