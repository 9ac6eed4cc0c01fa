// The state of a budget as every page shows it: one rule for the level
// (amber from 80 %, red from 100 %, the thresholds of the budget alerts)
// and one sentence that says it in words, so colour is never the only sign.

import type { Budget } from '../api/types';
import { formatPercent, formatTime, formatUSD } from './format';

export type BudgetLevel = 'ok' | 'warn' | 'over';

/** WARN_AT is the share of a budget from which its bar turns amber (the 80 % alert). */
export const WARN_AT = 0.8;

/** budgetRatio is the share of the amount spent (0 for a zero amount). */
export function budgetRatio(b: Pick<Budget, 'amountUsd' | 'spentUsd'>): number {
  return b.amountUsd > 0 ? b.spentUsd / b.amountUsd : 0;
}

/** budgetLevel is ok below 80 %, warn from 80 % and over from 100 %. */
export function budgetLevel(b: Pick<Budget, 'amountUsd' | 'spentUsd'>): BudgetLevel {
  const r = budgetRatio(b);
  return r >= 1 ? 'over' : r >= WARN_AT ? 'warn' : 'ok';
}

/** budgetStateLabel names the level in words, saying what a hard budget does once reached. */
export function budgetStateLabel(b: Budget): string {
  switch (budgetLevel(b)) {
    case 'over':
      return b.hard ? 'Reached: requests are refused' : 'Reached: requests are flagged';
    case 'warn':
      return 'Near the limit (80 % or more)';
    default:
      return 'Within budget';
  }
}

/** budgetResets says when the period ends, or that a total budget never resets. */
export function budgetResets(b: Pick<Budget, 'resetsAt'>): string {
  return b.resetsAt ? `resets ${formatTime(b.resetsAt)}` : 'never resets';
}

/** budgetSummary is the whole state in one line (the bar's accessible value, a CSV cell). */
export function budgetSummary(b: Budget): string {
  return [
    `${formatUSD(b.spentUsd)} of ${formatUSD(b.amountUsd)} spent (${formatPercent(budgetRatio(b), 0)})`,
    budgetStateLabel(b),
    `${b.period}, ${b.hard ? 'hard' : 'soft'}`,
    budgetResets(b),
  ].join('; ');
}
