// The layout of a trace as a span waterfall: the span tree flattened in
// depth-first order, each bar placed by its offset from the trace's start.

export interface SpanNode {
  spanId: string;
  parentId: string;
  name: string;
  start: string;
  durationMs: number;
  status: string;
  attributes?: Record<string, string> | null;
  children?: SpanNode[] | null;
}

export interface WaterfallRow {
  span: SpanNode;
  depth: number;
  /** offsetMs from the trace's start. */
  offsetMs: number;
  /** left and width as percentages of the trace's duration. */
  left: number;
  width: number;
}

/**
 * isoToMs reads an RFC 3339 time as milliseconds since the epoch, keeping
 * the sub-millisecond digits that Date.parse drops (spans of a fast
 * request are shorter than a millisecond).
 */
export function isoToMs(iso: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(iso);
  if (!m) return new Date(iso).getTime();
  const whole = new Date(m[1] + m[3]).getTime();
  return whole + (m[2] ? Number('0' + m[2]) * 1000 : 0);
}

/** layoutWaterfall flattens the tree under root. The total is the trace's duration or, when shorter, the end of the last span. */
export function layoutWaterfall(root: SpanNode | null | undefined, traceStart: string, traceDurationMs: number): WaterfallRow[] {
  if (!root) return [];
  const t0 = isoToMs(traceStart);
  const flat: { span: SpanNode; depth: number; offsetMs: number }[] = [];
  const walk = (s: SpanNode, depth: number) => {
    const off = Math.max(0, isoToMs(s.start) - t0);
    flat.push({ span: s, depth, offsetMs: Number.isFinite(off) ? off : 0 });
    const kids = [...(s.children ?? [])].sort((a, b) => isoToMs(a.start) - isoToMs(b.start));
    for (const c of kids) walk(c, depth + 1);
  };
  walk(root, 0);
  const end = Math.max(traceDurationMs, ...flat.map((r) => r.offsetMs + r.span.durationMs), 0.001);
  return flat.map((r) => {
    const left = (r.offsetMs / end) * 100;
    const width = Math.max((r.span.durationMs / end) * 100, 0.5);
    return { ...r, left: Math.min(left, 99.5), width: Math.min(width, 100 - Math.min(left, 99.5)) };
  });
}
