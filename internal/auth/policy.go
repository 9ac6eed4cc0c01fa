package auth

import (
	"net/http"

	"github.com/sluicehq/sluice/internal/apierr"
)

// Op is one admin operation. Every REST shim and GraphQL field maps to
// exactly one Op, and admin.Service checks it before doing anything.
type Op string

// The admin operations: one per row (and method) of the endpoint × role table.
const (
	OpTenantList          Op = "tenant.list"
	OpTenantRead          Op = "tenant.read"
	OpTenantCreate        Op = "tenant.create"
	OpTenantUpdate        Op = "tenant.update"
	OpTenantDelete        Op = "tenant.delete"
	OpTenantPurge         Op = "tenant.purge"
	OpGatewayList         Op = "gateway.list"
	OpGatewayCreate       Op = "gateway.create"
	OpGatewayRead         Op = "gateway.read"
	OpGatewayUpdate       Op = "gateway.update"
	OpGatewayDelete       Op = "gateway.delete"
	OpGatewayBudgetDelete Op = "gateway.budget.delete"
	OpKeyList             Op = "key.list"
	OpKeyCreate           Op = "key.create"
	OpKeyDelete           Op = "key.delete"
	OpKeyUpdate           Op = "key.update"
	OpKeyTest             Op = "key.test"
	OpRuleList            Op = "rule.list"
	OpRuleCreate          Op = "rule.create"
	OpRuleUpdate          Op = "rule.update"
	OpRuleDelete          Op = "rule.delete"
	OpGatewayTokenList    Op = "gateway_token.list"
	OpGatewayTokenCreate  Op = "gateway_token.create"
	OpGatewayTokenUpdate  Op = "gateway_token.update"
	OpGatewayTokenDelete  Op = "gateway_token.delete"
	OpUserList            Op = "user.list"
	OpUserCreate          Op = "user.create"
	OpUserRead            Op = "user.read"
	OpUserUpdate          Op = "user.update"
	OpUserDelete          Op = "user.delete"
	OpUserBudgetDelete    Op = "user.budget.delete"
	OpUserTokenList       Op = "user_token.list"
	OpUserTokenCreate     Op = "user_token.create"
	OpUserTokenUpdate     Op = "user_token.update"
	OpUserTokenDelete     Op = "user_token.delete"
	OpUserGatewayList     Op = "user_gateway.list"
	OpUserGatewayAssign   Op = "user_gateway.assign"
	OpUserGatewayUnassign Op = "user_gateway.unassign"
	OpStats               Op = "stats.read"
	OpStatsTimeseries     Op = "stats.timeseries"
	OpStatsAnalytics      Op = "stats.analytics"
	OpGatewaySpend        Op = "gateway.spend"
	OpTenantSpend         Op = "tenant.spend"
	OpTenantAnalytics     Op = "tenant.analytics"
	OpTenantAlerts        Op = "tenant.alerts"
	OpLogList             Op = "log.list"
	OpLogRead             Op = "log.read"
	OpTraceList           Op = "trace.list"
	OpTraceRead           Op = "trace.read"
	OpPlaygroundToken     Op = "playground.token"
	OpPlaygroundSearch    Op = "playground.search"
	OpPlaygroundTrace     Op = "playground.trace"
	OpModelPriceList      Op = "model_price.list"
	OpModelPricePut       Op = "model_price.put"
	OpModelPriceDelete    Op = "model_price.delete"
	OpProviderList        Op = "provider.list"
	OpModelList           Op = "model.list"
	OpGuardrailStats      Op = "guardrail.stats"
	OpGuardrailEvents     Op = "guardrail.events"
	OpCircuitBreaker      Op = "circuit_breaker.read"
	OpAuditLog            Op = "audit_log.read"
	OpClientErrorCreate   Op = "client_error.create"
	OpClientErrorList     Op = "client_error.list"
	OpMeRead              Op = "me.read"
	OpMeTokenList         Op = "me.token.list"
	OpMeTokenCreate       Op = "me.token.create"
	OpMeTokenDelete       Op = "me.token.delete"
	// Extensions of issue 19: the models served without a price (the price
	// editor's list), the cost of one of the caller's own playground
	// requests, and the caller's own password change.
	OpModelPriceUnpriced Op = "model_price.unpriced"
	OpPlaygroundRequest  Op = "playground.request"
	OpMePasswordChange   Op = "me.password.change"
)

