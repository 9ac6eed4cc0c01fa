package auth_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// Cells of the tables, in auth.Roles order:
// Administrator, Tenant Administrator, AI Manager, Finance, Member, Viewer, Demo User.
const (
	y = true
	n = false
)

// contractEndpoints is CONTRACT §5's endpoint × role table, written out
// independently of policy.go: one Op per row (and method), seven cells each.
// "own" (Tenant Administrator on PATCH tenants) is ✓ here; the tenant scope
// is checked by SeesTenant, not by the policy.
var contractEndpoints = map[auth.Op][7]bool{
	// GET /admin/v1/tenants (TA: own only), GET /tenants/{id}
	auth.OpTenantList: {y, y, n, n, n, n, n},
	auth.OpTenantRead: {y, y, n, n, n, n, n},
	// POST /admin/v1/tenants
	auth.OpTenantCreate: {y, n, n, n, n, n, n},
	// PATCH /admin/v1/tenants/{id}
	auth.OpTenantUpdate: {y, y, n, n, n, n, n},
	// DELETE /admin/v1/tenants/{id} (?purge=true: Purge tenants)
	auth.OpTenantDelete: {y, n, n, n, n, n, n},
	auth.OpTenantPurge:  {y, n, n, n, n, n, n},
	// gateways: list, create, read, change, delete
	auth.OpGatewayList:   {y, y, n, n, n, n, n},
	auth.OpGatewayCreate: {y, y, n, n, n, n, n},
	auth.OpGatewayRead:   {y, y, n, n, n, n, n},
	auth.OpGatewayUpdate: {y, y, n, n, n, n, n},
	auth.OpGatewayDelete: {y, y, n, n, n, n, n},
	// gateway keys, rules, budget deletion
	auth.OpKeyList:             {y, y, n, n, n, n, n},
	auth.OpKeyCreate:           {y, y, n, n, n, n, n},
	auth.OpKeyDelete:           {y, y, n, n, n, n, n},
	auth.OpKeyUpdate:           {y, y, n, n, n, n, n},
	auth.OpKeyTest:             {y, y, n, n, n, n, n},
	auth.OpRuleList:            {y, y, n, n, n, n, n},
	auth.OpRuleCreate:          {y, y, n, n, n, n, n},
	auth.OpRuleUpdate:          {y, y, n, n, n, n, n},
	auth.OpRuleDelete:          {y, y, n, n, n, n, n},
	auth.OpGatewayBudgetDelete: {y, y, n, n, n, n, n},
	// gateway tokens (GET, POST, PATCH, DELETE)
	auth.OpGatewayTokenList:   {y, y, n, n, n, n, n},
	auth.OpGatewayTokenCreate: {y, y, n, n, n, n, n},
	auth.OpGatewayTokenUpdate: {y, y, n, n, n, n, n},
	auth.OpGatewayTokenDelete: {y, y, n, n, n, n, n},
	// users, user tokens, user budget deletion, user gateway assignments
	auth.OpUserList:            {y, y, n, n, n, n, n},
	auth.OpUserCreate:          {y, y, n, n, n, n, n},
	auth.OpUserRead:            {y, y, n, n, n, n, n},
	auth.OpUserUpdate:          {y, y, n, n, n, n, n},
	auth.OpUserDelete:          {y, y, n, n, n, n, n},
	auth.OpUserTokenList:       {y, y, n, n, n, n, n},
	auth.OpUserTokenCreate:     {y, y, n, n, n, n, n},
	auth.OpUserTokenUpdate:     {y, y, n, n, n, n, n},
	auth.OpUserTokenDelete:     {y, y, n, n, n, n, n},
	auth.OpUserBudgetDelete:    {y, y, n, n, n, n, n},
	auth.OpUserGatewayList:     {y, y, n, n, n, n, n},
	auth.OpUserGatewayAssign:   {y, y, n, n, n, n, n},
	auth.OpUserGatewayUnassign: {y, y, n, n, n, n, n},
	// GET /admin/v1/stats, /stats/timeseries (scope rule)
	auth.OpStats:           {y, y, y, y, y, y, n},
	auth.OpStatsTimeseries: {y, y, y, y, y, y, n},
	// GET /admin/v1/stats/analytics
	auth.OpStatsAnalytics: {y, y, y, n, n, n, n},
	// GET /gateways/{id}/spend, /tenants/{id}/spend
	auth.OpGatewaySpend: {y, y, n, y, n, n, n},
	auth.OpTenantSpend:  {y, y, n, y, n, n, n},
	// GET /tenants/{id}/analytics
	auth.OpTenantAnalytics: {y, y, n, n, n, n, n},
	// GET /tenants/{id}/alerts
	auth.OpTenantAlerts: {y, y, n, n, n, n, n},
	// GET /logs, /logs/{id}, /gateways/{id}/traces, /traces/{id}
	auth.OpLogList:   {y, y, n, n, n, n, n},
	auth.OpLogRead:   {y, y, n, n, n, n, n},
	auth.OpTraceList: {y, y, n, n, n, n, n},
	auth.OpTraceRead: {y, y, n, n, n, n, n},
	// POST /playground/token, GET /playground/search
	auth.OpPlaygroundToken:  {y, y, n, n, y, n, n},
	auth.OpPlaygroundSearch: {y, y, n, n, y, n, n},
	// GET /playground/trace/{id}
	auth.OpPlaygroundTrace: {y, y, n, n, n, n, n},
	// GET /admin/v1/model-prices
	auth.OpModelPriceList: {y, y, n, y, n, n, n},
	// PUT /model-prices, DELETE /model-prices/{provider}/{model}
	auth.OpModelPricePut:    {y, n, n, n, n, n, n},
	auth.OpModelPriceDelete: {y, n, n, n, n, n, n},
	// GET /admin/v1/providers, /admin/v1/models
	auth.OpProviderList: {y, y, y, y, y, y, n},
	auth.OpModelList:    {y, y, y, y, y, y, n},
	// GET /gateways/{id}/guardrail-stats, /guardrail-events, /circuit-breaker
	auth.OpGuardrailStats:  {y, y, n, n, n, n, n},
	auth.OpGuardrailEvents: {y, y, n, n, n, n, n},
	auth.OpCircuitBreaker:  {y, y, n, n, n, n, n},
	// GET /admin/v1/audit-log
	auth.OpAuditLog: {y, n, n, n, n, n, n},
	// POST /admin/v1/client-errors
	auth.OpClientErrorCreate: {y, y, n, y, y, y, n},
	// GET /admin/v1/client-errors
	auth.OpClientErrorList: {y, n, n, n, n, n, n},
	// §4 My Account: Administrator, Tenant Administrator, AI Manager and Member.
	auth.OpMeRead:        {y, y, y, n, y, n, n},
	auth.OpMeTokenList:   {y, y, y, n, y, n, n},
	auth.OpMeTokenCreate: {y, y, y, n, y, n, n},
	auth.OpMeTokenDelete: {y, y, y, n, y, n, n},
	// Extensions of issue 19: the unpriced models (View model prices), the
	// cost of one's own playground request (the playground's roles), and
	// one's own password (every role but the shared Demo User).
	auth.OpModelPriceUnpriced: {y, y, n, y, n, n, n},
	auth.OpPlaygroundRequest:  {y, y, n, n, y, n, n},
	auth.OpMePasswordChange:   {y, y, y, y, y, y, n},
}

