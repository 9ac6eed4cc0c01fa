// The usage charts of Overview and Analytics: latency percentiles, cost per
// group, errors by reason, cache savings and guardrail hits over time. Each
// shapes its answer with lib/series.ts and draws it with TimeChart.

import { useMemo, useState } from 'react';
import { Q } from '../api/queries';
import type { GroupTimeseries, Point } from '../api/types';
import { formatCompact, formatDuration, formatInt, formatUSD, formatUSDAxis } from '../lib/format';
import type { TimeRange } from '../lib/range';
import { cacheSavings, percentileSeries, topWithOther, type Metric } from '../lib/series';
import { TimeChart, type SeriesDef } from './Chart';
import { QueryView, useGQL } from './data';

/** TOP_N is how many groups a per-group chart draws before "Other". */
export const TOP_N = 5;

const span = (r: TimeRange): [string, string] => [r.from, r.to];

export function LatencyChart({ points, range }: { points: Point[]; range: TimeRange }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const series = useMemo<SeriesDef[]>(() => {
    const p = percentileSeries(points);
    return [
      { label: 'p50', color: '--chart-1', values: p.p50, fmt: formatDuration },
      { label: 'p95', color: '--chart-2', values: p.p95, fmt: formatDuration },
      { label: 'p99', color: '--chart-4', values: p.p99, fmt: formatDuration },
    ];
  }, [points]);
  return <TimeChart id="latency" title="Latency percentiles" unit="ms" ts={ts} series={series} range={span(range)} />;
}

export function TrafficChart({ points, range }: { points: Point[]; range: TimeRange }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const series = useMemo<SeriesDef[]>(
    () => [
      { label: 'Requests', color: '--chart-requests', values: points.map((p) => p.requests), fmt: formatCompact, fill: true },
      { label: 'Errors', color: '--chart-errors', values: points.map((p) => p.errors), fmt: formatCompact },
    ],
    [points],
  );
  return <TimeChart id="traffic" title="Requests and errors" unit="requests" ts={ts} series={series} range={span(range)} integer />;
}

export function CostChart({ points, range }: { points: Point[]; range: TimeRange }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const series = useMemo<SeriesDef[]>(() => [{ label: 'Cost', color: '--chart-cost', values: points.map((p) => p.costUsd), fmt: formatUSDAxis }], [points]);
  const total = points.reduce((t, p) => t + p.costUsd, 0);
  return <TimeChart id="cost" title="Cost" unit="USD" summary={`${formatUSD(total)} in total`} ts={ts} series={series} range={span(range)} bars />;
}

export function CacheSavingsChart({ points, range }: { points: Point[]; range: TimeRange }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const saved = useMemo(() => cacheSavings(points), [points]);
  const series = useMemo<SeriesDef[]>(() => [{ label: 'Saved by cache hits', color: '--chart-savings', values: saved.perBucket, fmt: formatUSDAxis }], [saved]);
  const hits = points.reduce((t, p) => t + (p.cached ?? 0), 0);
  return (
    <TimeChart id="cache-savings" title="Cache savings" unit="USD" summary={`${formatUSD(saved.total)} saved by ${formatInt(hits)} cache hits`} ts={ts} series={series} range={span(range)} bars />
  );
}

/** GroupLines draws a per-group answer: the top groups and "Other" as lines. */
function GroupLines({ gt, metric, id, title, unit, range, fmt }: { gt: GroupTimeseries; metric: Metric; id: string; title: string; unit: string; range: TimeRange; fmt: (v: number) => string }) {
  const shaped = useMemo(() => topWithOther(gt, metric, TOP_N), [gt, metric]);
  const series = useMemo<SeriesDef[]>(() => shaped.series.map((s) => ({ label: s.label, color: s.color, values: s.values, fmt })), [shaped, fmt]);
  const total = shaped.series.reduce((t, s) => t + s.total, 0);
  const summary = metric === 'costUsd' ? `${formatUSD(total)} in total` : `${formatInt(total)} in total`;
  return <TimeChart id={id} title={title} unit={unit} summary={summary} ts={shaped.ts} series={series} range={span(range)} integer={metric !== 'costUsd'} />;
}

const COST_GROUPS = [
  ['model', 'model'],
  ['gateway', 'gateway'],
  ['user', 'user'],
] as const;

/** CostByGroupChart is the cost of the top models, gateways or users over time. */
export function CostByGroupChart({ tenantId, range }: { tenantId: string | null; range: TimeRange }) {
  const [groupBy, setGroupBy] = useState<string>('model');
  const q = useGQL<{ seriesByGroup: GroupTimeseries }>(Q.seriesByGroup, { tenantId, groupBy, interval: range.interval, from: range.from, to: range.to, limit: TOP_N });
  return (
    <div className="chart-with-controls">
      <div className="chart-controls">
        <div className="inline-field">
          <label htmlFor="cost-by">Cost by</label>
          <select id="cost-by" value={groupBy} onChange={(e) => setGroupBy(e.target.value)}>
            {COST_GROUPS.map(([k, l]) => (
              <option key={k} value={k}>
                {l}
              </option>
            ))}
          </select>
        </div>
      </div>
      <QueryView<GroupTimeseries> q={q} field="seriesByGroup" what="cost per group">
        {(gt) => <GroupLines gt={gt} metric="costUsd" id="cost-by-group" title={`Cost by ${groupBy}, top ${TOP_N} and other`} unit="USD" range={range} fmt={formatUSDAxis} />}
      </QueryView>
    </div>
  );
}

/** ErrorsByReasonChart draws the errors per bucket: upstream failures, and refusals by reason. */
export function ErrorsByReasonChart({ gt, range }: { gt: GroupTimeseries; range: TimeRange }) {
  return <GroupLines gt={gt} metric="errors" id="errors-by-reason" title="Errors by reason" unit="requests" range={range} fmt={formatCompact} />;
}

/** GuardrailHitsChart is the content-rule hits of the tenant's gateways over time. */
export function GuardrailHitsChart({ tenantId, range }: { tenantId: string | null; range: TimeRange }) {
  const q = useGQL<{ tenantGuardrailStats: { total: number; points: { ts: string; requests: number }[] } }>(Q.tenantGuardrails, { tenantId, from: range.from, to: range.to });
  return (
    <QueryView<{ total: number; points: { ts: string; requests: number }[] }> q={q} field="tenantGuardrailStats" what="guardrail hits">
      {(g) => <GuardrailLines total={g.total} points={g.points} range={range} />}
    </QueryView>
  );
}

function GuardrailLines({ total, points, range }: { total: number; points: { ts: string; requests: number }[]; range: TimeRange }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const series = useMemo<SeriesDef[]>(() => [{ label: 'Rule hits', color: '--chart-hits', values: points.map((p) => p.requests), fmt: formatCompact }], [points]);
  return <TimeChart id="guardrail-hits" title="Guardrail hits" unit="hits" summary={`${formatInt(total)} in total`} ts={ts} series={series} range={span(range)} integer bars />;
}
