import { describe, expect, it } from 'vitest';
import type { Group } from '../api/types';
import { barWidths } from './Analytics';

const g = (key: string, costUsd: number, requests: number): Group => ({ key, requests, errors: 0, tokensIn: 0, tokensOut: 0, costUsd, latencyMs: { p50: 0, p95: 0, p99: 0 } });

describe('top-list bars', () => {
  it('are proportional to cost, the value the lists are sorted by (not to requests)', () => {
    // The cheap model has the most requests: its bar must still be the shorter.
    expect(barWidths([g('gpt-4o', 4, 10), g('mini', 1, 400), g('free', 0, 50)])).toEqual([100, 25, 0]);
  });
  it('are empty when nothing cost anything', () => {
    expect(barWidths([g('a', 0, 1), g('b', 0, 2)])).toEqual([0, 0]);
    expect(barWidths([])).toEqual([]);
  });
});
