package auth_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
)

// TestWrites checks the read/write split of the operations against the
// methods of CONTRACT §5's table, written out independently: the GET rows
// read, every other row writes, and an unknown Op counts as a write.
func TestWrites(t *testing.T) {
	gets := map[auth.Op]bool{
		auth.OpTenantList: true, auth.OpTenantRead: true, auth.OpGatewayList: true, auth.OpGatewayRead: true,
		auth.OpKeyList: true, auth.OpRuleList: true, auth.OpGatewayTokenList: true, auth.OpUserList: true,
		auth.OpUserRead: true, auth.OpUserTokenList: true, auth.OpUserGatewayList: true, auth.OpStats: true,
		auth.OpStatsTimeseries: true, auth.OpStatsAnalytics: true, auth.OpGatewaySpend: true, auth.OpTenantSpend: true,
		auth.OpTenantAnalytics: true, auth.OpTenantAlerts: true, auth.OpLogList: true, auth.OpLogRead: true, auth.OpTraceList: true,
		auth.OpTraceRead: true, auth.OpPlaygroundSearch: true, auth.OpPlaygroundTrace: true, auth.OpModelPriceList: true,
		auth.OpProviderList: true, auth.OpModelList: true, auth.OpGuardrailStats: true, auth.OpGuardrailEvents: true,
		auth.OpCircuitBreaker: true, auth.OpAuditLog: true, auth.OpClientErrorList: true, auth.OpMeRead: true,
		auth.OpMeTokenList: true, auth.OpModelPriceUnpriced: true, auth.OpPlaygroundRequest: true,
	}
	for op := range contractEndpoints {
		if got, want := op.Writes(), !gets[op]; got != want {
			t.Errorf("%s.Writes() = %v, want %v", op, got, want)
		}
	}
	if !auth.Op("tenant.explode").Writes() {
		t.Error("an unknown op does not count as a write")
	}
}
