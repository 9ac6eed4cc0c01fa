import { describe, expect, it } from 'vitest';
import {
  fillDays,
  formatBytes,
  formatCompact,
  formatDuration,
  formatInt,
  formatPercent,
  formatRelative,
  formatCost,
  formatRateLimit,
  formatUSD,
  formatUSDAxis,
  prettyBody,
  splitJSONStream,
} from './format';

describe('formatUSD', () => {
  it.each([
    [0, '$0.00'],
    [4.73, '$4.73'],
    [1234.5, '$1,234.50'],
    [0.25, '$0.25'],
    [0.0123, '$0.0123'],
    [0.0001194, '$0.0001194'],
    [0.0000063, '$0.0000063'],
    [-2.5, '-$2.50'],
    [null, '—'],
    [NaN, '—'],
  ])('%s → %s', (v, want) => expect(formatUSD(v as number)).toBe(want));
  it('labels axes briefly', () => {
    expect(formatUSDAxis(0)).toBe('$0');
    expect(formatUSDAxis(0.000006)).toBe('$0.000006');
    expect(formatUSDAxis(0.25)).toBe('$0.25');
    expect(formatUSDAxis(1500)).toBe('$1,500');
    expect(formatUSDAxis(15000)).toBe('$15K');
  });
});

describe('formatCost', () => {
  it.each([
    [1.2, 0, '$1.20'],
    [1.2, undefined, '$1.20'],
    [0, 0, '$0.00'],
    [0, 3, 'unpriced'],
    [1.2, 3, '$1.20 + 3 unpriced'],
    [0.0000063, 1200, '$0.0000063 + 1,200 unpriced'],
  ])('%s with %s unpriced → %s', (usd, n, want) => expect(formatCost(usd, n)).toBe(want));
});

describe('formatRateLimit', () => {
  it('shows the limits set, or none', () => {
    expect(formatRateLimit({ requestsPerMinute: 600, tokensPerMinute: 100_000 })).toBe('600 requests/min · 100,000 tokens/min');
    expect(formatRateLimit({ requestsPerMinute: null, tokensPerMinute: 5, maxInFlight: 4 })).toBe('5 tokens/min · 4 in flight');
    expect(formatRateLimit({ requestsPerMinute: null, tokensPerMinute: null })).toBe('none');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [0.74, '0.74 ms'],
    [340, '340 ms'],
    [999.6, '1000 ms'],
    [1250, '1.25 s'],
    [2000, '2 s'],
    [12_340, '12.3 s'],
    [125_000, '2 min 5 s'],
    [120_000, '2 min'],
    [3_725_000, '1 h 2 min'],
    [undefined, '—'],
  ])('%s → %s', (v, want) => expect(formatDuration(v as number)).toBe(want));
});

describe('formatPercent', () => {
  it.each([
    [0.138, '13.8%'],
    [0, '0%'],
    [1, '100%'],
    [0.5, '50%'],
    [0.00001, '<0.1%'],
  ])('%s → %s', (v, want) => expect(formatPercent(v)).toBe(want));
  it('takes the digits', () => expect(formatPercent(0.1234, 2)).toBe('12.34%'));
});

describe('counts and sizes', () => {
  it('formats', () => {
    expect(formatInt(1520)).toBe('1,520');
    expect(formatCompact(9999)).toBe('9,999');
    expect(formatCompact(845_000)).toBe('845K');
    expect(formatCompact(7_712_000)).toBe('7.7M');
    expect(formatCompact(2_000_000_000)).toBe('2B');
    expect(formatBytes(65536)).toBe('64 KiB');
    expect(formatBytes(1048576)).toBe('1 MiB');
    expect(formatBytes(12)).toBe('12 B');
  });
  it('says how long ago', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(formatRelative('2026-11-22T11:59:30Z', now)).toBe('30 s ago');
    expect(formatRelative('2026-11-22T09:00:00Z', now)).toBe('3 h ago');
    expect(formatRelative('2026-11-25T12:00:00Z', now)).toBe('in 3 d');
    expect(formatRelative(null, now)).toBe('never');
    expect(formatRelative('2026-11-22T11:59:58Z', now)).toBe('just now');
  });
});

describe('fillDays', () => {
  it('fills the days of the range with zeros', () => {
    const got = fillDays([{ day: '2026-11-21', requests: 3, costUsd: 0.5 }], '2026-11-19T10:00:00Z', '2026-11-22T10:00:00Z');
    expect(got).toEqual([
      { day: '2026-11-19', requests: 0, costUsd: 0 },
      { day: '2026-11-20', requests: 0, costUsd: 0 },
      { day: '2026-11-21', requests: 3, costUsd: 0.5 },
      { day: '2026-11-22', requests: 0, costUsd: 0 },
    ]);
  });
});

describe('bodies', () => {
  it('splits a logged stream of JSON values', () => {
    expect(splitJSONStream('{"a":1}{"b":"}{"}\n[2]')).toEqual(['{"a":1}', '{"b":"}{"}', '[2]']);
    expect(splitJSONStream('{"a":1} x')).toBeNull();
    expect(splitJSONStream('"str"')).toBeNull();
    expect(splitJSONStream('{"a":')).toBeNull();
    expect(splitJSONStream('data: {}')).toBeNull();
  });
  it('shows bodies readably', () => {
    expect(prettyBody('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyBody('{"a": 1}{"b": 2}')).toBe('{"a":1}\n{"b":2}');
    expect(prettyBody('plain text')).toBe('plain text');
  });
});
