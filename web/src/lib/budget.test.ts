import { describe, expect, it } from 'vitest';
import type { Budget } from '../api/types';
import { budgetLevel, budgetRatio, budgetResets, budgetStateLabel, budgetSummary } from './budget';

const b = (spentUsd: number, over: Partial<Budget> = {}): Budget => ({
  amountUsd: 100,
  period: 'monthly',
  hard: true,
  spentUsd,
  remainingUsd: Math.max(100 - spentUsd, 0),
  resetsAt: '2026-12-01T00:00:00Z',
  ...over,
});

describe('budgetLevel', () => {
  it('is amber from 80 % and red from 100 %', () => {
    expect(budgetLevel(b(0))).toBe('ok');
    expect(budgetLevel(b(79.99))).toBe('ok');
    expect(budgetLevel(b(80))).toBe('warn');
    expect(budgetLevel(b(99.99))).toBe('warn');
    expect(budgetLevel(b(100))).toBe('over');
    expect(budgetLevel(b(130))).toBe('over');
  });
  it('treats a zero amount as nothing spent', () => {
    expect(budgetRatio(b(5, { amountUsd: 0 }))).toBe(0);
  });
});

describe('budget text', () => {
  it('says the state in words, not colour only', () => {
    expect(budgetStateLabel(b(10))).toBe('Within budget');
    expect(budgetStateLabel(b(85))).toMatch(/near the limit/i);
    expect(budgetStateLabel(b(100))).toMatch(/refused/);
    expect(budgetStateLabel(b(100, { hard: false }))).toMatch(/flagged/);
  });
  it('says when it resets', () => {
    expect(budgetResets(b(0))).toMatch(/^resets .*2026/);
    expect(budgetResets(b(0, { resetsAt: null, period: 'total' }))).toBe('never resets');
  });
  it('sums it up in one line', () => {
    expect(budgetSummary(b(85))).toMatch(/^\$85\.00 of \$100\.00 spent \(85%\); Near the limit .*; monthly, hard; resets /);
  });
});
