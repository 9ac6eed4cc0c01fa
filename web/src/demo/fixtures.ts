// Sample data of the read-only demo (the Demo User's view of the
// interface). Everything here is made up, generated deterministically, and
// bundled: the demo calls no admin endpoint at all.

import type {
  Budget,
  BreakerState,
  Gateway,
  Group,
  GroupSeries,
  GroupTimeseries,
  LogRecord,
  ObjectRef,
  ModelPrice,
  Point,
  ProviderKey,
  Rule,
  ScopeSpend,
  Span,
  Spend,
  Token,
  Trace,
  TraceSummary,
} from '../api/types';

/** rng is a small deterministic generator (a 32-bit LCG), so the demo looks the same on every load. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const T0 = '2026-01-05T09:00:00Z';

const budget = (amount: number, spent: number, period = 'monthly') => ({
  amountUsd: amount,
  period,
  hard: true,
  spentUsd: spent,
  remainingUsd: Math.max(0, amount - spent),
  resetsAt: new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString(),
});

export const demoGateways: Gateway[] = [
  {
    id: 'gw_demo_prod',
    tenantId: 'acme',
    slug: 'prod',
    baseUrl: '/v1/acme/prod',
    name: 'Production',
    createdAt: T0,
    updatedAt: T0,
    logBodies: true,
    bodyLogLimitBytes: 65536,
    cache: { enabled: true, ttlSeconds: 600 },
    rateLimit: { requestsPerMinute: 600, tokensPerMinute: 1_000_000 },
    requestTimeoutMs: 60000,
    retry: { maxAttempts: 3, backoffMs: 250 },
    routes: [
      {
        name: 'smart',
        strategy: 'fallback',
        targets: [
          { provider: 'openai', model: 'gpt-4o', keyAlias: null, weight: 1 },
          { provider: 'anthropic', model: 'claude-sonnet-4-5', keyAlias: null, weight: 1 },
        ],
      },
      {
        name: 'fast',
        strategy: 'loadbalance',
        targets: [
          { provider: 'openai', model: 'gpt-4o-mini', keyAlias: null, weight: 3 },
          { provider: 'groq', model: 'llama-3.3-70b-versatile', keyAlias: null, weight: 1 },
        ],
      },
    ],
    circuitBreaker: { failureThreshold: 5, cooldownSeconds: 30 },
    budget: budget(500, 187.42),
  },
  {
    id: 'gw_demo_staging',
    tenantId: 'acme',
    slug: 'staging',
    baseUrl: '/v1/acme/staging',
    name: 'Staging',
    createdAt: T0,
    updatedAt: T0,
    logBodies: true,
    bodyLogLimitBytes: 65536,
    cache: { enabled: false, ttlSeconds: 300 },
    rateLimit: { requestsPerMinute: 60, tokensPerMinute: null },
    requestTimeoutMs: 120000,
    retry: { maxAttempts: 2, backoffMs: 200 },
    routes: [],
    circuitBreaker: { failureThreshold: 5, cooldownSeconds: 30 },
    budget: budget(50, 41.9),
  },
];

export const demoKeys: ProviderKey[] = [
  { id: 'key_demo_1', provider: 'openai', alias: 'main', last4: 'x7Qa', baseUrl: '', weight: 1, models: ['gpt-4o', 'gpt-4o-mini'], disabled: false, createdAt: T0 },
  { id: 'key_demo_2', provider: 'anthropic', alias: 'main', last4: 'P0s2', baseUrl: '', weight: 1, models: ['claude-sonnet-4-5'], disabled: false, createdAt: T0 },
  { id: 'key_demo_3', provider: 'groq', alias: 'backup', last4: '9fGh', baseUrl: '', weight: 1, models: [], disabled: false, createdAt: T0 },
];

export const demoRules: Rule[] = [
  { id: 'rule_demo_1', name: 'No PII out', enabled: true, direction: 'request', kind: 'pii', patterns: [], pii: ['email', 'credit_card'], action: 'redact', caseSensitive: false, updatedAt: T0 },
  { id: 'rule_demo_2', name: 'Block internal code names', enabled: true, direction: 'both', kind: 'keyword', patterns: ['project-falcon'], pii: [], action: 'block', caseSensitive: false, updatedAt: T0 },
  { id: 'rule_demo_3', name: 'Flag secrets', enabled: false, direction: 'response', kind: 'pii', patterns: [], pii: ['secret_key'], action: 'flag', caseSensitive: false, updatedAt: T0 },
];

const rl = { requestsPerMinute: null, tokensPerMinute: null };
export const demoTokens: Token[] = [
  { id: 'tok_demo_1', name: 'backend', prefix: 'sk-sl-Ab3d', last4: 'k9Zq', gatewayId: 'gw_demo_prod', userId: null, expiresAt: null, revoked: false, rateLimit: rl, allowedModels: [], lastUsedAt: T0, createdAt: T0, budget: null },
  { id: 'tok_demo_2', name: 'ci', prefix: 'sk-sl-Q1w2', last4: 'Er4t', gatewayId: 'gw_demo_prod', userId: null, expiresAt: '2027-06-30T00:00:00Z', revoked: false, rateLimit: { requestsPerMinute: 60, tokensPerMinute: 100000 }, allowedModels: ['gpt-4o-mini'], lastUsedAt: null, createdAt: T0, budget: null },
  { id: 'tok_demo_3', name: 'old laptop', prefix: 'sk-sl-Zx9c', last4: 'Vb8n', gatewayId: 'gw_demo_prod', userId: null, expiresAt: null, revoked: true, rateLimit: rl, allowedModels: [], lastUsedAt: T0, createdAt: T0, budget: null },
];

export const demoBreakers: BreakerState[] = [
  { provider: 'openai', keyAlias: 'main', state: 'closed', consecutiveFailures: 0, openedAt: null, nextProbeAt: null, lastError: '', lastErrorAt: null },
  { provider: 'anthropic', keyAlias: 'main', state: 'closed', consecutiveFailures: 1, openedAt: null, nextProbeAt: null, lastError: '', lastErrorAt: null },
  {
    provider: 'groq',
    keyAlias: 'backup',
    state: 'open',
    consecutiveFailures: 5,
    openedAt: new Date(Date.now() - 20_000).toISOString(),
    nextProbeAt: new Date(Date.now() + 10_000).toISOString(),
    lastError: 'upstream answered 503: service overloaded',
    lastErrorAt: new Date(Date.now() - 20_000).toISOString(),
  },
];

const MODELS: [string, string, number, number][] = [
  ['openai', 'gpt-4o', 2.5, 10],
  ['openai', 'gpt-4o-mini', 0.15, 0.6],
  ['anthropic', 'claude-sonnet-4-5', 3, 15],
  ['groq', 'llama-3.3-70b-versatile', 0.59, 0.79],
];

/** demoPoints makes a time series over [from, to) with a daily rhythm. */
export function demoPoints(from: string, to: string, interval: string): Point[] {
  const step = interval === 'day' ? 86_400_000 : interval === 'minute' ? 60_000 : 3_600_000;
  const a = Math.floor(new Date(from).getTime() / step) * step;
  const b = new Date(to).getTime();
  const r = rng(7);
  const out: Point[] = [];
  for (let t = a; t < b && out.length < 2000; t += step) {
    const hour = new Date(t).getUTCHours();
    const day = 0.35 + 0.65 * Math.max(0, Math.sin(((hour - 6) / 24) * 2 * Math.PI));
    const scale = interval === 'day' ? 24 * 0.6 : 1;
    const requests = Math.round((120 + 380 * day + 60 * r()) * scale);
    const errors = Math.round(requests * (0.004 + 0.012 * r()));
    const tokensIn = requests * (700 + Math.round(300 * r()));
    const tokensOut = requests * (180 + Math.round(90 * r()));
    const costUsd = +(tokensIn * 0.9e-6 + tokensOut * 3.6e-6).toFixed(4);
    const cached = Math.round(requests * (0.1 + 0.08 * r()));
    const p50 = Math.round(650 + 300 * day + 80 * r());
    out.push({
      ts: new Date(t).toISOString(),
      requests,
      errors,
      tokensIn,
      tokensOut,
      costUsd,
      cached,
      cacheSavedUsd: +((costUsd * cached) / requests).toFixed(4),
      latencyMs: { p50, p95: Math.round(p50 * (2.6 + 0.4 * r())), p99: Math.round(p50 * (4.4 + 0.8 * r())) },
    });
  }
  return out;
}

