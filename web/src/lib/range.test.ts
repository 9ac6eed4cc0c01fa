import { describe, expect, it } from 'vitest';
import { checkCustomRange, checkRangeBounds, intervalFor, isoToLocalInput, parseRangeQuery, rangeQuery, resolveRange } from './range';

const now = new Date('2026-11-22T12:00:00Z');

describe('custom ranges', () => {
  it('accepts a range and picks its interval', () => {
    expect(checkRangeBounds('2026-11-20T00:00:00Z', '2026-11-21T00:00:00Z', now)).toEqual({
      range: { from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z', interval: 'hour' },
    });
    expect(intervalFor(3 * 3_600_000)).toBe('minute');
    expect(intervalFor(10 * 86_400_000)).toBe('hour');
    expect(intervalFor(60 * 86_400_000)).toBe('day');
  });
  it('refuses a missing bound, an inverted or empty range, one too long and one in the future', () => {
    expect(checkCustomRange('', '2026-11-21T00:00', now)).toEqual({ error: 'Give both a start and an end.' });
    expect(checkRangeBounds('2026-11-21T00:00:00Z', '2026-11-20T00:00:00Z', now)).toEqual({ error: 'The start must be before the end.' });
    expect(checkRangeBounds('2026-11-21T00:00:00Z', '2026-11-21T00:00:00Z', now)).toEqual({ error: 'The start must be before the end.' });
    expect(checkRangeBounds('2025-01-01T00:00:00Z', '2026-11-21T00:00:00Z', now)).toEqual({ error: 'A range spans at most 400 days.' });
    expect(checkRangeBounds('2026-12-01T00:00:00Z', '2026-12-02T00:00:00Z', now)).toEqual({ error: 'The start is in the future.' });
    expect(checkRangeBounds('yesterday', '2026-12-02T00:00:00Z', now)).toEqual({ error: 'Give both a start and an end.' });
  });
  it('round-trips datetime-local values in the browser zone', () => {
    const local = isoToLocalInput('2026-11-20T08:30:00Z');
    expect(checkCustomRange(local, isoToLocalInput('2026-11-20T10:30:00Z'), now)).toEqual({
      range: { from: '2026-11-20T08:30:00.000Z', to: '2026-11-20T10:30:00.000Z', interval: 'minute' },
    });
    expect(isoToLocalInput('nope')).toBe('');
  });
});

describe('ranges in the URL', () => {
  it('reads presets and custom ranges, and falls back on anything invalid', () => {
    expect(parseRangeQuery(new URLSearchParams('range=30d'), '24h')).toEqual({ id: '30d' });
    expect(parseRangeQuery(new URLSearchParams('range=1y'), '7d')).toEqual({ id: '7d' });
    expect(parseRangeQuery(new URLSearchParams(''), '7d')).toEqual({ id: '7d' });
    const c = parseRangeQuery(new URLSearchParams('range=custom&from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z'), '7d');
    expect(c).toEqual({ id: 'custom', from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' });
    expect(parseRangeQuery(new URLSearchParams('range=custom&from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z'), '7d')).toEqual({ id: '7d' });
    expect(parseRangeQuery(new URLSearchParams('range=custom&from=2026-11-21T00:00:00Z'), '24h')).toEqual({ id: '24h' });
  });
  it('writes a choice back and resolves it', () => {
    const c = { id: 'custom' as const, from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' };
    expect(rangeQuery(c)).toEqual({ range: 'custom', from: c.from, to: c.to });
    expect(rangeQuery({ id: '7d' })).toEqual({ range: '7d', from: undefined, to: undefined });
    expect(resolveRange(c)).toEqual({ from: c.from, to: c.to, interval: 'hour' });
    expect(resolveRange({ id: '24h' }, now)).toEqual({ from: '2026-11-21T12:00:00.000Z', to: '2026-11-22T12:00:00.000Z', interval: 'hour' });
  });
});
