import { describe, expect, it } from 'vitest';
import type { GroupSeries, GroupTimeseries, Point } from '../api/types';
import { cacheSavings, groupLabel, hasData, OTHER_COLOR, PALETTE, percentileSeries, topWithOther } from './series';

const ts = ['2026-11-20T00:00:00Z', '2026-11-20T01:00:00Z', '2026-11-20T02:00:00Z'];
function series(key: string, cost: number[], requests: number[] = [1, 1, 1]): GroupSeries {
  const points = ts.map((t, i) => ({ ts: t, requests: requests[i], errors: 0, costUsd: cost[i] }));
  return { key, requests: requests.reduce((a, b) => a + b, 0), errors: 0, costUsd: cost.reduce((a, b) => a + b, 0), points };
}

describe('topWithOther', () => {
  const gt: GroupTimeseries = {
    interval: 'hour',
    groupBy: 'model',
    series: [series('gpt-4o', [1, 2, 3]), series('mini', [0.5, 0, 0.5]), series('', [0, 0.25, 0]), series('free', [0, 0, 0], [5, 5, 5])],
    other: series('', [0.1, 0.1, 0.1]),
  };
  it('keeps the top N by the metric and sums the rest with the server’s other', () => {
    const got = topWithOther(gt, 'costUsd', 2);
    expect(got.ts).toEqual(ts);
    expect(got.series.map((s) => [s.label, s.color, s.total])).toEqual([
      ['gpt-4o', PALETTE[0], 6],
      ['mini', PALETTE[1], 1],
      ['Other', OTHER_COLOR, 0.25 + 0.3],
    ]);
    expect(got.series[2].values.map((v) => +v.toFixed(4))).toEqual([0.1, 0.35, 0.1]);
  });
  it('ranks by the metric asked for, and names an empty key', () => {
    const got = topWithOther({ ...gt, other: null }, 'requests', 1);
    expect(got.series.map((s) => [s.label, s.total])).toEqual([
      ['free', 15],
      ['Other', 9],
    ]);
    expect(topWithOther({ ...gt, other: null }, 'costUsd', 3).series.map((s) => s.label)).toEqual(['gpt-4o', 'mini', '(none)']);
  });
  it('draws no "other" when nothing is left, and nothing from an empty answer', () => {
    expect(topWithOther({ ...gt, other: null }, 'costUsd', 10).series.map((s) => s.label)).toEqual(['gpt-4o', 'mini', '(none)']);
    expect(topWithOther({ interval: 'hour', groupBy: 'model', series: [], other: null }, 'costUsd', 5)).toEqual({ ts: [], series: [] });
  });
  it('labels error reasons', () => {
    expect(groupLabel('error_reason', 'upstream')).toBe('Upstream failures');
    expect(groupLabel('error_reason', 'budget_exceeded')).toBe('Refused: budget_exceeded');
    expect(groupLabel('user', '')).toBe('(none)');
  });
});

function point(requests: number, p: [number, number, number], saved = 0): Point {
  return { ts: ts[0], requests, errors: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, cached: 0, cacheSavedUsd: saved, latencyMs: { p50: p[0], p95: p[1], p99: p[2] } };
}

describe('percentiles and cache savings', () => {
  it('leaves a gap for a bucket without requests rather than a fall to 0 ms', () => {
    expect(percentileSeries([point(3, [100, 400, 900]), point(0, [0, 0, 0]), point(1, [50, 50, 50])])).toEqual({
      p50: [100, null, 50],
      p95: [400, null, 50],
      p99: [900, null, 50],
    });
  });
  it('adds up the savings per bucket into a running total', () => {
    const got = cacheSavings([point(1, [1, 1, 1], 0.1), point(1, [1, 1, 1], 0), point(1, [1, 1, 1], 0.2)]);
    expect(got.perBucket).toEqual([0.1, 0, 0.2]);
    expect(got.cumulative).toEqual([0.1, 0.1, 0.3]);
    expect(got.total).toBeCloseTo(0.3);
  });
  it('knows an all-zero or all-gap chart has no data', () => {
    expect(hasData([[0, null], [0]])).toBe(false);
    expect(hasData([[0, 2]])).toBe(true);
  });
});
