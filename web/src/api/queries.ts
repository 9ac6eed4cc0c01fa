// Every GraphQL operation the dashboard sends (schema.graphql is the
// reference). Each has a name: the demo answers by it, and the server's
// query cache keeps this fixed set parsed.

const BUDGET = 'amountUsd period hard spentUsd remainingUsd resetsAt';
const TOKEN = `id name prefix last4 gatewayId userId expiresAt revoked rateLimit { requestsPerMinute tokensPerMinute } allowedModels budget { ${BUDGET} } lastUsedAt createdAt`;
const GATEWAY = `id tenantId slug name createdAt updatedAt logBodies bodyLogLimitBytes
  cache { enabled ttlSeconds } rateLimit { requestsPerMinute tokensPerMinute } requestTimeoutMs
  retry { maxAttempts backoffMs } routes { name strategy targets { provider model keyAlias weight } }
  circuitBreaker { failureThreshold cooldownSeconds } budget { ${BUDGET} } baseUrl`;
const USER = `id tenantId email name role status createdAt lastSeenAt rateLimit { requestsPerMinute tokensPerMinute maxInFlight } budget { ${BUDGET} }`;
const TENANT = `id name status createdAt updatedAt settings { logRetentionDays logBodiesDefault allowedProviders alertWebhookUrl alertWebhookSecretSet } budget { ${BUDGET} }`;
const SPAN = 'spanId parentId name start durationMs status attributes';
const LATENCY = 'latencyMs { p50 p95 p99 }';
const REF = 'kind id name state';
const GROUP = `key ref { ${REF} } requests errors tokensIn tokensOut costUsd unpricedRequests ${LATENCY}`;
const SCOPE_SPEND = `id name requests costUsd unpricedRequests budget { ${BUDGET} }`;
const SPEND = `from to totalUsd unpricedRequests byModel { provider model requests costUsd tokensIn tokensOut unpricedRequests } byDay { day requests costUsd } budget { ${BUDGET} }
  byGateway { ${SCOPE_SPEND} } byUser { ${SCOPE_SPEND} } byToken { ${SCOPE_SPEND} }`;

const POINT = `ts requests errors tokensIn tokensOut costUsd cached cacheSavedUsd ${LATENCY}`;
const SERIES = 'interval groupBy series { key ref { kind id name state } requests errors costUsd points { ts requests errors costUsd } } other { key requests errors costUsd points { ts requests errors costUsd } }';

