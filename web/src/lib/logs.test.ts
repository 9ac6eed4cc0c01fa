import { describe, expect, it } from 'vitest';
import { attemptSummary, attemptsOf, logFilter, logOrder, modelLabel, nextOrder, readFilters, splitModel, LOG_KEYS, type LogFilters } from './logs';
import type { SpanNode } from './waterfall';
import { tokenOptions, tokensQuery } from '../pages/logs/FilterBar';

const none = Object.fromEntries(LOG_KEYS.map((k) => [k, ''])) as LogFilters;

describe('logFilter', () => {
  it('builds a LogFilterInput from the URL filters', () => {
    expect(logFilter({ ...none, gateway: 'gw_1', status: '429', metadata: 'team=search', model: 'gpt-4o' }, 'acme')).toEqual({
      filter: { tenantId: 'acme', gatewayId: 'gw_1', status: 429, metadata: { team: 'search' }, model: 'gpt-4o' },
    });
    expect(logFilter(none, '')).toEqual({ filter: {} });
    expect(logFilter({ ...none, operation: 'models' }, '')).toEqual({ filter: { operation: 'models' } });
  });
  it('reads the explorer filters: status class, provider/model, user, token, ranges, search', () => {
    expect(
      logFilter(
        { ...none, status_class: 'errors', model: 'openai/gpt-4o-mini', user: 'usr_1', token: 'tok_1', min_latency: '100', max_latency: '2000', min_cost: '0.01', search: ' team-a ' },
        '',
      ),
    ).toEqual({
      filter: { statusClass: 'errors', provider: 'openai', model: 'gpt-4o-mini', userId: 'usr_1', tokenId: 'tok_1', minLatencyMs: 100, maxLatencyMs: 2000, minCostUsd: 0.01, search: 'team-a' },
    });
  });
  it('refuses bad input before sending it', () => {
    expect(logFilter({ ...none, status: '99' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, metadata: 'nokey' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, operation: 'chat/completions' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, from: '2026-11-22T10:00', to: '2026-11-21T10:00' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, status_class: '6xx' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, min_latency: '1.5' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, min_latency: '-1' }, '')).toHaveProperty('error');
    expect(logFilter({ ...none, min_cost: '2', max_cost: '1' }, '')).toHaveProperty('error');
  });
});

describe('models as the table shows them', () => {
  it('splits provider/model at the first slash', () => {
    expect(splitModel('openai/gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(splitModel('gpt-4o')).toEqual({ model: 'gpt-4o' });
    expect(splitModel('openai/')).toEqual({ provider: 'openai' });
    expect(splitModel('/gpt-4o')).toEqual({ model: 'gpt-4o' });
    expect(splitModel('openrouter/meta-llama/llama-3')).toEqual({ provider: 'openrouter', model: 'meta-llama/llama-3' });
    expect(splitModel('  ')).toEqual({});
  });
  it('shows a model without a provider alone', () => {
    expect(modelLabel({ provider: 'openai', model: 'gpt-4o' })).toBe('openai/gpt-4o');
    expect(modelLabel({ provider: '', model: 'gpt-5' })).toBe('gpt-5');
  });
  it('joins an old bookmark’s provider to its model', () => {
    expect(readFilters(new URLSearchParams('provider=openai&model=gpt-4o')).model).toBe('openai/gpt-4o');
    expect(readFilters(new URLSearchParams('model=openai/gpt-4o')).model).toBe('openai/gpt-4o');
  });
});

describe('order', () => {
  it('is newest first by default and toggles on the same column', () => {
    expect(logOrder({ sort: '', order: '' })).toEqual({ by: 'ts', order: 'desc' });
    expect(logOrder({ sort: 'bogus', order: 'asc' })).toEqual({ by: 'ts', order: 'asc' });
    expect(nextOrder({ by: 'ts', order: 'desc' }, 'latency')).toEqual({ sort: 'latency', order: 'desc' });
    expect(nextOrder({ by: 'latency', order: 'desc' }, 'latency')).toEqual({ sort: 'latency', order: 'asc' });
    expect(nextOrder({ by: 'latency', order: 'asc' }, 'latency')).toEqual({ sort: 'latency', order: 'desc' });
    expect(nextOrder({ by: 'ts', order: 'asc' }, 'ts')).toEqual({ sort: '', order: '' });
  });
});

describe('attempts', () => {
  const span = (n: number, provider: string, model: string, status: string, outcome: string): SpanNode => ({
    spanId: 's' + n,
    parentId: 'root',
    name: 'upstream ' + provider,
    start: `2026-11-22T10:00:0${n}.000Z`,
    durationMs: 10 * n,
    status,
    attributes: { provider, model, key_alias: 'main', attempt: String(n), upstream_status: status === 'ok' ? '200' : '503', outcome },
  });
  const root = (children: SpanNode[]): SpanNode => ({ spanId: 'root', parentId: '', name: 'POST', start: '2026-11-22T10:00:00.000Z', durationMs: 100, status: 'ok', children });
  it('tells retries from fallbacks', () => {
    const a = attemptsOf(root([span(3, 'anthropic', 'claude', 'ok', 'ok'), span(1, 'openai', 'gpt-4o', 'error', 'retryable'), span(2, 'openai', 'gpt-4o', 'error', 'timeout')]));
    expect(a.map((x) => [x.n, x.kind, x.ok, x.outcome])).toEqual([
      [1, 'first', false, 'retryable'],
      [2, 'retry', false, 'timeout'],
      [3, 'fallback', true, 'ok'],
    ]);
    expect(attemptSummary(a, 3)).toBe('3 attempts: 1 retry, 1 fallback');
  });
  it('says when no provider was tried', () => {
    expect(attemptsOf(null)).toEqual([]);
    expect(attemptSummary([], 0)).toBe('No provider was tried: the gateway answered itself.');
    expect(attemptSummary([], 1)).toBe('1 attempt');
  });
});

describe('token pickers', () => {
  it('asks for the tokens of every gateway and of the user in one query', () => {
    const q = tokensQuery(['gw_1', 'gw_2'], 'usr_1');
    expect(q.query).toMatch(/^query LogTokens\(\$g0: ID!, \$g1: ID!, \$u: ID!\) \{ g0: gatewayTokens\(gatewayId: \$g0, limit: 100\)/);
    expect(q.variables).toEqual({ g0: 'gw_1', g1: 'gw_2', u: 'usr_1' });
    expect(tokensQuery([], '').query).toBe('');
  });
  it('lists each token once, by name', () => {
    const t = (id: string, name: string) => ({ id, name, gatewayId: 'gw_1', userId: null });
    expect(tokenOptions({ g0: { data: [t('tok_2', 'b'), t('tok_1', 'a')] }, u: { data: [t('tok_2', 'b')] }, g1: null }).map((x) => x.id)).toEqual(['tok_1', 'tok_2']);
  });
});
