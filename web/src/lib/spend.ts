// The spend tables as CSV: one function per table of the Spend page, so
// that each table exports exactly the rows and columns it shows.

import type { Budget, ScopeSpend, Spend } from '../api/types';
import { budgetLevel, budgetRatio } from './budget';
import { toCSV, type Cell } from './csv';

const BUDGET_COLUMNS = ['budget_usd', 'budget_period', 'budget_hard', 'budget_spent_usd', 'budget_used_pct', 'budget_state', 'budget_resets_at'];

function budgetCells(b: Budget | null | undefined): Cell[] {
  if (!b) return BUDGET_COLUMNS.map(() => '');
  return [b.amountUsd, b.period, b.hard, b.spentUsd, Math.round(budgetRatio(b) * 1000) / 10, budgetLevel(b), b.resetsAt ?? ''];
}

/** scopeSpendCSV is a table of spend per gateway, user or token (kind), with each budget. */
export function scopeSpendCSV(kind: 'gateway' | 'user' | 'token', rows: ScopeSpend[], range: { from: string; to: string }): string {
  return toCSV(
    ['from', 'to', kind + '_id', kind + '_name', 'requests', 'cost_usd', 'unpriced_requests', ...BUDGET_COLUMNS],
    rows.map((r) => [range.from, range.to, r.id, r.name, r.requests, r.costUsd, r.unpricedRequests ?? 0, ...budgetCells(r.budget)]),
  );
}

/** modelSpendCSV is the spend per model; unpriced_requests counts the requests its cost leaves out for want of a price. */
export function modelSpendCSV(s: Pick<Spend, 'from' | 'to' | 'byModel'>): string {
  return toCSV(
    ['from', 'to', 'provider', 'model', 'requests', 'cost_usd', 'unpriced_requests'],
    s.byModel.map((m) => [s.from, s.to, m.provider, m.model, m.requests, m.costUsd, m.unpricedRequests ?? 0]),
  );
}

/** daySpendCSV is the spend per UTC day. */
export function daySpendCSV(days: { day: string; requests: number; costUsd: number }[]): string {
  return toCSV(
    ['day', 'requests', 'cost_usd'],
    days.map((d) => [d.day, d.requests, d.costUsd]),
  );
}
