// The time ranges of the figures pages.

export type RangeId = '24h' | '7d' | '30d';

export const RANGES: { id: RangeId; label: string }[] = [
  { id: '24h', label: 'Last 24 hours' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
];

const HOURS: Record<RangeId, number> = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30 };

/** rangeOf returns from/to (RFC 3339) and the time-series interval for a range ending at now. */
export function rangeOf(id: RangeId, now: Date = new Date()): { from: string; to: string; interval: 'hour' | 'day' } {
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
