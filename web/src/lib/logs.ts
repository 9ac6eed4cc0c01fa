// The log explorer's logic: the URL's filters as a LogFilterInput, the
// order of the table, and a request's attempts read from its trace.

import type { SpanNode } from './waterfall';
import { localInputToISO } from './range';
import * as v from './validate';

/** LOG_KEYS are the URL query keys of the log filters and order. */
export const LOG_KEYS = [
  'gateway',
  'user',
  'token',
  'model',
  'status_class',
  'status',
  'error_code',
  'operation',
  'search',
  'metadata',
  'min_latency',
  'max_latency',
  'min_cost',
  'max_cost',
  'from',
  'to',
  'sort',
  'order',
] as const;
export type LogFilters = Record<(typeof LOG_KEYS)[number], string>;

/** readFilters reads the filters from the URL query; an old bookmark's provider= joins its model. */
export function readFilters(query: URLSearchParams): LogFilters {
  const f = Object.fromEntries(LOG_KEYS.map((k) => [k, query.get(k) ?? ''])) as LogFilters;
  const provider = query.get('provider');
  if (provider && !f.model.includes('/')) f.model = `${provider}/${f.model}`;
  return f;
}

/** OPERATIONS are the front doors a log can name (CONTRACT §12). */
export const OPERATIONS = ['chat', 'completions', 'embeddings', 'responses', 'messages', 'count_tokens', 'models'] as const;

/** STATUS_CLASSES are the status classes the server filters by, with their labels. */
export const STATUS_CLASSES: [string, string][] = [
  ['2xx', '2xx answered'],
  ['4xx', '4xx refused or invalid'],
  ['5xx', '5xx upstream failures'],
  ['errors', 'All errors'],
];

/**
 * splitModel reads a model as the table shows it, provider/model: the part
 * before the first slash is the provider ("openai/" alone names only the
 * provider), a text without a slash is a model under any provider.
 */
export function splitModel(text: string): { provider?: string; model?: string } {
  const t = text.trim();
  const at = t.indexOf('/');
  if (at < 0) return t ? { model: t } : {};
  const out: { provider?: string; model?: string } = {};
  if (t.slice(0, at)) out.provider = t.slice(0, at);
  if (t.slice(at + 1)) out.model = t.slice(at + 1);
  return out;
}

/** modelLabel is how the table shows a log's model: provider/model, or the model alone when no provider is known. */
export function modelLabel(l: { provider: string; model: string }): string {
  if (!l.provider) return l.model || '—';
  return `${l.provider}/${l.model}`;
}

function bound(text: string, what: string, decimal: boolean): { value?: number; error?: string } {
  const t = text.trim();
  if (!t) return {};
  const n = Number(t);
  if (!/^\d+(\.\d+)?$/.test(t) || !Number.isFinite(n)) return { error: `${what} must be a number, 0 or more.` };
  if (!decimal && !Number.isInteger(n)) return { error: `${what} must be a whole number of milliseconds.` };
  return { value: n };
}

/** logFilter turns the URL's filters into a LogFilterInput; bad input is reported, not sent. */
export function logFilter(f: LogFilters, tenantId: string): { filter: Record<string, unknown> } | { error: string } {
  const filter: Record<string, unknown> = {};
  if (tenantId) filter.tenantId = tenantId;
  if (f.gateway) filter.gatewayId = f.gateway;
  if (f.user) filter.userId = f.user;
  if (f.token) filter.tokenId = f.token;
  Object.assign(filter, splitModel(f.model));
  if (f.status_class) {
    if (!STATUS_CLASSES.some(([c]) => c === f.status_class)) return { error: 'The status class must be 2xx, 4xx, 5xx or all errors.' };
    filter.statusClass = f.status_class;
  }
  if (f.status) {
    const e = v.intIn(f.status, 100, 599, 'The status');
    if (e) return { error: e };
    filter.status = Number(f.status);
  }
  if (f.error_code) filter.errorCode = f.error_code;
  if (f.operation) {
    if (!(OPERATIONS as readonly string[]).includes(f.operation)) return { error: `The operation must be one of ${OPERATIONS.join(', ')}.` };
    filter.operation = f.operation;
  }
  if (f.search.trim()) filter.search = f.search.trim();
  if (f.metadata) {
    const m = v.metadataPairs(f.metadata);
    if ('error' in m) return { error: m.error };
    filter.metadata = m.value;
  }
  const ranges: [string, string, string, string, boolean][] = [
    [f.min_latency, f.max_latency, 'minLatencyMs', 'maxLatencyMs', false],
    [f.min_cost, f.max_cost, 'minCostUsd', 'maxCostUsd', true],
  ];
  for (const [lo, hi, loKey, hiKey, usd] of ranges) {
    const what = usd ? 'The cost' : 'The latency';
    const a = bound(lo, what, usd);
    const b = bound(hi, what, usd);
    if (a.error || b.error) return { error: (a.error ?? b.error) as string };
    if (a.value !== undefined) filter[loKey] = a.value;
    if (b.value !== undefined) filter[hiKey] = b.value;
    if (a.value !== undefined && b.value !== undefined && a.value > b.value) return { error: `${what}'s minimum is above its maximum.` };
  }
  const from = localInputToISO(f.from);
  const to = localInputToISO(f.to);
  if (from) filter.from = from;
  if (to) filter.to = to;
  if (from && to && from >= to) return { error: 'The start of the range must be before its end.' };
  return { filter };
}

