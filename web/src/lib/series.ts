// Data shaping of the charts: series per group with "other", latency
// percentiles with gaps for empty buckets, cache savings over time. Pure
// functions, unit-tested; the charts (components/Chart.tsx) draw the result.

import type { GroupTimeseries, Point } from '../api/types';

/** PALETTE names the CSS custom properties of the series colours (styles.css; dark mode overrides them). */
export const PALETTE = ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5', '--chart-6', '--chart-7', '--chart-8'];
/** OTHER_COLOR is the colour of the "other" series. */
export const OTHER_COLOR = '--chart-other';

export type Metric = 'costUsd' | 'requests' | 'errors';

/** Shaped is what a chart draws: the bucket times and one value list per series. */
export interface ShapedSeries {
  key: string;
  label: string;
  color: string;
  total: number;
  values: number[];
}

/** groupLabel names a group key for people: "(none)" for an empty key, the error reasons in words. */
export function groupLabel(groupBy: string, key: string): string {
  if (groupBy === 'error_reason') return key === 'upstream' ? 'Upstream failures' : `Refused: ${key || '(none)'}`;
  return key || '(none)';
}

/**
 * topWithOther keeps the n series with the most of metric (ties broken by
 * key) and sums every other one, and the server's own "other", into one
 * series labelled "Other". Series whose metric is 0 over the range are
 * left out (an all-zero line says nothing), except that an answer with
 * nothing else keeps them.
 */
export function topWithOther(gt: GroupTimeseries, metric: Metric, n: number): { ts: string[]; series: ShapedSeries[] } {
  const first = gt.series[0] ?? gt.other;
  const ts = first ? first.points.map((p) => p.ts) : [];
  const ranked = [...gt.series].sort((a, b) => b[metric] - a[metric] || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const nonZero = ranked.filter((s) => s[metric] > 0);
  const kept = (nonZero.length ? nonZero : ranked).slice(0, n);
  const rest = [...ranked.filter((s) => !kept.includes(s)), ...(gt.other ? [gt.other] : [])];
  const out: ShapedSeries[] = kept.map((s, i) => ({
    key: s.key,
    label: groupLabel(gt.groupBy, s.key),
    color: PALETTE[i % PALETTE.length],
    total: s[metric],
    values: s.points.map((p) => p[metric]),
  }));
  const otherTotal = rest.reduce((t, s) => t + s[metric], 0);
  if (otherTotal > 0) {
    const values = ts.map(() => 0);
    for (const s of rest) s.points.forEach((p, i) => (values[i] += p[metric]));
    out.push({ key: '', label: 'Other', color: OTHER_COLOR, total: otherTotal, values });
  }
  return { ts, series: out };
}

/** percentileSeries are the p50, p95 and p99 lines of time-series points; a bucket without requests is a gap (null), not 0 ms. */
export function percentileSeries(points: Point[]): { p50: (number | null)[]; p95: (number | null)[]; p99: (number | null)[] } {
  const of = (k: 'p50' | 'p95' | 'p99') => points.map((p) => (p.requests > 0 && p.latencyMs ? p.latencyMs[k] : null));
  return { p50: of('p50'), p95: of('p95'), p99: of('p99') };
}

/** cacheSavings are the USD cache hits saved per bucket, their running total and the total. */
export function cacheSavings(points: Point[]): { perBucket: number[]; cumulative: number[]; total: number } {
  let run = 0;
  const perBucket = points.map((p) => p.cacheSavedUsd ?? 0);
  const cumulative = perBucket.map((v) => +(run += v).toFixed(10));
  return { perBucket, cumulative, total: run };
}

/** hasData reports whether any value of the series is above zero. */
export function hasData(values: (number | null)[][]): boolean {
  return values.some((vs) => vs.some((v) => v != null && v > 0));
}