export const Q = {
  overview: `query Overview($tenantId: ID, $from: Time, $to: Time, $interval: String) {
    stats(tenantId: $tenantId, from: $from, to: $to) { from to requests errors cached tokensIn tokensOut costUsd unpricedRequests ${LATENCY} cacheHitRate }
    timeseries(tenantId: $tenantId, interval: $interval, from: $from, to: $to) { interval points { ${POINT} } }
  }`,
  tenants: `query TenantList($cursor: String) { tenants(limit: 100, cursor: $cursor) { data { ${TENANT} } nextCursor } }`,
  providers: `query ProviderList { providers { data { id name defaultBaseUrl baseUrlRequired capabilities { chat streaming } } } }`,

  gateways: `query GatewayList($tenantId: ID!, $cursor: String) {
    gateways(tenantId: $tenantId, limit: 50, cursor: $cursor) { data { id tenantId slug name createdAt routes { name } budget { ${BUDGET} } } nextCursor }
  }`,
  gateway: `query Gateway($id: ID!) { gateway(id: $id) { ${GATEWAY} } }`,
  gatewayKeys: `query GatewayKeys($id: ID!) {
    providerKeys(gatewayId: $id) { data { id provider alias last4 baseUrl weight models disabled createdAt } }
    providers { data { id name defaultBaseUrl baseUrlRequired } }
    circuitBreaker(gatewayId: $id) { data { provider keyAlias state consecutiveFailures openedAt nextProbeAt lastError lastErrorAt } }
    models { data { provider id name kind } }
  }`,
  gatewayActivity: `query GatewayActivity($id: ID!, $from: Time, $to: Time, $interval: String) {
    stats(gatewayId: $id, from: $from, to: $to) { from to requests errors upstreamErrors refusals refusalsByReason { reason count } cached costUsd ${LATENCY} }
    timeseries(gatewayId: $id, interval: $interval, from: $from, to: $to) { interval points { ts requests errors tokensIn tokensOut costUsd } }
    analytics(gatewayId: $id, groupBy: "model", from: $from, to: $to) { groups { ${GROUP} } }
    circuitBreaker(gatewayId: $id) { data { provider keyAlias state consecutiveFailures openedAt nextProbeAt lastError lastErrorAt } }
  }`,
  gatewayModels: `query GatewayModels($id: ID!) {
    providerKeys(gatewayId: $id) { data { id provider alias models disabled } }
    models { data { provider id name kind } }
  }`,
  gatewayRules: `query GatewayRules($id: ID!) {
    rules(gatewayId: $id) { data { id name enabled direction kind patterns pii action caseSensitive updatedAt } }
  }`,
  gatewayTokens: `query GatewayTokens($id: ID!, $cursor: String) { gatewayTokens(gatewayId: $id, limit: 50, cursor: $cursor) { data { ${TOKEN} } nextCursor } }`,
  gatewayHealth: `query GatewayHealth($id: ID!) {
    circuitBreaker(gatewayId: $id) { data { provider keyAlias state consecutiveFailures openedAt nextProbeAt lastError lastErrorAt } }
  }`,
  gatewayGuardrails: `query GatewayGuardrails($id: ID!, $from: Time, $to: Time) {
    guardrailStats(gatewayId: $id, from: $from, to: $to) { total byRule { ruleId ruleName action hits } }
    guardrailEvents(gatewayId: $id, from: $from, to: $to, limit: 50) { data { id ts requestId ruleName kind action direction excerpt } nextCursor }
  }`,
  gatewayTraces: `query GatewayTraces($id: ID!, $from: Time, $to: Time, $cursor: String) {
    gatewayTraces(gatewayId: $id, from: $from, to: $to, limit: 50, cursor: $cursor) { data { id requestId start durationMs status model spans } nextCursor }
  }`,
  gatewaySpend: `query GatewaySpend($id: ID!, $from: Time, $to: Time) { gatewaySpend(gatewayId: $id, from: $from, to: $to) { ${SPEND} } }`,

  users: `query UserList($tenantId: ID!, $cursor: String) { users(tenantId: $tenantId, limit: 50, cursor: $cursor) { data { ${USER} } nextCursor } }`,
  user: `query UserDetail($id: ID!) {
    user(id: $id) { ${USER} }
    userGateways(userId: $id) { data { id slug name } }
    userTokens(userId: $id, limit: 50) { data { ${TOKEN} } nextCursor }
  }`,

  logs: `query Logs($filter: LogFilterInput, $sort: LogSortInput, $cursor: String) {
    logs(filter: $filter, sort: $sort, limit: 50, cursor: $cursor) {
      data { id ts tenantId gatewayId tokenId userId provider model route status errorCode errorMessage latencyMs tokensIn tokensOut costUsd priced cache operation gateway { ${REF} } user { ${REF} } token { ${REF} } }
      nextCursor
      totalCount
    }
  }`,
  log: `query LogDetail($id: ID!) {
    log(id: $id) {
      id ts tenantId gatewayId tokenId userId provider model route status errorCode latencyMs ttfbMs tokensIn tokensOut
      cachedTokens cacheWriteTokens cacheWrite1hTokens reasoningTokens costUsd cache attempts ruleHits metadata traceId
      clientIp userAgent requestBody responseBody operation errorMessage priced flags gateway { ${REF} } user { ${REF} } token { ${REF} }
    }
  }`,
  trace: `query TraceDetail($id: ID!) {
    trace(id: $id) {
      id requestId start durationMs
      root { ${SPAN} children { ${SPAN} children { ${SPAN} children { ${SPAN} } } } }
    }
  }`,

  tenantAlerts: `query TenantAlerts($id: ID!, $cursor: String) {
    tenant(id: $id) { id alerts(limit: 50, cursor: $cursor) { data { id scope scopeId period periodStart threshold spentUsd amountUsd at status attempts lastError deliveredAt } nextCursor } }
  }`,
  tenantSpend: `query TenantSpend($tenantId: ID!, $from: Time, $to: Time) { tenantSpend(tenantId: $tenantId, from: $from, to: $to) { ${SPEND} } }`,
  analytics: `query Analytics($tenantId: ID, $groupBy: String, $from: Time, $to: Time) {
    analytics(tenantId: $tenantId, groupBy: $groupBy, from: $from, to: $to) { from to groupBy groups { ${GROUP} } }
  }`,
  analyticsCharts: `query AnalyticsCharts($tenantId: ID, $from: Time, $to: Time, $interval: String) {
    timeseries(tenantId: $tenantId, interval: $interval, from: $from, to: $to) { interval points { ${POINT} } }
    reasons: seriesByGroup(tenantId: $tenantId, groupBy: "error_reason", interval: $interval, from: $from, to: $to, limit: 8) { ${SERIES} }
  }`,
  seriesByGroup: `query SeriesByGroup($tenantId: ID, $groupBy: String!, $interval: String, $from: Time, $to: Time, $limit: Int) {
    seriesByGroup(tenantId: $tenantId, groupBy: $groupBy, interval: $interval, from: $from, to: $to, limit: $limit) { ${SERIES} }
  }`,
  tenantGuardrails: `query TenantGuardrails($tenantId: ID, $from: Time, $to: Time) {
    tenantGuardrailStats(tenantId: $tenantId, from: $from, to: $to) { total points { ts requests } }
  }`,
  tenantAnalytics: `query TenantAnalytics($tenantId: ID!, $from: Time, $to: Time) {
    tenantAnalytics(tenantId: $tenantId, from: $from, to: $to) {
      requests errorRate cacheSavingsUsd topGateways { ${GROUP} } topUsers { ${GROUP} } topModels { ${GROUP} }
    }
  }`,

  prices: `query ModelPrices($provider: String, $cursor: String) {
    modelPrices(provider: $provider, limit: 200, cursor: $cursor) {
      data { provider model inputPerMtok outputPerMtok cachedInputPerMtok deprecatedAt sunsetAt source updatedAt }
      nextCursor
    }
  }`,
  playgroundSearch: `query PlaygroundSearch($q: String) { playgroundSearch(q: $q, limit: 100) { data { gatewayId gatewaySlug tenantId provider model route kind } } }`,
  playgroundRequest: `query PlaygroundRequest($id: ID!) { playgroundRequest(id: $id) { id provider model status tokensIn tokensOut costUsd priced } }`,
  unpricedModels: `query UnpricedModels($tenantId: ID, $from: Time, $to: Time) {
    unpricedModels(tenantId: $tenantId, from: $from, to: $to) { data { provider model requests tokensIn tokensOut } }
  }`,
  audit: `query AuditLog($filter: AuditFilter, $cursor: String) {
    auditLog(filter: $filter, limit: 50, cursor: $cursor) {
      data { id ts actorId actorEmail actorRole tenantId action resourceType resourceId changes outcome ip requestId resource { ${REF} } actor { ${REF} } }
      nextCursor
    }
  }`,
  clientErrors: `query ClientErrors($cursor: String) {
    clientErrors(limit: 50, cursor: $cursor) { data { id ts tenantId userId message stack url release userAgent context count lastSeenAt } nextCursor }
  }`,
  account: `query Account { me { ${USER} } myTokens(limit: 50) { data { ${TOKEN} } nextCursor } }`,
};