/** The orders of the log table. */
export type SortKey = 'ts' | 'latency' | 'cost' | 'tokens' | 'status';
export interface LogOrder {
  by: SortKey;
  order: 'asc' | 'desc';
}
const SORT_KEYS: SortKey[] = ['ts', 'latency', 'cost', 'tokens', 'status'];

/** logOrder reads the order from the URL's filters: newest first unless they say otherwise. */
export function logOrder(f: Pick<LogFilters, 'sort' | 'order'>): LogOrder {
  const by = (SORT_KEYS as string[]).includes(f.sort) ? (f.sort as SortKey) : 'ts';
  return { by, order: f.order === 'asc' ? 'asc' : 'desc' };
}

/** nextOrder is the order after a click on a column's header: the column descending first, then the other way. */
export function nextOrder(cur: LogOrder, by: SortKey): { sort: string; order: string } {
  const order = cur.by === by && cur.order === 'desc' ? 'asc' : 'desc';
  // The default order leaves the URL clean.
  return by === 'ts' && order === 'desc' ? { sort: '', order: '' } : { sort: by, order };
}

/** One upstream attempt of a request, from its trace. */
export interface Attempt {
  n: number;
  provider: string;
  model: string;
  keyAlias: string;
  upstreamStatus: string;
  outcome: string;
  ok: boolean;
  durationMs: number;
  /** first, retry (same provider and model as the attempt before) or fallback (another target). */
  kind: 'first' | 'retry' | 'fallback';
}

/**
 * attemptsOf reads the upstream attempts of a request from its trace: the
 * spans under the root, in start order, with the attributes the gateway
 * records (provider, model, key_alias, attempt, upstream_status, outcome).
 */
export function attemptsOf(root: SpanNode | null | undefined): Attempt[] {
  const spans = [...(root?.children ?? [])].sort((a, b) => a.start.localeCompare(b.start));
  const out: Attempt[] = [];
  for (const s of spans) {
    const a = s.attributes ?? {};
    const prev = out[out.length - 1];
    const provider = a.provider ?? '';
    const model = a.model ?? '';
    out.push({
      n: Number(a.attempt) || out.length + 1,
      provider,
      model,
      keyAlias: a.key_alias ?? a['sluice.key_alias'] ?? '',
      upstreamStatus: a.upstream_status ?? a['http.status_code'] ?? '',
      outcome: a.outcome ?? s.status,
      ok: s.status === 'ok',
      durationMs: s.durationMs,
      kind: !prev ? 'first' : prev.provider === provider && prev.model === model ? 'retry' : 'fallback',
    });
  }
  return out;
}

/** attemptSummary says in words how a request reached its answer: "3 attempts: 1 retry, 1 fallback". */
export function attemptSummary(attempts: Attempt[], recorded: number): string {
  const n = attempts.length || recorded;
  if (n === 0) return 'No provider was tried: the gateway answered itself.';
  const retries = attempts.filter((a) => a.kind === 'retry').length;
  const fallbacks = attempts.filter((a) => a.kind === 'fallback').length;
  const parts = [];
  if (retries) parts.push(`${retries} ${retries === 1 ? 'retry' : 'retries'}`);
  if (fallbacks) parts.push(`${fallbacks} ${fallbacks === 1 ? 'fallback' : 'fallbacks'}`);
  return `${n} ${n === 1 ? 'attempt' : 'attempts'}${parts.length ? ': ' + parts.join(', ') : ''}`;
}