// rule is who may perform an Op: the permission it requires (also named in
// the 403 message), or, for operations the seed names no permission for,
// the explicit set of roles of the normative table.
type rule struct {
	perm  Permission
	roles []Role
}

var (
	adminTA     = []Role{Administrator, TenantAdministrator}
	allButDemo  = []Role{Administrator, TenantAdministrator, AIManager, Finance, Member, Viewer}
	playground  = []Role{Administrator, TenantAdministrator, Member}
	accountable = []Role{Administrator, TenantAdministrator, AIManager, Member}
	reporters   = []Role{Administrator, TenantAdministrator, Finance, Member, Viewer}
)

// policy is the endpoint × role table of CONTRACT §5, as data. The table
// test in this package and the transport tests check every cell.
var policy = map[Op]rule{
	OpTenantList:          {roles: adminTA},
	OpTenantRead:          {roles: adminTA},
	OpTenantCreate:        {perm: CreateTenants},
	OpTenantUpdate:        {perm: ManageTenantSettings},
	OpTenantDelete:        {perm: ManageTenantSettings, roles: []Role{Administrator}},
	OpTenantPurge:         {perm: PurgeTenants},
	OpGatewayList:         {perm: ManageGateways},
	OpGatewayCreate:       {perm: ManageGateways},
	OpGatewayRead:         {perm: ManageGateways},
	OpGatewayUpdate:       {perm: ManageGateways},
	OpGatewayDelete:       {perm: ManageGateways},
	OpGatewayBudgetDelete: {perm: ManageGateways},
	OpKeyList:             {perm: ManageGateways},
	OpKeyCreate:           {perm: ManageGateways},
	OpKeyDelete:           {perm: ManageGateways},
	OpKeyUpdate:           {perm: ManageGateways},
	OpKeyTest:             {perm: ManageGateways},
	OpRuleList:            {perm: ManageGateways},
	OpRuleCreate:          {perm: ManageGateways},
	OpRuleUpdate:          {perm: ManageGateways},
	OpRuleDelete:          {perm: ManageGateways},
	OpGatewayTokenList:    {perm: ManageGatewayTokens},
	OpGatewayTokenCreate:  {perm: ManageGatewayTokens},
	OpGatewayTokenUpdate:  {perm: ManageGatewayTokens},
	OpGatewayTokenDelete:  {perm: ManageGatewayTokens},
	OpUserList:            {perm: ManageTenantUsers},
	OpUserCreate:          {perm: ManageTenantUsers},
	OpUserRead:            {perm: ManageTenantUsers},
	OpUserUpdate:          {perm: ManageTenantUsers},
	OpUserDelete:          {perm: ManageTenantUsers},
	OpUserBudgetDelete:    {perm: ManageTenantUsers},
	OpUserTokenList:       {perm: ManageTenantUsers},
	OpUserTokenCreate:     {perm: ManageTenantUsers},
	OpUserTokenUpdate:     {perm: ManageTenantUsers},
	OpUserTokenDelete:     {perm: ManageTenantUsers},
	OpUserGatewayList:     {perm: ManageTenantUsers},
	OpUserGatewayAssign:   {perm: ManageTenantUsers},
	OpUserGatewayUnassign: {perm: ManageTenantUsers},
	OpStats:               {roles: allButDemo},
	OpStatsTimeseries:     {roles: allButDemo},
	OpStatsAnalytics:      {perm: ViewAnalytics},
	OpGatewaySpend:        {perm: ViewCost},
	OpTenantSpend:         {perm: ViewCost},
	OpTenantAnalytics:     {perm: ManageTenantSettings},
	OpTenantAlerts:        {perm: ManageTenantSettings},
	OpLogList:             {perm: ViewLogs},
	OpLogRead:             {perm: ViewLogs},
	OpTraceList:           {perm: ViewLogs},
	OpTraceRead:           {perm: ViewLogs},
	OpPlaygroundToken:     {roles: playground},
	OpPlaygroundSearch:    {roles: playground},
	OpPlaygroundTrace:     {perm: ViewLogs},
	OpModelPriceList:      {perm: ViewModelPrices},
	OpModelPricePut:       {perm: ManageModelPrices},
	OpModelPriceDelete:    {perm: ManageModelPrices},
	OpProviderList:        {roles: allButDemo},
	OpModelList:           {roles: allButDemo},
	OpGuardrailStats:      {roles: adminTA},
	OpGuardrailEvents:     {roles: adminTA},
	OpCircuitBreaker:      {roles: adminTA},
	OpAuditLog:            {perm: ViewAuditLog},
	OpClientErrorCreate:   {roles: reporters},
	OpClientErrorList:     {perm: TriageClientErrors},
	OpMeRead:              {roles: accountable},
	OpMeTokenList:         {roles: accountable},
	OpMeTokenCreate:       {roles: accountable},
	OpMeTokenDelete:       {roles: accountable},
	OpModelPriceUnpriced:  {perm: ViewModelPrices},
	OpPlaygroundRequest:   {roles: playground},
	// Every role that signs in with a password changes its own, but the
	// Demo User: a demo account is shared.
	OpMePasswordChange: {roles: allButDemo},
}