export function demoStats(from: string, to: string) {
  const pts = demoPoints(from, to, 'hour');
  const sum = (k: keyof Point) => pts.reduce((s, p) => s + (p[k] as number), 0);
  const requests = sum('requests');
  return {
    from,
    to,
    requests,
    errors: sum('errors'),
    cached: Math.round(requests * 0.14),
    tokensIn: sum('tokensIn'),
    tokensOut: sum('tokensOut'),
    costUsd: +sum('costUsd').toFixed(2),
    latencyMs: { p50: 812, p95: 2390, p99: 4120 },
    cacheHitRate: 0.14,
    unpricedRequests: 0,
  };
}

function group(key: string, share: number, requests: number, cost: number, r: () => number): Group {
  const n = Math.round(requests * share);
  return {
    key,
    requests: n,
    errors: Math.round(n * (0.005 + 0.01 * r())),
    tokensIn: n * 820,
    tokensOut: n * 210,
    costUsd: +(cost * share).toFixed(2),
    latencyMs: { p50: 600 + Math.round(500 * r()), p95: 1800 + Math.round(1200 * r()), p99: 3500 + Math.round(1500 * r()) },
    unpricedRequests: 0,
  };
}

/** DEMO_NAMES are the names the server would give the demo's objects (ObjectRef). */
const DEMO_NAMES: Record<string, [kind: string, name: string]> = {
  gw_demo_prod: ['gateway', 'Production'],
  gw_demo_staging: ['gateway', 'Staging'],
  usr_demo_dana: ['user', 'dana@acme.example'],
  usr_demo_lee: ['user', 'lee@acme.example'],
  usr_demo_sam: ['user', 'sam@acme.example'],
  tok_demo_1: ['token', 'backend'],
  tok_demo_2: ['token', 'ci'],
};

