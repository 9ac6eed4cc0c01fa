// Overview: the usage figures of a range (stats) and their time series.
// The server applies the scope rule: an Administrator sees any tenant or
// all; the Tenant Administrator, Finance and the AI Manager their tenant;
// Member and Viewer their own requests (seesTenantFigures).

import { useMemo, useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Point, Stats } from '../api/types';
import { TimeChart } from '../components/Chart';
import { QueryView, useGQL } from '../components/data';
import { RangePicker, TenantPicker } from '../components/TenantPicker';
import { PageHeader, Stat } from '../components/ui';
import { formatCompact, formatDuration, formatInt, formatPercent, formatUSD, formatUSDAxis } from '../lib/format';
import { seesTenantFigures } from '../lib/policy';
import { RANGES, rangeOf, type RangeId } from '../lib/range';
import { setQuery, useLocation } from '../lib/router';

export function Overview() {
  const { role, tenant } = useApp();
  const { query } = useLocation();
  const range = (RANGES.some((r) => r.id === query.get('range')) ? query.get('range') : '24h') as RangeId;
  const [tick, setTick] = useState(0);
  const r = useMemo(() => rangeOf(range), [range, tick]);
  const tenantId = role === 'administrator' ? tenant || null : null;
  const q = useGQL<{ stats: Stats; timeseries: { interval: string; points: Point[] } }>(Q.overview, {
    tenantId,
    from: r.from,
    to: r.to,
    interval: r.interval,
  });

  const scope =
    role === 'administrator'
      ? tenant
        ? `Requests of tenant ${tenant}.`
        : 'Requests of all tenants.'
      : seesTenantFigures(role)
        ? 'Requests of your tenant.'
        : 'Requests made with your own tokens.';

  return (
    <>
      <PageHeader title="Overview" subtitle={scope}>
        {role === 'administrator' && <TenantPicker allowAll />}
        <RangePicker value={range} onChange={(v) => setQuery({ range: v })} options={RANGES} />
        <button type="button" onClick={() => setTick((t) => t + 1)}>
          Refresh
        </button>
      </PageHeader>
      <QueryView<Stats> q={q} field="stats" what="usage figures">
        {(s) => (
          <section className="stats" aria-label="Figures">
            <Stat label="Requests" value={formatInt(s.requests)} sub={`${formatInt(s.cached)} from cache`} />
            <Stat label="Errors" value={formatInt(s.errors)} sub={s.requests ? `${formatPercent(s.errors / s.requests)} of requests` : 'no requests'} />
            <Stat label="Tokens" value={formatCompact(s.tokensIn + s.tokensOut)} sub={`${formatCompact(s.tokensIn)} in · ${formatCompact(s.tokensOut)} out`} />
            <Stat label="Cost" value={formatUSD(s.costUsd)} />
            <Stat label="Cache hit rate" value={formatPercent(s.cacheHitRate)} />
            <Stat label="Latency p50" value={formatDuration(s.latencyMs.p50)} sub={`p95 ${formatDuration(s.latencyMs.p95)}`} />
          </section>
        )}
      </QueryView>
      <QueryView<{ points: Point[] }> q={q} field="timeseries" what="the time series">
        {(ts) => <Charts points={ts.points} range={[r.from, r.to]} />}
      </QueryView>
    </>
  );
}

/** Charts draws requests and errors, and cost, over a time series (also a gateway's Activity). */
export function Charts({ points, range }: { points: Point[]; range: [string, string] }) {
  const ts = useMemo(() => points.map((p) => p.ts), [points]);
  const traffic = useMemo(
    () => [
      { label: 'Requests', color: 'var(--chart-requests)', values: points.map((p) => p.requests), fmt: formatCompact, fill: true },
      { label: 'Errors', color: 'var(--chart-errors)', values: points.map((p) => p.errors), fmt: formatCompact },
    ],
    [points],
  );
  const cost = useMemo(() => [{ label: 'Cost', color: 'var(--chart-cost)', values: points.map((p) => p.costUsd), fmt: formatUSDAxis, fill: true }], [points]);
  return (
    <section className="charts" aria-label="Charts">
      <TimeChart title="Requests and errors" ts={ts} series={traffic} range={range} integer />
      <TimeChart title="Cost (USD)" ts={ts} series={cost} range={range} bars />
    </section>
  );
}
