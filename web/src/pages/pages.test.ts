import { describe, expect, it } from 'vitest';
import { routeErrors } from './gateway/Routes';
import { ruleErrors } from './gateway/Rules';
import { lifecycle } from './Prices';
import { groupsCSV, totals } from './Analytics';

describe('routeErrors', () => {
  const t = { provider: 'openai', model: 'gpt-4o', keyAlias: '', weight: '1' };
  it('accepts valid routes and names the first problem of each', () => {
    expect(routeErrors([{ name: 'smart', strategy: 'fallback', targets: [t] }])).toEqual([null]);
    expect(routeErrors([{ name: 'a b', strategy: 'fallback', targets: [t] }])[0]).toMatch(/spaces/);
    expect(routeErrors([{ name: 'x', strategy: 'fallback', targets: [] }])[0]).toMatch(/1 to 16/);
    expect(routeErrors([{ name: 'x', strategy: 'fallback', targets: [{ ...t, model: ' ' }] }])[0]).toMatch(/model/);
    expect(routeErrors([{ name: 'x', strategy: 'loadbalance', targets: [{ ...t, weight: '0' }] }])[0]).toMatch(/weight/i);
    expect(routeErrors([{ name: 'x', strategy: 'fallback', targets: [t] }, { name: 'x', strategy: 'fallback', targets: [t] }])[1]).toMatch(/twice/);
  });
});

describe('ruleErrors', () => {
  const base = { name: 'r', enabled: true, direction: 'both', kind: 'keyword', patterns: 'secret', pii: [], action: 'block', caseSensitive: false };
  it('checks names, patterns and PII kinds', () => {
    expect(ruleErrors(base)).toEqual({ name: null, patterns: null, pii: null });
    expect(ruleErrors({ ...base, name: ' ' }).name).not.toBeNull();
    expect(ruleErrors({ ...base, kind: 'regex', patterns: '([a-z' }).patterns).not.toBeNull();
    expect(ruleErrors({ ...base, kind: 'pii', patterns: '' }).pii).not.toBeNull();
    expect(ruleErrors({ ...base, kind: 'pii', pii: ['email'] as never[] })).toEqual({ name: null, patterns: null, pii: null });
  });
});

describe('prices and exports', () => {
  it('tells a model’s lifecycle', () => {
    const now = new Date('2026-11-22T00:00:00Z');
    expect(lifecycle({ deprecatedAt: null, sunsetAt: null }, now)).toBe('current');
    expect(lifecycle({ deprecatedAt: '2026-01-01T00:00:00Z', sunsetAt: '2027-01-01T00:00:00Z' }, now)).toBe('deprecated');
    expect(lifecycle({ deprecatedAt: '2025-01-01T00:00:00Z', sunsetAt: '2026-06-01T00:00:00Z' }, now)).toBe('sunset');
  });
  it('sums analysis groups', () => {
    const g = (requests: number, errors: number, costUsd: number, unpricedRequests?: number) => ({
      key: 'k',
      requests,
      errors,
      tokensIn: 0,
      tokensOut: 0,
      costUsd,
      unpricedRequests,
      latencyMs: { p50: 0, p95: 0, p99: 0 },
    });
    expect(totals([g(3, 1, 0.5, 2), g(1, 0, 0.25)])).toEqual({ requests: 4, errors: 1, errorRate: 0.25, costUsd: 0.75, unpricedRequests: 2 });
    expect(totals([]).errorRate).toBe(0);
  });
  it('exports analysis groups', () => {
    const csv = groupsCSV([{ key: 'openai', requests: 4, errors: 1, tokensIn: 10, tokensOut: 5, costUsd: 0.5, latencyMs: { p50: 100, p95: 200, p99: 300 } }], 'provider');
    expect(csv).toBe('provider,requests,errors,error_rate,tokens_in,tokens_out,cost_usd,latency_p50_ms,latency_p95_ms\r\nopenai,4,1,0.25,10,5,0.5,100,200\r\n');
  });
  it('exports the names of gateways and users next to their ids', () => {
    const lat = { p50: 1, p95: 2, p99: 3 };
    const row = { requests: 1, errors: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, latencyMs: lat };
    const csv = groupsCSV(
      [
        { ...row, key: 'gw_1', ref: { kind: 'gateway', id: 'gw_1', name: 'Production', state: 'named' } },
        { ...row, key: 'gw_2', ref: { kind: 'gateway', id: 'gw_2', name: '', state: 'deleted' } },
      ],
      'gateway',
    );
    expect(csv.split('\r\n').slice(0, 3)).toEqual([
      'gateway,gateway_name,requests,errors,error_rate,tokens_in,tokens_out,cost_usd,latency_p50_ms,latency_p95_ms',
      'gw_1,Production,1,0,0,0,0,0,1,2',
      'gw_2,(deleted) gw_2,1,0,0,0,0,0,1,2',
    ]);
  });
});
