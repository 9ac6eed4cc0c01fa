// Overview: the usage figures of a range (stats) and their time series.
// The server applies the scope rule: an Administrator sees any tenant or
// all; the Tenant Administrator, Finance and the AI Manager their tenant;
// Member and Viewer their own requests (seesTenantFigures).

import { useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Point, Stats } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RangeControl, useRangeParam } from '../components/RangeControl';
import { TenantPicker } from '../components/TenantPicker';
import { CacheSavingsChart, CostChart, LatencyChart, TrafficChart } from '../components/UsageCharts';
import { PageHeader, Stat } from '../components/ui';
import { formatCompact, formatDuration, formatInt, formatPercent, formatUSD } from '../lib/format';
import { seesTenantFigures } from '../lib/policy';
import type { TimeRange } from '../lib/range';

export function Overview() {
  const { role, tenant } = useApp();
  const [tick, setTick] = useState(0);
  const { choice, range: r, setChoice } = useRangeParam('24h', tick);
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
        <RangeControl key={JSON.stringify(choice)} choice={choice} onChange={setChoice} />
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
        {(ts) => <Charts points={ts.points} range={r} />}
      </QueryView>
    </>
  );
}

/** Charts draws traffic, cost, latency and cache savings over a time series (Overview and a gateway's Activity). */
export function Charts({ points, range }: { points: Point[]; range: TimeRange }) {
  return (
    <section className="charts" aria-label="Charts">
      <TrafficChart points={points} range={range} />
      <CostChart points={points} range={range} />
      <LatencyChart points={points} range={range} />
      <CacheSavingsChart points={points} range={range} />
    </section>
  );
}