func TestRolesOrder(t *testing.T) {
	want := []auth.Role{"administrator", "tenant_administrator", "ai_manager", "finance", "member", "viewer", "demo_user"}
	if diff := cmp.Diff(want, auth.Roles); diff != "" {
		t.Fatalf("auth.Roles mismatch (-want +got):\n%s", diff)
	}
}

func TestAllowedMatchesContractTable(t *testing.T) {
	for op, cells := range contractEndpoints {
		t.Run(string(op), func(t *testing.T) {
			var got [7]bool
			for i, r := range auth.Roles {
				got[i] = auth.Allowed(r, op)
			}
			if diff := cmp.Diff(cells, got); diff != "" {
				t.Errorf("Allowed row for %s (-want +got, roles in auth.Roles order):\n%s", op, diff)
			}
		})
	}
}

func TestOpsMatchContractTable(t *testing.T) {
	got := auth.Ops()
	slices.Sort(got)
	var want []auth.Op
	for op := range contractEndpoints {
		want = append(want, op)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("auth.Ops() mismatch with the contract table (-want +got):\n%s", diff)
	}
}

func TestAllowedUnknownOpOrRole(t *testing.T) {
	tests := []struct {
		name string
		role auth.Role
		op   auth.Op
	}{
		{"unknown op for administrator", auth.Administrator, "tenant.explode"},
		{"empty op", auth.Administrator, ""},
		{"unknown role", "superuser", auth.OpStats},
		{"empty role", "", auth.OpProviderList},
		{"case matters", "Administrator", auth.OpTenantCreate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := auth.Allowed(tt.role, tt.op); got {
				t.Errorf("Allowed(%q, %q) = %v, want false", tt.role, tt.op, got)
			}
			if err := auth.Check(tt.role, tt.op); err == nil {
				t.Errorf("Check(%q, %q) = nil, want an error", tt.role, tt.op)
			}
		})
	}
}

