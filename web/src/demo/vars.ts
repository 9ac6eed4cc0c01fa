// The variables the demo's pages send with each query, for the demo's tests
// (demo.test.ts, schema.test.ts).

export const DEMO_VARS: Record<string, Record<string, unknown>> = {
  Overview: { from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z', interval: 'hour' },
  Gateway: { id: 'gw_demo_prod' },
  GatewayActivity: { id: 'gw_demo_prod', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z', interval: 'hour' },
  GatewayModels: { id: 'gw_demo_prod' },
  GatewayKeys: { id: 'gw_demo_prod' },
  GatewayRules: { id: 'gw_demo_prod' },
  GatewayTokens: { id: 'gw_demo_prod' },
  GatewayHealth: { id: 'gw_demo_prod' },
  GatewayGuardrails: { id: 'gw_demo_prod', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  GatewayTraces: { id: 'gw_demo_prod', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  GatewaySpend: { id: 'gw_demo_prod', from: '2026-10-23T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  GatewayList: { tenantId: 'acme' },
  TenantSpend: { tenantId: 'acme', from: '2026-10-23T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  Analytics: { groupBy: 'provider', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  TenantAnalytics: { tenantId: 'acme', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z' },
  SeriesByGroup: { tenantId: 'acme', groupBy: 'model', interval: 'hour', from: '2026-11-21T12:00:00Z', to: '2026-11-22T12:00:00Z', limit: 5 },
};
