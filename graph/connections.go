package graph

import (
	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/store"
)

// The GraphQL connection types are the domain's lists: each is bound in
// gqlgen.yml to one of these aliases, so a resolver returns what the
// admin.Service answered, unchanged.
type (
	TenantConnection          = admin.List[store.Tenant]
	GatewayConnection         = admin.List[store.Gateway]
	ProviderKeyConnection     = admin.List[store.ProviderKey]
	RuleConnection            = admin.List[store.Rule]
	TokenConnection           = admin.List[store.Token]
	UserConnection            = admin.List[store.User]
	ModelPriceConnection      = admin.List[store.ModelPrice]
	ProviderConnection        = admin.List[catalog.Provider]
	ModelConnection           = admin.List[catalog.Model]
	AuditEntryConnection      = admin.List[store.AuditEntry]
	ClientErrorConnection     = admin.List[store.ClientError]
	AlertConnection           = admin.List[store.Alert]
	PlaygroundModelConnection = admin.List[admin.PlaygroundModel]
	UnpricedModelConnection   = admin.List[admin.UnpricedModel]
	LogRecordConnection       = admin.List[analytics.Record]
	TraceSummaryConnection    = admin.List[analytics.TraceSummary]
	GuardrailEventConnection  = admin.List[analytics.GuardrailEvent]
	BreakerStateConnection    = admin.List[admin.BreakerState]
)