func TestPermissionGrants(t *testing.T) {
	// CONTRACT §5 permission table; "own tenant" for Tenant Administrator is ✓.
	want := map[auth.Permission][7]bool{
		"Create tenants":                              {y, n, n, n, n, n, n},
		"Manage tenant settings":                      {y, y, n, n, n, n, n},
		"Purge tenants":                               {y, n, n, n, n, n, n},
		"Manage gateways and routing":                 {y, y, n, n, n, n, n},
		"Manage gateway API tokens":                   {y, y, n, n, n, n, n},
		"Manage tenant users":                         {y, y, n, n, n, n, n},
		"View analytics dashboards":                   {y, y, y, n, n, n, n},
		"View cost breakdowns":                        {y, y, n, y, n, n, n},
		"View request logs and traces":                {y, y, n, n, n, n, n},
		"View model prices":                           {y, y, n, y, n, n, n},
		"Manage model prices and deprecations":        {y, n, n, n, n, n, n},
		"View the platform audit log":                 {y, n, n, n, n, n, n},
		"Triage feedback, reports, and client errors": {y, n, n, n, n, n, n},
	}
	consts := []auth.Permission{
		auth.CreateTenants, auth.ManageTenantSettings, auth.PurgeTenants, auth.ManageGateways,
		auth.ManageGatewayTokens, auth.ManageTenantUsers, auth.ViewAnalytics, auth.ViewCost, auth.ViewLogs,
		auth.ViewModelPrices, auth.ManageModelPrices, auth.ViewAuditLog, auth.TriageClientErrors,
	}
	for _, p := range consts {
		if _, ok := want[p]; !ok {
			t.Errorf("permission constant %q is not spelled as in the contract", p)
		}
	}
	for p, cells := range want {
		t.Run(string(p), func(t *testing.T) {
			var got [7]bool
			for i, r := range auth.Roles {
				got[i] = r.Has(p)
			}
			if diff := cmp.Diff(cells, got); diff != "" {
				t.Errorf("grants of %q (-want +got, roles in auth.Roles order):\n%s", p, diff)
			}
		})
	}
	t.Run("unknown role holds nothing", func(t *testing.T) {
		for _, p := range consts {
			if got := auth.Role("root").Has(p); got {
				t.Errorf("Role(root).Has(%q) = %v, want false", p, got)
			}
		}
	})
}

