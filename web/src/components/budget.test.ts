import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Budget } from '../api/types';
import { BudgetBar } from './ui';

const budget = (spentUsd: number, over: Partial<Budget> = {}): Budget => ({
  amountUsd: 100,
  period: 'weekly',
  hard: true,
  spentUsd,
  remainingUsd: Math.max(100 - spentUsd, 0),
  resetsAt: '2026-11-30T00:00:00Z',
  ...over,
});
const render = (b: Budget, compact = false) => renderToStaticMarkup(createElement(BudgetBar, { budget: b, compact, label: 'Token budget' }));

describe('BudgetBar', () => {
  it('is a labelled meter whose value is said in words', () => {
    const html = render(budget(50));
    expect(html).toContain('role="meter"');
    expect(html).toContain('aria-label="Token budget spent"');
    expect(html).toMatch(/aria-valuetext="\$50\.00 of \$100\.00 spent \(50%\); Within budget; weekly, hard; resets [^"]+"/);
    expect(html).toContain('class="bar ok"');
    expect(html).toContain('$50.00 left');
    expect(html).not.toContain('badge');
  });
  it('turns amber at 80 % and says so', () => {
    const html = render(budget(80));
    expect(html).toContain('class="bar warn"');
    expect(html).toMatch(/class="badge warn">Near the limit/);
  });
  it('turns red at 100 %, full width, and says what a hard budget does', () => {
    const html = render(budget(120));
    expect(html).toContain('class="bar over"');
    expect(html).toContain('width:100%');
    expect(html).toMatch(/class="badge bad">Reached: requests are refused/);
    expect(html).toContain('aria-valuenow="100"');
  });
  it('says when it resets, compactly in a table cell', () => {
    const html = render(budget(10, { period: 'total', resetsAt: null }), true);
    expect(html).toContain('budget compact');
    expect(html).toContain('never resets');
    expect(html).not.toContain('left');
  });
});