// reads are the operations that change nothing: every GET of the REST
// shims and every GraphQL query field. Every other operation, and any Op
// missing from this set, is a write (the safe side: a write is audited when
// denied, and a write on a user or what it owns is held to the rank rule).
var reads = map[Op]bool{
	OpTenantList: true, OpTenantRead: true, OpGatewayList: true, OpGatewayRead: true,
	OpKeyList: true, OpRuleList: true, OpGatewayTokenList: true,
	OpUserList: true, OpUserRead: true, OpUserTokenList: true, OpUserGatewayList: true,
	OpStats: true, OpStatsTimeseries: true, OpStatsAnalytics: true, OpGatewaySpend: true,
	OpTenantSpend: true, OpTenantAnalytics: true, OpTenantAlerts: true, OpLogList: true, OpLogRead: true,
	OpTraceList: true, OpTraceRead: true, OpPlaygroundSearch: true, OpPlaygroundTrace: true,
	OpModelPriceList: true, OpProviderList: true, OpModelList: true, OpGuardrailStats: true,
	OpGuardrailEvents: true, OpCircuitBreaker: true, OpAuditLog: true, OpClientErrorList: true,
	OpMeRead: true, OpMeTokenList: true, OpModelPriceUnpriced: true, OpPlaygroundRequest: true,
}

// Writes reports whether op changes state. An unknown Op is a write.
func (op Op) Writes() bool { return !reads[op] }

// Ops returns every known operation.
func Ops() []Op {
	out := make([]Op, 0, len(policy))
	for op := range policy {
		out = append(out, op)
	}
	return out
}

// Allowed reports whether role r may perform op. An Op missing from the
// policy is denied to everyone.
func Allowed(r Role, op Op) bool {
	ru, ok := policy[op]
	if !ok || !r.Valid() {
		return false
	}
	if ru.roles != nil {
		for _, x := range ru.roles {
			if x == r {
				return ru.perm == "" || r.Has(ru.perm)
			}
		}
		return false
	}
	return r.Has(ru.perm)
}

// Check returns a 403 *apierr.Error when role r may not perform op.
func Check(r Role, op Op) error {
	if Allowed(r, op) {
		return nil
	}
	ru := policy[op]
	if ru.perm != "" && !r.Has(ru.perm) {
		return apierr.Forbidden(string(ru.perm))
	}
	return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "the %s role may not perform %s", r, op)
}