func TestCanGrant(t *testing.T) {
	tests := []struct {
		name   string
		caller auth.Role
		target auth.Role
		want   bool
	}{
		{"admin grants admin", auth.Administrator, auth.Administrator, true},
		{"admin grants demo", auth.Administrator, auth.DemoUser, true},
		{"TA cannot grant admin", auth.TenantAdministrator, auth.Administrator, false},
		{"TA grants TA", auth.TenantAdministrator, auth.TenantAdministrator, true},
		{"TA grants AI manager", auth.TenantAdministrator, auth.AIManager, true},
		{"TA grants finance", auth.TenantAdministrator, auth.Finance, true},
		{"TA grants member", auth.TenantAdministrator, auth.Member, true},
		{"TA grants viewer", auth.TenantAdministrator, auth.Viewer, true},
		{"TA grants demo", auth.TenantAdministrator, auth.DemoUser, true},
		{"AI manager cannot grant TA", auth.AIManager, auth.TenantAdministrator, false},
		{"member cannot grant admin", auth.Member, auth.Administrator, false},
		{"viewer cannot grant member", auth.Viewer, auth.Member, false},
		{"demo grants demo", auth.DemoUser, auth.DemoUser, true},
		{"demo cannot grant viewer", auth.DemoUser, auth.Viewer, false},
		{"invalid target", auth.Administrator, "root", false},
		{"empty target", auth.Administrator, "", false},
		{"invalid caller", "root", auth.DemoUser, false},
		{"empty caller", "", auth.Viewer, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.caller.CanGrant(tt.target); got != tt.want {
				t.Errorf("Role(%q).CanGrant(%q) = %v, want %v", tt.caller, tt.target, got, tt.want)
			}
		})
	}
}

func TestCanHoldTokensAndInference(t *testing.T) {
	want := map[auth.Role]bool{
		auth.Administrator:       true,
		auth.TenantAdministrator: true,
		auth.AIManager:           true,
		auth.Finance:             false,
		auth.Member:              true,
		auth.Viewer:              false,
		auth.DemoUser:            false,
		"root":                   false,
		"":                       false,
	}
	for r, w := range want {
		t.Run(string(r), func(t *testing.T) {
			if got := r.CanHoldTokens(); got != w {
				t.Errorf("Role(%q).CanHoldTokens() = %v, want %v", r, got, w)
			}
			// The last row of the endpoint × role table: inference API.
			if got := r.CanCallInference(); got != w {
				t.Errorf("Role(%q).CanCallInference() = %v, want %v", r, got, w)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		role     auth.Role
		op       auth.Op
		wantPerm string // a substring the message must contain
	}{
		{"finance creates tenant", auth.Finance, auth.OpTenantCreate, string(auth.CreateTenants)},
		{"member lists logs", auth.Member, auth.OpLogList, string(auth.ViewLogs)},
		{"viewer reads spend", auth.Viewer, auth.OpGatewaySpend, string(auth.ViewCost)},
		{"TA puts prices", auth.TenantAdministrator, auth.OpModelPricePut, string(auth.ManageModelPrices)},
		{"TA reads audit log", auth.TenantAdministrator, auth.OpAuditLog, string(auth.ViewAuditLog)},
		{"TA lists client errors", auth.TenantAdministrator, auth.OpClientErrorList, string(auth.TriageClientErrors)},
		{"member manages users", auth.Member, auth.OpUserCreate, string(auth.ManageTenantUsers)},
		{"AI manager manages tokens", auth.AIManager, auth.OpGatewayTokenCreate, string(auth.ManageGatewayTokens)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := auth.Check(tt.role, tt.op)
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Check(%q, %q) = %v (%T), want *apierr.Error", tt.role, tt.op, err, err)
			}
			if ae.Status != http.StatusForbidden {
				t.Errorf("status: got %d, want %d", ae.Status, http.StatusForbidden)
			}
			if ae.Type != apierr.TypePermission {
				t.Errorf("type: got %q, want %q", ae.Type, apierr.TypePermission)
			}
			if ae.Code != "forbidden" {
				t.Errorf("code: got %q, want %q", ae.Code, "forbidden")
			}
			if !strings.Contains(ae.Message, tt.wantPerm) {
				t.Errorf("message: got %q, want it to name %q", ae.Message, tt.wantPerm)
			}
		})
	}
	t.Run("denied ops without a seed permission still answer 403", func(t *testing.T) {
		for op, cells := range contractEndpoints {
			for i, r := range auth.Roles {
				err := auth.Check(r, op)
				if cells[i] {
					if err != nil {
						t.Errorf("Check(%q, %q) = %v, want nil", r, op, err)
					}
					continue
				}
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
					t.Errorf("Check(%q, %q) = %v, want a 403 *apierr.Error", r, op, err)
					continue
				}
				if ae.Message == "" {
					t.Errorf("Check(%q, %q): got an empty message, want one naming what is missing", r, op)
				}
			}
		}
	})
}