export const M = {
  createTenant: `mutation CreateTenant($input: TenantInput!) { createTenant(input: $input) { ${TENANT} } }`,
  updateTenant: `mutation UpdateTenant($id: ID!, $input: TenantPatch!) { updateTenant(id: $id, input: $input) { ${TENANT} } }`,
  setTenantBudget: `mutation SetTenantBudget($id: ID!, $budget: BudgetInput) { updateTenant(id: $id, input: { budget: $budget }) { ${TENANT} } }`,
  deleteTenant: `mutation DeleteTenant($id: ID!, $purge: Boolean) { deleteTenant(id: $id, purge: $purge) }`,

  createGateway: `mutation CreateGateway($tenantId: ID!, $input: GatewayInput!) { createGateway(tenantId: $tenantId, input: $input) { id slug } }`,
  updateGateway: `mutation UpdateGateway($id: ID!, $input: GatewaySettings!) { updateGateway(id: $id, input: $input) { ${GATEWAY} } }`,
  deleteGateway: `mutation DeleteGateway($id: ID!) { deleteGateway(id: $id) }`,
  deleteGatewayBudget: `mutation DeleteGatewayBudget($id: ID!) { deleteGatewayBudget(id: $id) }`,
  addProviderKey: `mutation AddProviderKey($gatewayId: ID!, $input: KeyInput!) { addProviderKey(gatewayId: $gatewayId, input: $input) { id provider alias last4 } }`,
  updateProviderKey: `mutation UpdateProviderKey($gatewayId: ID!, $provider: String!, $alias: String!, $input: KeyPatch!) {
    updateProviderKey(gatewayId: $gatewayId, provider: $provider, alias: $alias, input: $input) { id provider alias weight disabled models }
  }`,
  testProviderKey: `mutation TestProviderKey($gatewayId: ID!, $provider: String!, $alias: String!, $model: String) {
    testProviderKey(gatewayId: $gatewayId, provider: $provider, alias: $alias, model: $model) { ok model latencyMs message }
  }`,
  deleteProviderKey: `mutation DeleteProviderKey($gatewayId: ID!, $provider: String!, $alias: String!) { deleteProviderKey(gatewayId: $gatewayId, provider: $provider, alias: $alias) }`,
  createRule: `mutation CreateRule($gatewayId: ID!, $input: RuleInput!) { createRule(gatewayId: $gatewayId, input: $input) { id } }`,
  updateRule: `mutation UpdateRule($gatewayId: ID!, $input: RulePatch!) { updateRule(gatewayId: $gatewayId, input: $input) { id enabled } }`,
  deleteRule: `mutation DeleteRule($gatewayId: ID!, $id: ID!) { deleteRule(gatewayId: $gatewayId, id: $id) }`,
  createGatewayToken: `mutation CreateGatewayToken($gatewayId: ID!, $input: TokenInput!) { createGatewayToken(gatewayId: $gatewayId, input: $input) { ${TOKEN} secret } }`,
  revokeGatewayToken: `mutation RevokeGatewayToken($gatewayId: ID!, $tokenId: ID!) { updateGatewayToken(gatewayId: $gatewayId, tokenId: $tokenId, input: { revoked: true }) { id revoked } }`,
  setGatewayTokenBudget: `mutation SetGatewayTokenBudget($gatewayId: ID!, $tokenId: ID!, $budget: BudgetInput) {
    updateGatewayToken(gatewayId: $gatewayId, tokenId: $tokenId, input: { budget: $budget }) { ${TOKEN} }
  }`,
  deleteGatewayToken: `mutation DeleteGatewayToken($gatewayId: ID!, $tokenId: ID!) { deleteGatewayToken(gatewayId: $gatewayId, tokenId: $tokenId) }`,

  createUser: `mutation CreateUser($tenantId: ID!, $input: UserInput!) { createUser(tenantId: $tenantId, input: $input) { id } }`,
  updateUser: `mutation UpdateUser($id: ID!, $input: UserPatch!) { updateUser(id: $id, input: $input) { ${USER} } }`,
  deleteUser: `mutation DeleteUser($id: ID!) { deleteUser(id: $id) }`,
  deleteUserBudget: `mutation DeleteUserBudget($id: ID!) { deleteUserBudget(id: $id) }`,
  createUserToken: `mutation CreateUserToken($userId: ID!, $input: TokenInput!) { createUserToken(userId: $userId, input: $input) { ${TOKEN} secret } }`,
  revokeUserToken: `mutation RevokeUserToken($userId: ID!, $tokenId: ID!) { updateUserToken(userId: $userId, tokenId: $tokenId, input: { revoked: true }) { id revoked } }`,
  setUserTokenBudget: `mutation SetUserTokenBudget($userId: ID!, $tokenId: ID!, $budget: BudgetInput) {
    updateUserToken(userId: $userId, tokenId: $tokenId, input: { budget: $budget }) { ${TOKEN} }
  }`,
  deleteUserToken: `mutation DeleteUserToken($userId: ID!, $tokenId: ID!) { deleteUserToken(userId: $userId, tokenId: $tokenId) }`,
  assignGateway: `mutation AssignGateway($userId: ID!, $gatewayId: ID!) { assignGateway(userId: $userId, gatewayId: $gatewayId) }`,
  unassignGateway: `mutation UnassignGateway($userId: ID!, $gatewayId: ID!) { unassignGateway(userId: $userId, gatewayId: $gatewayId) }`,

  createPlaygroundToken: `mutation CreatePlaygroundToken($gatewayId: ID!) { createPlaygroundToken(gatewayId: $gatewayId) { token expiresAt gatewayId tenantId gatewaySlug basePath } }`,
  putModelPrices: `mutation PutModelPrices($input: [PriceInput!]!) { putModelPrices(input: $input) { data { provider model } } }`,
  deleteModelPrice: `mutation DeleteModelPrice($provider: String!, $model: String!) { deleteModelPrice(provider: $provider, model: $model) }`,
  createMyToken: `mutation CreateMyToken($input: TokenInput!) { createMyToken(input: $input) { ${TOKEN} secret } }`,
  deleteMyToken: `mutation DeleteMyToken($tokenId: ID!) { deleteMyToken(tokenId: $tokenId) }`,
  changeMyPassword: `mutation ChangeMyPassword($currentPassword: String!, $newPassword: String!) { changeMyPassword(currentPassword: $currentPassword, newPassword: $newPassword) }`,
};

/** operationName reads the name of the first operation in a document text. */
export function operationName(doc: string): string | null {
  const m = /\b(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(doc);
  return m ? m[1] : null;
}