/** demoRef names a demo object as the server would, or null for an id that is none. */
export function demoRef(id: string): ObjectRef | null {
  const n = DEMO_NAMES[id];
  return n ? { kind: n[0], id, name: n[1], state: 'named' } : null;
}

export function demoGroups(groupBy: string, from: string, to: string): Group[] {
  const s = demoStats(from, to);
  const r = rng(groupBy.length * 31);
  const keys: Record<string, [string, number][]> = {
    model: [['openai/gpt-4o-mini', 0.46], ['openai/gpt-4o', 0.27], ['anthropic/claude-sonnet-4-5', 0.19], ['groq/llama-3.3-70b-versatile', 0.08]],
    provider: [['openai', 0.73], ['anthropic', 0.19], ['groq', 0.08]],
    gateway: [['gw_demo_prod', 0.86], ['gw_demo_staging', 0.14]],
    user: [['usr_demo_dana', 0.41], ['usr_demo_lee', 0.33], ['usr_demo_sam', 0.26]],
    status: [['200', 0.985], ['429', 0.009], ['502', 0.006]],
    error_code: [['', 0.985], ['rate_limit_exceeded', 0.009], ['upstream_error', 0.006]],
  };
  return (keys[groupBy] ?? keys.model).map(([k, sh]) => ({ ...group(k, sh, s.requests, s.costUsd, r), ref: groupBy === 'gateway' || groupBy === 'user' ? demoRef(k) : null }));
}

export function demoSpend(from: string, to: string, withBudget: boolean): Spend {
  const s = demoStats(from, to);
  const days = demoPoints(from, to, 'day');
  return {
    from,
    to,
    totalUsd: s.costUsd,
    unpricedRequests: 0,
    byModel: MODELS.map(([p, m], i) => {
      const requests = Math.round(s.requests * [0.27, 0.46, 0.19, 0.08][i]);
      return { provider: p, model: m, requests, costUsd: +(s.costUsd * [0.52, 0.12, 0.33, 0.03][i]).toFixed(2), tokensIn: requests * 820, tokensOut: requests * 210, unpricedRequests: 0 };
    }),
    byDay: days.map((d) => ({ day: d.ts.slice(0, 10), requests: d.requests, costUsd: d.costUsd })),
    budget: withBudget ? demoGateways[0].budget : budget(1000, 229.32),
    // gatewaySpend answers no breakdown by gateway, token and user (null), as the server does.
    ...(withBudget ? { byGateway: null, byToken: null, byUser: null } : demoBreakdown(s.requests, s.costUsd)),
  };
}