func TestPrincipalCan(t *testing.T) {
	t.Run("nil principal", func(t *testing.T) {
		var p *auth.Principal
		err := p.Can(auth.OpStats)
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("got %v (%T), want *apierr.Error", err, err)
		}
		if ae.Status != http.StatusUnauthorized {
			t.Errorf("status: got %d, want %d", ae.Status, http.StatusUnauthorized)
		}
		if ae.Type != apierr.TypeAuthentication {
			t.Errorf("type: got %q, want %q", ae.Type, apierr.TypeAuthentication)
		}
	})
	tests := []struct {
		name   string
		role   auth.Role
		op     auth.Op
		status int // 0 for allowed
	}{
		{"admin creates tenant", auth.Administrator, auth.OpTenantCreate, 0},
		{"member reads providers", auth.Member, auth.OpProviderList, 0},
		{"demo reads providers", auth.DemoUser, auth.OpProviderList, http.StatusForbidden},
		{"viewer reads stats", auth.Viewer, auth.OpStats, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &auth.Principal{UserID: "usr_1", TenantID: "acme", Role: tt.role}
			err := p.Can(tt.op)
			if tt.status == 0 {
				if err != nil {
					t.Errorf("Can(%q) = %v, want nil", tt.op, err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Can(%q) = %v, want *apierr.Error", tt.op, err)
			}
			if ae.Status != tt.status {
				t.Errorf("status: got %d, want %d", ae.Status, tt.status)
			}
		})
	}
}

func TestSeesTenant(t *testing.T) {
	tests := []struct {
		name   string
		p      *auth.Principal
		tenant string
		want   bool
	}{
		{"nil principal", nil, "acme", false},
		{"admin other tenant", &auth.Principal{Role: auth.Administrator, TenantID: "platform"}, "acme", true},
		{"admin own tenant", &auth.Principal{Role: auth.Administrator, TenantID: "platform"}, "platform", true},
		{"TA own tenant", &auth.Principal{Role: auth.TenantAdministrator, TenantID: "acme"}, "acme", true},
		{"TA other tenant", &auth.Principal{Role: auth.TenantAdministrator, TenantID: "acme"}, "globex", false},
		{"member own tenant", &auth.Principal{Role: auth.Member, TenantID: "acme"}, "acme", true},
		{"viewer other tenant", &auth.Principal{Role: auth.Viewer, TenantID: "acme"}, "globex", false},
		{"finance empty tenant", &auth.Principal{Role: auth.Finance, TenantID: "acme"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.SeesTenant(tt.tenant); got != tt.want {
				t.Errorf("SeesTenant(%q) = %v, want %v", tt.tenant, got, tt.want)
			}
		})
	}
}

func TestContextRoundTrip(t *testing.T) {
	if got := auth.From(context.Background()); got != nil {
		t.Errorf("From(empty ctx): got %v, want nil", got)
	}
	p := &auth.Principal{UserID: "usr_1", Role: auth.Member, TenantID: "acme"}
	if got := auth.From(auth.With(context.Background(), p)); got != p {
		t.Errorf("From(With(p)): got %p, want %p", got, p)
	}
}

// TestCheckNamesMissingPermission checks that a 403 naming a permission
// names one the role really lacks: the message says "which your role does
// not have".
func TestCheckNamesMissingPermission(t *testing.T) {
	perms := []auth.Permission{
		auth.CreateTenants, auth.ManageTenantSettings, auth.PurgeTenants, auth.ManageGateways,
		auth.ManageGatewayTokens, auth.ManageTenantUsers, auth.ViewAnalytics, auth.ViewCost, auth.ViewLogs,
		auth.ViewModelPrices, auth.ManageModelPrices, auth.ViewAuditLog, auth.TriageClientErrors,
	}
	for _, op := range auth.Ops() {
		for _, r := range auth.Roles {
			var ae *apierr.Error
			if !errors.As(auth.Check(r, op), &ae) {
				continue
			}
			t.Run(string(op)+"/"+string(r), func(t *testing.T) {
				for _, p := range perms {
					if strings.Contains(ae.Message, `"`+string(p)+`"`) && r.Has(p) {
						t.Errorf("Check(%q, %q): got message %q, but the role has %q", r, op, ae.Message, p)
					}
				}
			})
		}
	}
}
