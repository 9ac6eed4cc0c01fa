// Spend: what a tenant cost over a range, by gateway, model, API token,
// user and day, with the budget of the tenant and of each gateway, user and
// token listed. Finance lands here. Every table exports as CSV in the browser.

import { useMemo } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Spend as SpendT } from '../api/types';
import { TimeChart } from '../components/Chart';
import { QueryView, useGQL } from '../components/data';
import { DaySpendTable, ModelSpendTable, ScopeSpendTable } from '../components/SpendTables';
import { RangeControl, useRangeParam } from '../components/RangeControl';
import { TenantPicker, useTenantId } from '../components/TenantPicker';
import { BudgetBar, Empty, PageHeader, Stat } from '../components/ui';
import { fillDays, formatInt, formatUSD, formatUSDAxis } from '../lib/format';
import { allowed } from '../lib/policy';
import { Link } from '../lib/router';
import { unpricedSub } from '../components/Cost';

export function Spend() {
  const tenantId = useTenantId();
  const { choice, range: r, setChoice } = useRangeParam('30d');
  const q = useGQL<{ tenantSpend: SpendT }>(Q.tenantSpend, { tenantId, from: r.from, to: r.to }, !tenantId);
  return (
    <>
      <PageHeader title="Spend" subtitle="Cost of requests, as computed when each was served.">
        <TenantPicker />
        <RangeControl key={JSON.stringify(choice)} choice={choice} onChange={setChoice} />
      </PageHeader>
      {tenantId ? (
        <QueryView<SpendT> q={q} field="tenantSpend" what="the tenant’s spend">
          {(s) => <TenantSpend spend={s} tenantId={tenantId} range={r} />}
        </QueryView>
      ) : (
        <Empty>Pick a tenant to see its spend.</Empty>
      )}
    </>
  );
}

function TenantSpend({ spend: s, tenantId, range }: { spend: SpendT; tenantId: string; range: { from: string; to: string } }) {
  const { role } = useApp();
  const days = useMemo(() => fillDays(s.byDay, range.from, range.to), [s, range.from, range.to]);
  const ts = useMemo(() => days.map((d) => d.day + 'T00:00:00Z'), [days]);
  const series = useMemo(() => [{ label: 'Cost', color: '--chart-cost', values: days.map((d) => d.costUsd), fmt: formatUSDAxis }], [days]);
  const requests = s.byModel.reduce((n, m) => n + m.requests, 0);
  const priced = requests - (s.unpricedRequests ?? 0);
  const rng = { from: s.from, to: s.to };
  const slug = tenantId;
  return (
    <>
      <section className="panel" aria-labelledby="spend-tenant">
        <div className="panel-head">
          <h2 id="spend-tenant">Spend of tenant {tenantId}</h2>
        </div>
        <div className="stats">
          <Stat label="Total cost" value={formatUSD(s.totalUsd)} sub={unpricedSub(s.unpricedRequests)} />
          <Stat label="Requests" value={formatInt(requests)} />
          <Stat label="Cost per request" value={priced ? formatUSD(s.totalUsd / priced) : '—'} sub={s.unpricedRequests ? 'of the priced requests' : undefined} />
        </div>
        <h3>Tenant budget</h3>
        {s.budget ? (
          <BudgetBar budget={s.budget} label="Tenant budget" />
        ) : (
          <p className="hint">
            No tenant budget: the gateways, users and tokens below are limited only by their own budgets.
            {allowed(role, 'tenant.update') && (
              <>
                {' '}
                Set one in <Link to="/ui/tenants">Tenants</Link>.
              </>
            )}
          </p>
        )}
        <TimeChart title="Cost by day" unit="USD" id="spend-by-day" ts={ts} series={series} bars range={[ts[0] ?? range.from, range.to]} />
      </section>
      <ScopeSpendTable
        kind="gateway"
        rows={s.byGateway ?? []}
        totalUsd={s.totalUsd}
        range={rng}
        slug={slug}
        link={allowed(role, 'gateway.list') ? (g) => `/ui/gateways/${g.id}/budget` : undefined}
      />
      <ModelSpendTable spend={s} slug={slug} />
      <ScopeSpendTable kind="token" rows={s.byToken ?? []} totalUsd={s.totalUsd} range={rng} slug={slug} />
      <ScopeSpendTable
        kind="user"
        rows={s.byUser ?? []}
        totalUsd={s.totalUsd}
        range={rng}
        slug={slug}
        link={allowed(role, 'user.list') ? (u) => `/ui/users/${u.id}` : undefined}
      />
      <DaySpendTable days={days} slug={slug} />
    </>
  );
}
