// The shapes of the GraphQL answers the dashboard reads (schema.graphql).

import type { Role } from '../lib/policy';

export interface Connection<T> {
  data: T[];
  nextCursor?: string | null;
  /** The matches of every page, where a listing offers it (logs). */
  totalCount?: number | null;
}
export interface RateLimit {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  /** Requests in flight at once per proxy process (users and gateways); null: unlimited. */
  maxInFlight?: number | null;
}
export interface Budget {
  amountUsd: number;
  period: string;
  hard: boolean;
  spentUsd: number;
  remainingUsd: number;
  resetsAt: string | null;
}
export interface Latency {
  p50: number;
  p95: number;
  p99: number;
}
export interface Stats {
  from: string;
  to: string;
  requests: number;
  errors: number;
  cached: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  latencyMs: Latency;
  cacheHitRate: number;
  /** Requests answered by a model without a price: costUsd counts them as 0. */
  unpricedRequests?: number;
  /** upstreamErrors and refusals split errors (a gateway's Activity asks for them). */
  upstreamErrors?: number;
  refusals?: number;
  refusalsByReason?: { reason: string; count: number }[];
}
export interface Point {
  ts: string;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** Cache hits of the bucket, the cost they saved and its latency percentiles (timeseries only). */
  cached?: number;
  cacheSavedUsd?: number;
  latencyMs?: Latency;
}
/** SeriesPoint is one bucket of one group's series (seriesByGroup). */
export interface SeriesPoint {
  ts: string;
  requests: number;
  errors: number;
  costUsd: number;
}
export interface GroupSeries {
  key: string;
  /** The gateway, user or token the series is (series by gateway, user or token). */
  ref?: ObjectRef | null;
  requests: number;
  errors: number;
  costUsd: number;
  points: SeriesPoint[];
}
/** GroupTimeseries is usage per group over time: the top groups and the rest as other. */
export interface GroupTimeseries {
  interval: string;
  groupBy: string;
  series: GroupSeries[];
  other: GroupSeries | null;
}
export interface Tenant {
  id: string;
  name: string;
  status: string;
  createdAt: string;
  updatedAt?: string;
  settings: { logRetentionDays: number; logBodiesDefault: boolean; allowedProviders: string[]; alertWebhookUrl: string; alertWebhookSecretSet?: boolean };
  budget?: Budget | null;
}
/** Alert is a budget threshold crossed and the delivery of its webhook (CONTRACT §14). */
export interface Alert {
  id: string;
  scope: string;
  scopeId: string;
  period: string;
  periodStart: string | null;
  threshold: number;
  spentUsd: number;
  amountUsd: number;
  at: string;
  status: string;
  attempts: number;
  lastError: string;
  deliveredAt: string | null;
}
export interface Provider {
  id: string;
  name: string;
  defaultBaseUrl: string;
  baseUrlRequired: boolean;
}
export interface RouteTarget {
  provider: string;
  model: string;
  keyAlias: string | null;
  weight: number;
}
export interface Route {
  name: string;
  strategy: string;
  targets: RouteTarget[];
}
export interface Gateway {
  id: string;
  tenantId: string;
  slug: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  logBodies: boolean;
  bodyLogLimitBytes: number;
  cache: { enabled: boolean; ttlSeconds: number };
  rateLimit: RateLimit;
  requestTimeoutMs: number;
  retry: { maxAttempts: number; backoffMs: number };
  routes: Route[];
  circuitBreaker: { failureThreshold: number; cooldownSeconds: number };
  budget: Budget | null;
  /** baseUrl is the inference base URL: --public-url + /v1/{tenant}/{slug}, or the path alone. */
  baseUrl?: string;
}
export interface ProviderKey {
  id: string;
  provider: string;
  alias: string;
  last4: string;
  baseUrl: string;
  weight: number;
  models: string[];
  /** disabled: retired, kept but never used by the proxy. */
  disabled?: boolean;
  createdAt: string;
}
export interface Rule {
  id: string;
  name: string;
  enabled: boolean;
  direction: string;
  kind: string;
  patterns: string[];
  pii: string[];
  action: string;
  caseSensitive: boolean;
  updatedAt: string;
}
export interface Token {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  gatewayId: string | null;
  userId: string | null;
  expiresAt: string | null;
  revoked: boolean;
  rateLimit: RateLimit;
  allowedModels: string[];
  budget?: Budget | null;
  lastUsedAt: string | null;
  createdAt: string;
  secret?: string;
}
export interface User {
  id: string;
  tenantId: string;
  email: string;
  name: string;
  role: Role;
  status: string;
  createdAt: string;
  lastSeenAt: string | null;
  rateLimit: RateLimit;
  budget: Budget | null;
}
export interface BreakerState {
  provider: string;
  keyAlias: string;
  state: string;
  consecutiveFailures: number;
  openedAt: string | null;
  nextProbeAt: string | null;
  /** lastError is the key's last upstream failure this process saw ('' when none). */
  lastError?: string;
  lastErrorAt?: string | null;
}
/** KeyTest is the outcome of a key test (one minimal upstream call). */
export interface KeyTest {
  ok: boolean;
  model: string;
  latencyMs: number;
  message: string;
}
/** CatalogModel is a model of the catalog (GraphQL models). */
export interface CatalogModel {
  provider: string;
  id: string;
  name: string;
  kind: string;
}
export interface LogRecord {
  id: string;
  gateway?: ObjectRef | null;
  user?: ObjectRef | null;
  token?: ObjectRef | null;
  ts: string;
  tenantId: string;
  gatewayId: string;
  tokenId?: string;
  userId: string;
  provider: string;
  model: string;
  route: string;
  status: number;
  errorCode: string;
  /** The message of the error the client got; '' for an answer and on old logs. */
  errorMessage?: string;
  latencyMs: number;
  ttfbMs?: number;
  tokensIn: number;
  tokensOut: number;
  cachedTokens?: number;
  /** Prompt tokens written to the provider's cache (part of tokensIn); cacheWrite1hTokens of them for one hour. */
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  /** Output tokens spent reasoning (part of tokensOut). */
  reasoningTokens?: number;
  costUsd: number;
  cache: string;
  attempts?: number;
  ruleHits?: string[] | null;
  metadata?: Record<string, string> | null;
  traceId?: string;
  clientIp?: string;
  userAgent?: string;
  requestBody?: string;
  responseBody?: string;
  /** The front door (chat, completions, embeddings, responses, messages, count_tokens, models); '' on old logs. */
  operation?: string;
  /** False when the model that answered had no price: costUsd is 0 for want of one. */
  priced?: boolean;
  flags?: string[];
}
export interface Span {
  spanId: string;
  parentId: string;
  name: string;
  start: string;
  durationMs: number;
  status: string;
  attributes?: Record<string, string> | null;
  children?: Span[] | null;
}
export interface Trace {
  id: string;
  requestId: string;
  start: string;
  durationMs: number;
  root: Span | null;
}
export interface TraceSummary {
  id: string;
  requestId: string;
  start: string;
  durationMs: number;
  status: number;
  model: string;
  spans: number;
}
/** ObjectRef is an object a record refers to, named by the server as the caller may see it. */
export interface ObjectRef {
  kind: string;
  id: string;
  /** The name (a user's email); '' unless state is named. */
  name: string;
  /** named, deleted, or hidden (another tenant's, or the role may not read names of its kind). */
  state: string;
}
export interface Group {
  key: string;
  /** The gateway or user the key is (groups by gateway or user). */
  ref?: ObjectRef | null;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  latencyMs: Latency;
  unpricedRequests?: number;
}
export interface Spend {
  from: string;
  to: string;
  totalUsd: number;
  byModel: { provider: string; model: string; requests: number; costUsd: number; tokensIn?: number; tokensOut?: number; unpricedRequests?: number }[];
  byDay: { day: string; requests: number; costUsd: number }[];
  budget: Budget | null;
  /** Tenant spend only, costliest first. */
  byGateway?: ScopeSpend[] | null;
  byUser?: ScopeSpend[] | null;
  byToken?: ScopeSpend[] | null;
  /** Requests answered without a price: totalUsd counts them as 0. */
  unpricedRequests?: number;
}
/** ScopeSpend is the cost of one gateway, user or token, with its budget. id is '' for requests without one. */
export interface ScopeSpend {
  id: string;
  name: string;
  requests: number;
  costUsd: number;
  budget: Budget | null;
  unpricedRequests?: number;
}
export interface TenantAnalysis {
  requests: number;
  errorRate: number;
  cacheSavingsUsd: number;
  topGateways: Group[];
  topUsers: Group[];
  topModels: Group[];
}
export interface ModelPrice {
  provider: string;
  model: string;
  inputPerMtok: number;
  outputPerMtok: number;
  cachedInputPerMtok: number;
  deprecatedAt: string | null;
  sunsetAt: string | null;
  source: string;
  updatedAt: string;
}
export interface PlaygroundModel {
  gatewayId: string;
  gatewaySlug: string;
  tenantId: string;
  provider: string;
  model: string;
  route: string;
  /** chat, embedding or completion. */
  kind?: string;
}
/** UnpricedModel is a model that answered requests without a price and still has none. */
export interface UnpricedModel {
  provider: string;
  model: string;
  requests: number;
  tokensIn: number;
  tokensOut: number;
}
/** PlaygroundRequest is the served target and cost of one of the caller's own requests. */
export interface PlaygroundRequest {
  id: string;
  provider: string;
  model: string;
  status: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  priced: boolean;
}
export interface PlaygroundToken {
  token: string;
  expiresAt: string;
  gatewayId: string;
  tenantId: string;
  gatewaySlug: string;
  basePath: string;
}
export interface AuditEntry {
  id: string;
  /** The resource named (null for types without names) and the actor as a user of today. */
  resource?: ObjectRef | null;
  actor?: ObjectRef | null;
  ts: string;
  actorId: string;
  actorEmail: string;
  actorRole: string;
  tenantId: string;
  action: string;
  resourceType: string;
  resourceId: string;
  changes: unknown;
  outcome: string;
  ip: string;
  requestId: string;
}
export interface ClientErrorRow {
  id: string;
  ts: string;
  tenantId: string;
  userId: string;
  message: string;
  stack: string;
  url: string;
  release: string;
  userAgent: string;
  context: unknown;
  count: number;
  lastSeenAt: string;
}
export interface GuardrailEvent {
  id: string;
  ts: string;
  requestId: string;
  ruleName: string;
  kind: string;
  action: string;
  direction: string;
  excerpt: string;
}
