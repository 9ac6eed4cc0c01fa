// Package auth holds the roles, the permissions and the endpoint × role
// policy of the admin API, and the Principal a request acts as. Both
// transports (REST and GraphQL) reach the domain through admin.Service,
// which asks this package, so the policy is enforced in one place.
package auth

import "slices"

// Role is a user's role. The values are the wire names.
type Role string

// The seven roles.
const (
	Administrator       Role = "administrator"
	TenantAdministrator Role = "tenant_administrator"
	AIManager           Role = "ai_manager"
	Finance             Role = "finance"
	Member              Role = "member"
	Viewer              Role = "viewer"
	DemoUser            Role = "demo_user"
)

// Roles lists every role, highest first.
var Roles = []Role{Administrator, TenantAdministrator, AIManager, Finance, Member, Viewer, DemoUser}

// Valid reports whether r is one of the seven roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// rank orders roles for the grant rule: a caller may grant only roles at or
// below its own rank.
func (r Role) rank() int {
	switch r {
	case Administrator:
		return 6
	case TenantAdministrator:
		return 5
	case AIManager:
		return 4
	case Finance, Member:
		return 3
	case Viewer:
		return 2
	case DemoUser:
		return 1
	}
	return 0
}

// CanGrant reports whether a caller of role r may give role target to a user.
func (r Role) CanGrant(target Role) bool {
	return target.Valid() && r.rank() >= target.rank()
}

// CanHoldTokens reports whether users of this role may own API tokens.
// Finance, Viewer and Demo User hold none (CONTRACT §4).
func (r Role) CanHoldTokens() bool {
	switch r {
	case Finance, Viewer, DemoUser:
		return false
	}
	return r.Valid()
}

// CanCallInference reports whether the role may use the inference API.
func (r Role) CanCallInference() bool { return r.CanHoldTokens() }

// Permission is a named permission of the seed, spelled exactly.
type Permission string

// The permissions of the seed.
const (
	CreateTenants        Permission = "Create tenants"
	ManageTenantSettings Permission = "Manage tenant settings"
	PurgeTenants         Permission = "Purge tenants"
	ManageGateways       Permission = "Manage gateways and routing"
	ManageGatewayTokens  Permission = "Manage gateway API tokens"
	ManageTenantUsers    Permission = "Manage tenant users"
	ViewAnalytics        Permission = "View analytics dashboards"
	ViewCost             Permission = "View cost breakdowns"
	ViewLogs             Permission = "View request logs and traces"
	ViewModelPrices      Permission = "View model prices"
	ManageModelPrices    Permission = "Manage model prices and deprecations"
	ViewAuditLog         Permission = "View the platform audit log"
	TriageClientErrors   Permission = "Triage feedback, reports, and client errors"
)

// grants is the role × permission table of CONTRACT §5.
var grants = map[Role][]Permission{
	Administrator: {CreateTenants, ManageTenantSettings, PurgeTenants, ManageGateways, ManageGatewayTokens,
		ManageTenantUsers, ViewAnalytics, ViewCost, ViewLogs, ViewModelPrices, ManageModelPrices, ViewAuditLog, TriageClientErrors},
	TenantAdministrator: {ManageTenantSettings, ManageGateways, ManageGatewayTokens, ManageTenantUsers,
		ViewAnalytics, ViewCost, ViewLogs, ViewModelPrices},
	AIManager: {ViewAnalytics},
	Finance:   {ViewCost, ViewModelPrices},
}

// Has reports whether role r holds permission p.
func (r Role) Has(p Permission) bool { return slices.Contains(grants[r], p) }