/** demoBreakdown splits a tenant's spend by gateway, token and user in fixed shares. */
function demoBreakdown(requests: number, costUsd: number): Pick<Spend, 'byGateway' | 'byToken' | 'byUser'> {
  const rows = (items: [string, string, number, Budget | null][]): ScopeSpend[] =>
    items.map(([id, name, sh, b]) => ({ id, name, requests: Math.round(requests * sh), costUsd: +(costUsd * sh).toFixed(2), budget: b, unpricedRequests: 0 }));
  return {
    byGateway: rows([
      ['gw_demo_prod', 'Production', 0.82, demoGateways[0].budget],
      ['gw_demo_staging', 'Staging', 0.18, demoGateways[1].budget],
    ]),
    byToken: rows([
      ['tok_demo_1', 'backend', 0.61, budget(300, 251.7, 'weekly')],
      ['tok_demo_2', 'ci', 0.21, budget(100, 104.2, 'weekly')],
      ['tok_demo_user', 'dana laptop', 0.18, null],
    ]),
    byUser: rows([
      ['', '', 0.82, null],
      ['usr_demo_dana', 'dana@acme.example', 0.18, budget(200, 41.3)],
    ]),
  };
}

export function demoLogs(): LogRecord[] {
  const r = rng(42);
  const now = Date.now();
  return Array.from({ length: 40 }, (_, i) => {
    const [provider, model, pin, pout] = MODELS[Math.floor(r() * MODELS.length)];
    const failed = r() < 0.08;
    const tokensIn = 200 + Math.round(r() * 1500);
    const tokensOut = failed ? 0 : 40 + Math.round(r() * 500);
    const hex = (n: number) => n.toString(16).padStart(12, '0');
    return {
      id: `0194d3a1-7c1e-7b20-9d4e-${hex(0x3f1a2b3c4d00 + i)}`,
      ts: new Date(now - i * 97_000 - Math.round(r() * 30_000)).toISOString(),
      tenantId: 'acme',
      gatewayId: 'gw_demo_prod',
      userId: ['usr_demo_dana', 'usr_demo_lee', 'usr_demo_sam'][i % 3],
      provider,
      model,
      route: i % 4 === 0 ? 'smart' : '',
      status: failed ? (r() < 0.5 ? 429 : 502) : 200,
      errorCode: failed ? 'upstream_error' : '',
      tokenId: ['tok_demo_1', 'tok_demo_2'][i % 2],
      latencyMs: 300 + Math.round(r() * 2500),
      tokensIn,
      tokensOut,
      costUsd: failed ? 0 : +((tokensIn * pin + tokensOut * pout) / 1e6).toFixed(7),
      cache: i % 7 === 0 ? 'HIT' : 'MISS',
      operation: 'chat',
      gateway: demoRef('gw_demo_prod'),
      user: demoRef(['usr_demo_dana', 'usr_demo_lee', 'usr_demo_sam'][i % 3]),
      token: demoRef(['tok_demo_1', 'tok_demo_2'][i % 2]),
      priced: true,
      flags: [] as string[],
    };
  }).map((l) => ({ ...l, errorMessage: l.status === 429 ? 'The provider is rate limiting this key: try again later.' : l.status === 502 ? 'The provider failed to answer.' : '' }));
}

export function demoLog(id: string): LogRecord | null {
  if (typeof id !== 'string') return null;
  const l = demoLogs().find((x) => x.id === id);
  if (!l) return null;
  return {
    ...l,
    tokenId: 'tok_demo_1',
    token: demoRef('tok_demo_1'),
    ttfbMs: Math.round(l.latencyMs * 0.4),
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
    attempts: l.route ? 2 : 1,
    ruleHits: l.route ? ['rule_demo_1'] : [],
    metadata: { team: 'search', env: 'prod' },
    traceId: 'trace-' + id,
    clientIp: '203.0.113.7',
    userAgent: 'OpenAI/Python 1.54.0',
    requestBody: JSON.stringify({ model: l.model, messages: [{ role: 'user', content: 'Summarise the attached meeting notes in three bullet points. My email is [REDACTED:email].' }] }),
    responseBody: JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '• Launch moved to March.\n• Budget approved.\n• Hiring two engineers.' }, finish_reason: 'stop' }], usage: { prompt_tokens: l.tokensIn, completion_tokens: l.tokensOut } }),
  };
}

