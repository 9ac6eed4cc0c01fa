// The time ranges of the figures pages: presets ending now, or a custom
// from/to the user picks, both kept in the URL (?range=7d, or
// ?range=custom&from=…&to=…) so that a view can be bookmarked and shared.

export type RangeId = '24h' | '7d' | '30d';

export const RANGES: { id: RangeId; label: string }[] = [
  { id: '24h', label: 'Last 24 hours' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
];

const HOURS: Record<RangeId, number> = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30 };

export type Interval = 'minute' | 'hour' | 'day';

/** A resolved range: RFC 3339 bounds and the time-series interval. */
export interface TimeRange {
  from: string;
  to: string;
  interval: Interval;
}

/** rangeOf returns from/to (RFC 3339) and the time-series interval for a range ending at now. */
export function rangeOf(id: RangeId, now: Date = new Date()): TimeRange {
  // Round "to" up to the next minute so that repeated renders ask the same question.
  const to = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  const from = new Date(to.getTime() - HOURS[id] * 3_600_000);
  return { from: from.toISOString(), to: to.toISOString(), interval: id === '30d' ? 'day' : 'hour' };
}

/** localInputToISO turns a datetime-local value into RFC 3339 UTC ('' stays undefined). */
export function localInputToISO(v: string): string | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** isoToLocalInput turns an RFC 3339 time into a datetime-local value in the browser's zone ('' when invalid). */
export function isoToLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** MAX_RANGE_DAYS is the longest range the server answers (admin.maxRange). */
export const MAX_RANGE_DAYS = 400;

/** intervalFor picks the bucket of a span: minutes up to 6 hours, hours up to 14 days, days beyond (the server allows minute ≤ 2 days, hour ≤ 90 days). */
export function intervalFor(ms: number): Interval {
  if (ms <= 6 * 3_600_000) return 'minute';
  if (ms <= 14 * 86_400_000) return 'hour';
  return 'day';
}

/**
 * checkRangeBounds validates a custom range given as RFC 3339 times: both
 * set and valid, from before to, at most MAX_RANGE_DAYS long and not
 * starting in the future. It returns the range, or the message to show.
 */
export function checkRangeBounds(from: string | undefined, to: string | undefined, now: Date = new Date()): { range: TimeRange } | { error: string } {
  const a = from ? Date.parse(from) : NaN;
  const b = to ? Date.parse(to) : NaN;
  if (Number.isNaN(a) || Number.isNaN(b)) return { error: 'Give both a start and an end.' };
  if (b <= a) return { error: 'The start must be before the end.' };
  if (b - a > MAX_RANGE_DAYS * 86_400_000) return { error: `A range spans at most ${MAX_RANGE_DAYS} days.` };
  if (a > now.getTime()) return { error: 'The start is in the future.' };
  return { range: { from: new Date(a).toISOString(), to: new Date(b).toISOString(), interval: intervalFor(b - a) } };
}

/** checkCustomRange is checkRangeBounds over datetime-local values (the browser's zone). */
export function checkCustomRange(fromLocal: string, toLocal: string, now: Date = new Date()): { range: TimeRange } | { error: string } {
  return checkRangeBounds(localInputToISO(fromLocal), localInputToISO(toLocal), now);
}

/** RangeChoice is the range a page shows: a preset, or custom bounds. */
export type RangeChoice = { id: RangeId } | { id: 'custom'; from: string; to: string };

/** parseRangeQuery reads a range from the URL query, falling back to a preset (an invalid custom range falls back too). */
export function parseRangeQuery(query: URLSearchParams, fallback: RangeId): RangeChoice {
  const id = query.get('range');
  if (id === 'custom') {
    const ok = checkRangeBounds(query.get('from') ?? undefined, query.get('to') ?? undefined);
    return 'range' in ok ? { id: 'custom', from: ok.range.from, to: ok.range.to } : { id: fallback };
  }
  return RANGES.some((r) => r.id === id) ? { id: id as RangeId } : { id: fallback };
}

/** rangeQuery is the URL query of a range choice (merged into the page's other parameters). */
export function rangeQuery(c: RangeChoice): Record<string, string | undefined> {
  return c.id === 'custom' ? { range: 'custom', from: c.from, to: c.to } : { range: c.id, from: undefined, to: undefined };
}

/** resolveRange turns a choice into bounds and an interval (presets end now). */
export function resolveRange(c: RangeChoice, now: Date = new Date()): TimeRange {
  return c.id === 'custom' ? { from: c.from, to: c.to, interval: intervalFor(Date.parse(c.to) - Date.parse(c.from)) } : rangeOf(c.id, now);
}
