// The demo's "network": an urql exchange that answers every query from the
// bundled fixtures and refuses every mutation. It has no fetch in it, so the
// demo cannot call an admin endpoint (demo.test.ts checks this).

import { makeResult, type Exchange, type Operation, type OperationResult } from '@urql/core';
import { filter, map, pipe } from 'wonka';
import { operationName } from '../api/queries';
import * as F from './fixtures';

type Vars = Record<string, any>;

const list = <T,>(data: T[]) => ({ data, nextCursor: null });

function range(v: Vars): [string, string] {
  const to = v.to ?? new Date().toISOString();
  const from = v.from ?? new Date(new Date(to).getTime() - 86_400_000).toISOString();
  return [from, to];
}

/** answers maps an operation name to its sample answer. */
const answers: Record<string, (v: Vars) => unknown> = {
  Overview: (v) => {
    const [from, to] = range(v);
    return { stats: F.demoStats(from, to), timeseries: { interval: v.interval ?? 'hour', points: F.demoPoints(from, to, v.interval ?? 'hour') } };
  },
  ProviderList: () => ({ providers: list(F.demoProviders) }),
  GatewayList: () => ({ gateways: list(F.demoGateways) }),
  Gateway: (v) => ({ gateway: F.demoGateways.find((g) => g.id === v.id) ?? null }),
  GatewayKeys: () => ({ providerKeys: list(F.demoKeys), providers: list(F.demoProviders), circuitBreaker: list(F.demoBreakers), models: list(F.demoCatalog) }),
  GatewayModels: () => ({ providerKeys: list(F.demoKeys), models: list(F.demoCatalog) }),
  GatewayActivity: (v) => {
    const [from, to] = range(v);
    const s = F.demoStats(from, to);
    const refusals = Math.round(s.errors * 0.6);
    return {
      stats: { ...s, upstreamErrors: s.errors - refusals, refusals, refusalsByReason: [{ reason: 'rate_limit_exceeded', count: refusals }] },
      timeseries: { interval: v.interval ?? 'hour', points: F.demoPoints(from, to, v.interval ?? 'hour') },
      analytics: { groups: F.demoGroups('model', from, to) },
      circuitBreaker: list(F.demoBreakers),
    };
  },
  GatewayRules: () => ({ rules: list(F.demoRules) }),
  GatewayTokens: () => ({ gatewayTokens: list(F.demoTokens) }),
  GatewayHealth: () => ({ circuitBreaker: list(F.demoBreakers) }),
  GatewayGuardrails: () => ({
    guardrailStats: { total: 23, byRule: [{ ruleId: 'rule_demo_1', ruleName: 'No PII out', action: 'redact', hits: 19 }, { ruleId: 'rule_demo_2', ruleName: 'Block internal code names', action: 'block', hits: 4 }] },
    guardrailEvents: list(
      F.demoLogs().slice(0, 6).map((l, i) => ({ id: 'ge_' + i, ts: l.ts, requestId: l.id, ruleName: i % 3 ? 'No PII out' : 'Block internal code names', kind: i % 3 ? 'pii' : 'keyword', action: i % 3 ? 'redact' : 'block', direction: 'request', excerpt: i % 3 ? 'mail me at [REDACTED:email]' : 'status of project-f…' })),
    ),
  }),
  GatewayTraces: () => ({ gatewayTraces: list(F.demoTraceSummaries()) }),
  GatewaySpend: (v) => {
    const [from, to] = range(v);
    return { gatewaySpend: F.demoSpend(from, to, true) };
  },
  Logs: (v) => {
    const by: string = v.sort?.by ?? 'ts';
    const key = (l: ReturnType<typeof F.demoLogs>[number]) =>
      by === 'latency' ? l.latencyMs : by === 'cost' ? l.costUsd : by === 'tokens' ? l.tokensIn + l.tokensOut : by === 'status' ? l.status : Date.parse(l.ts);
    const data = F.demoLogs().sort((a, b) => (key(a) - key(b)) * (v.sort?.order === 'asc' ? 1 : -1));
    return { logs: { data, nextCursor: null, totalCount: data.length } };
  },
  // The token picker's one query: the demo's tokens under each alias it asks for.
  LogTokens: (v) => Object.fromEntries(Object.keys(v).map((alias) => [alias, list(F.demoTokens)])),
  LogDetail: (v) => ({ log: F.demoLog(v.id) }),
  TraceDetail: (v) => ({ trace: F.demoTrace(v.id) }),
  TenantSpend: (v) => {
    const [from, to] = range(v);
    return { tenantSpend: F.demoSpend(from, to, false) };
  },
  Analytics: (v) => {
    const [from, to] = range(v);
    return { analytics: { from, to, groupBy: v.groupBy ?? 'model', groups: F.demoGroups(v.groupBy ?? 'model', from, to) } };
  },
  AnalyticsCharts: (v) => {
    const [from, to] = range(v);
    const iv = v.interval ?? 'hour';
    return { timeseries: { interval: iv, points: F.demoPoints(from, to, iv) }, reasons: F.demoGroupSeries('error_reason', from, to, iv, v.limit ?? 8) };
  },
  SeriesByGroup: (v) => {
    const [from, to] = range(v);
    return { seriesByGroup: F.demoGroupSeries(v.groupBy ?? 'model', from, to, v.interval ?? 'hour', v.limit ?? 5) };
  },
  TenantAnalytics: (v) => {
    const [from, to] = range(v);
    const s = F.demoStats(from, to);
    return {
      tenantAnalytics: {
        requests: s.requests,
        errorRate: s.errors / s.requests,
        cacheSavingsUsd: +(s.costUsd * 0.12).toFixed(2),
        topGateways: F.demoGroups('gateway', from, to),
        topUsers: F.demoGroups('user', from, to),
        topModels: F.demoGroups('model', from, to),
      },
    };
  },
  ModelPrices: () => ({ modelPrices: list(F.demoPrices) }),
  // A model served without a price, as the price editor lists it.
  UnpricedModels: () => ({ unpricedModels: list([{ provider: 'mistral', model: 'mistral-small-2506', requests: 42, tokensIn: 51_800, tokensOut: 8_120 }]) }),
};

/** demoAnswer is the result of one operation in the demo. */
export function demoAnswer(op: Operation): OperationResult {
  const def = op.query.definitions.find((d: { kind: string }) => d.kind === 'OperationDefinition') as { name?: { value: string } } | undefined;
  const name = def?.name?.value ?? operationName(op.query.loc?.source.body ?? '') ?? '';
  if (op.kind === 'mutation') {
    return makeResult(op, { errors: [{ message: 'This is a read-only demo: nothing is saved', extensions: { code: 'DEMO_READ_ONLY' } }] });
  }
  const f = answers[name];
  if (!f) {
    return makeResult(op, { data: null, errors: [{ message: 'This part of the interface has no sample data in the demo', extensions: { code: 'FORBIDDEN' } }] });
  }
  try {
    return makeResult(op, { data: f((op.variables ?? {}) as Vars) as Record<string, any> });
  } catch (err) {
    return makeResult(op, { data: null, errors: [{ message: `The demo could not answer ${name}: ${String(err)}`, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
  }
}

export const demoExchange: Exchange = () => (ops$) =>
  pipe(
    ops$,
    filter((op) => op.kind === 'query' || op.kind === 'mutation'),
    map(demoAnswer),
  );

export const demoOperationNames = Object.keys(answers);
