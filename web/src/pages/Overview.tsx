// Overview: the usage figures of a range (stats) and their time series.
// The server applies the scope rule: an Administrator sees any tenant or
// all; the Tenant Administrator, Finance and the AI Manager their tenant;
// Member and Viewer their own requests (seesTenantFigures), which the page
// says, with an empty state that explains the rule when there are none.

import { useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Point, Stats } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RangeControl, useRangeParam } from '../components/RangeControl';
import { TenantPicker } from '../components/TenantPicker';
import { CacheSavingsChart, CostChart, LatencyChart, TrafficChart } from '../components/UsageCharts';
import { Empty, PageHeader, Stat } from '../components/ui';
import { formatCompact, formatDuration, formatInt, formatPercent, formatUSD } from '../lib/format';
import { seesTenantFigures, type Role } from '../lib/policy';
import type { TimeRange } from '../lib/range';
import { unpricedSub } from '../components/Cost';

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
        : (OWN_SCOPE[role] ?? 'Requests made with your own tokens.');
  // A role that sees only its own requests and has none gets the reason, not a page of zeros.
  const noneOfOwn = role !== 'administrator' && !seesTenantFigures(role) && q.data?.stats?.requests === 0;

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
        {(s) =>
          noneOfOwn ? (
            <section className="panel" data-testid="own-scope-empty">
              <Empty>{OWN_EMPTY[role] ?? 'No requests of yours in this range.'}</Empty>
            </section>
          ) : (
            <section className="stats" aria-label="Figures">
              <Stat label="Requests" value={formatInt(s.requests)} sub={`${formatInt(s.cached)} from cache`} />
              <Stat label="Errors" value={formatInt(s.errors)} sub={s.requests ? `${formatPercent(s.errors / s.requests)} of requests` : 'no requests'} />
              <Stat label="Tokens" value={formatCompact(s.tokensIn + s.tokensOut)} sub={`${formatCompact(s.tokensIn)} in · ${formatCompact(s.tokensOut)} out`} />
              <Stat label="Cost" value={formatUSD(s.costUsd)} sub={unpricedSub(s.unpricedRequests)} />
              <Stat label="Cache hit rate" value={formatPercent(s.cacheHitRate)} />
              <Stat label="Latency p50" value={formatDuration(s.latencyMs.p50)} sub={`p95 ${formatDuration(s.latencyMs.p95)}`} />
            </section>
          )
        }
      </QueryView>
      <QueryView<{ points: Point[] }> q={q} field="timeseries" what="the time series">
        {(ts) => (noneOfOwn ? null : <Charts points={ts.points} range={r} />)}
      </QueryView>
    </>
  );
}

/** OWN_SCOPE says what the Overview of a role limited to its own requests shows, and why. */
const OWN_SCOPE: Partial<Record<Role, string>> = {
  member: 'Your usage: Members see the requests made with their own API tokens; a Tenant Administrator sees the whole tenant.',
  viewer: 'Your usage: Viewers see only their own requests; ask a Tenant Administrator for tenant-wide figures.',
};

/** OWN_EMPTY is the empty state of such a role with no requests in the range. */
const OWN_EMPTY: Partial<Record<Role, string>> = {
  member: 'You made no requests in this range. Send one from the Playground, or with an API token from My account.',
  viewer:
    'No requests of yours in this range. Viewers see only their own requests, and a Viewer holds no API tokens; the tenant’s figures are shown to Tenant Administrators, Finance and AI Managers. Ask a Tenant Administrator for tenant-wide figures.',
};

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
