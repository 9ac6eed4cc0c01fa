import { describe, expect, it } from 'vitest';
import { isoToMs, layoutWaterfall, type SpanNode } from './waterfall';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, 0, ms)).toISOString();
const span = (id: string, start: number, dur: number, children: SpanNode[] = []): SpanNode => ({
  spanId: id,
  parentId: '',
  name: id,
  start: at(start),
  durationMs: dur,
  status: 'ok',
  children,
});

describe('layoutWaterfall', () => {
  it('flattens depth-first, children by start, placed by offset', () => {
    const root = span('root', 0, 1000, [span('late', 600, 400), span('early', 10, 500, [span('inner', 20, 100)])]);
    const rows = layoutWaterfall(root, at(0), 1000);
    expect(rows.map((r) => [r.span.spanId, r.depth])).toEqual([
      ['root', 0],
      ['early', 1],
      ['inner', 2],
      ['late', 1],
    ]);
    expect(rows[0]).toMatchObject({ left: 0, width: 100, offsetMs: 0 });
    expect(rows[3]).toMatchObject({ left: 60, width: 40, offsetMs: 600 });
  });
  it('stretches to a span that ends after the trace and keeps tiny spans visible', () => {
    const rows = layoutWaterfall(span('root', 0, 100, [span('long', 50, 150), span('tiny', 10, 0)]), at(0), 100);
    expect(rows[2]).toMatchObject({ left: 25, width: 75 });
    expect(rows[1].width).toBeGreaterThan(0);
  });
  it('is empty without a root', () => expect(layoutWaterfall(null, at(0), 0)).toEqual([]));
});

describe('isoToMs', () => {
  it('keeps microseconds', () => {
    expect(isoToMs('2026-11-22T10:00:00.000250Z') - isoToMs('2026-11-22T10:00:00Z')).toBeCloseTo(0.25, 6);
    expect(isoToMs('2026-11-22T10:00:00.5Z') - isoToMs('2026-11-22T10:00:00Z')).toBeCloseTo(500, 6);
    expect(isoToMs('2026-11-22T11:00:00.001+01:00')).toBeCloseTo(isoToMs('2026-11-22T10:00:00.001Z'), 6);
  });
  it('places sub-millisecond spans', () => {
    const rows = layoutWaterfall(
      { spanId: 'r', parentId: '', name: 'r', start: '2026-11-22T10:00:00.000100Z', durationMs: 2, status: 'ok', children: [{ spanId: 'c', parentId: 'r', name: 'c', start: '2026-11-22T10:00:00.001100Z', durationMs: 0.5, status: 'ok' }] },
      '2026-11-22T10:00:00.000100Z',
      2,
    );
    expect(rows[1].left).toBeCloseTo(50, 6);
    expect(rows[1].width).toBeCloseTo(25, 6);
  });
});