export function demoTrace(id: string): Trace | null {
  if (typeof id !== 'string') return null;
  const l = demoLog(id.replace(/^trace-/, ''));
  if (!l) return null;
  const t0 = new Date(l.ts).getTime() - l.latencyMs;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const span = (sid: string, name: string, start: number, dur: number, status: string, attrs: Record<string, string>, children: Span[] = []): Span => ({
    spanId: sid,
    parentId: '',
    name,
    start: at(start),
    durationMs: dur,
    status,
    attributes: attrs,
    children,
  });
  const two = (l.attempts ?? 1) > 1;
  const first = two ? span('s2', 'attempt 1 anthropic/claude-sonnet-4-5', 4, 180, 'error', { 'http.status_code': '503', 'sluice.key_alias': 'main' }) : null;
  const last = span('s3', `attempt ${two ? 2 : 1} ${l.provider}/${l.model}`, two ? 420 : 6, l.latencyMs - (two ? 430 : 12), 'ok', { 'http.status_code': String(l.status), 'sluice.key_alias': 'main' });
  const root = span('s1', 'POST /v1/acme/prod/compat/chat/completions', 0, l.latencyMs, l.status < 400 ? 'ok' : 'error', { 'sluice.gateway': 'prod', 'sluice.route': l.route || '—' }, [
    span('s0', 'content rules (request)', 1, 2, 'ok', { 'sluice.rules': '2' }),
    ...(first ? [first] : []),
    last,
  ]);
  return { id: l.traceId!, requestId: l.id, start: at(0), durationMs: l.latencyMs, root };
}

export function demoTraceSummaries(): TraceSummary[] {
  return demoLogs().map((l) => ({ id: 'trace-' + l.id, requestId: l.id, start: l.ts, durationMs: l.latencyMs, status: l.status, model: l.model, spans: l.route ? 4 : 3 }));
}

export const demoPrices: ModelPrice[] = [
  ...MODELS.map(([provider, model, i, o]) => ({ provider, model, inputPerMtok: i, outputPerMtok: o, cachedInputPerMtok: i / 2, deprecatedAt: null, sunsetAt: null, source: 'seed', updatedAt: T0 })),
  { provider: 'openai', model: 'gpt-4-turbo', inputPerMtok: 10, outputPerMtok: 30, cachedInputPerMtok: 0, deprecatedAt: '2026-01-01T00:00:00Z', sunsetAt: '2026-12-31T00:00:00Z', source: 'admin', updatedAt: T0 },
];

/** demoCatalog is the catalog's chat models of the demo's providers (GraphQL models). */
export const demoCatalog = MODELS.map(([provider, id]) => ({ provider, id, name: id, kind: 'chat' }));

export const demoProviders = [
  { id: 'openai', name: 'OpenAI', defaultBaseUrl: 'https://api.openai.com/v1', baseUrlRequired: false, capabilities: { chat: true, streaming: true } },
  { id: 'anthropic', name: 'Anthropic', defaultBaseUrl: 'https://api.anthropic.com', baseUrlRequired: false, capabilities: { chat: true, streaming: true } },
  { id: 'groq', name: 'Groq', defaultBaseUrl: 'https://api.groq.com/openai/v1', baseUrlRequired: false, capabilities: { chat: true, streaming: true } },
];

/** demoGroupSeries is usage per group over time: the demo groups' shares of each bucket. */
export function demoGroupSeries(groupBy: string, from: string, to: string, interval: string, limit: number): GroupTimeseries {
  const pts = demoPoints(from, to, interval);
  const shares: [string, number, number][] =
    groupBy === 'error_reason'
      ? [
          ['upstream', 0.55, 0],
          ['rate_limit_exceeded', 0.3, 0],
          ['budget_exceeded', 0.1, 0],
          ['content_blocked', 0.05, 0],
        ]
      : demoGroups(groupBy, from, to).map((g, i, all) => [g.key, g.requests / all.reduce((t, x) => t + x.requests, 0), [0.52, 0.12, 0.33, 0.03][i] ?? 0.05]);
  const mk = (key: string, share: number, costShare: number): GroupSeries => {
    const points = pts.map((p) => {
      const n = groupBy === 'error_reason' ? Math.round(p.errors * share) : Math.round(p.requests * share);
      return { ts: p.ts, requests: n, errors: groupBy === 'error_reason' ? n : Math.round(p.errors * share), costUsd: +(p.costUsd * costShare).toFixed(4) };
    });
    const sum = (k: 'requests' | 'errors' | 'costUsd') => points.reduce((t, p) => t + p[k], 0);
    const ref = groupBy === 'gateway' || groupBy === 'user' ? demoRef(key) : null;
    return { key, ref, requests: sum('requests'), errors: sum('errors'), costUsd: +sum('costUsd').toFixed(4), points };
  };
  const all = shares.map(([k, sh, c]) => mk(k, sh, c));
  return { interval, groupBy, series: all.slice(0, limit), other: null };
}
