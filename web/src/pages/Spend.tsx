// Spend: what a tenant and each of its gateways cost, by model and by day,
// with the gateway's budget. Exported as CSV in the browser.

import { useMemo, useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Connection, Gateway, Spend as SpendT } from '../api/types';
import { TimeChart } from '../components/Chart';
import { QueryView, useGQL } from '../components/data';
import { RangePicker, TenantPicker, useTenantId } from '../components/TenantPicker';
import { BudgetBar, Empty, PageHeader, Stat } from '../components/ui';
import { downloadCSV, toCSV } from '../lib/csv';
import { fillDays, formatInt, formatUSD, formatUSDAxis } from '../lib/format';
import { allowed } from '../lib/policy';
import { RANGES, rangeOf, type RangeId } from '../lib/range';

/** spendCSV is a spend report as CSV: one row per model, then one per day. */
export function spendCSV(s: SpendT, scope: string): string {
  return toCSV(
    ['scope', 'section', 'provider', 'model', 'day', 'requests', 'cost_usd'],
    [
      ...s.byModel.map((m) => [scope, 'model', m.provider, m.model, '', m.requests, m.costUsd]),
      ...s.byDay.map((d) => [scope, 'day', '', '', d.day, d.requests, d.costUsd]),
    ],
  );
}

export function Spend() {
  const { role } = useApp();
  const tenantId = useTenantId();
  const [range, setRange] = useState<RangeId>('30d');
  const r = useMemo(() => rangeOf(range), [range]);
  const q = useGQL<{ tenantSpend: SpendT }>(Q.tenantSpend, { tenantId, from: r.from, to: r.to });
  const canGateways = allowed(role, 'gateway.list') || role === 'demo_user';
  const gws = useGQL<{ gateways: Connection<Gateway> }>(Q.gateways, { tenantId }, !canGateways);
  return (
    <>
      <PageHeader title="Spend" subtitle="Cost of requests, as computed when each was served.">
        <TenantPicker />
        <RangePicker value={range} onChange={setRange} options={RANGES} />
      </PageHeader>
      <QueryView<SpendT> q={q} field="tenantSpend" what="the tenant’s spend">
        {(s) => <SpendView spend={s} scope={`tenant ${tenantId}`} filename={`sluice-spend-${tenantId}.csv`} range={[r.from, r.to]} />}
      </QueryView>
      {canGateways ? (
        <GatewaySpend gateways={gws.data?.gateways?.data ?? []} from={r.from} to={r.to} />
      ) : (
        <p className="hint">Spend per gateway is listed for roles that manage gateways; the tenant total above covers all of them.</p>
      )}
    </>
  );
}

function SpendView({ spend: s, scope, filename, range }: { spend: SpendT; scope: string; filename: string; range: [string, string] }) {
  const days = useMemo(() => fillDays(s.byDay, range[0], range[1]), [s, range[0], range[1]]);
  const ts = useMemo(() => days.map((d) => d.day + 'T00:00:00Z'), [days]);
  const series = useMemo(() => [{ label: 'Cost', color: '#059669', values: days.map((d) => d.costUsd), fmt: formatUSDAxis }], [days]);
  const requests = s.byModel.reduce((n, m) => n + m.requests, 0);
  return (
    <section className="panel">
      <div className="panel-head">
        <h2>Spend of {scope}</h2>
        <button type="button" className="small" onClick={() => downloadCSV(filename, spendCSV(s, scope))}>
          Export CSV
        </button>
      </div>
      <div className="stats">
        <Stat label="Total cost" value={formatUSD(s.totalUsd)} />
        <Stat label="Requests" value={formatInt(requests)} />
        <Stat label="Cost per request" value={requests ? formatUSD(s.totalUsd / requests) : '—'} />
      </div>
      {s.budget && <BudgetBar budget={s.budget} />}
      <TimeChart title="Cost by day" ts={ts} series={series} bars range={[ts[0] ?? range[0], range[1]]} />
      {s.byModel.length === 0 ? (
        <Empty>No spend in this range.</Empty>
      ) : (
        <table className="table">
          <caption>By model</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                Share
              </th>
            </tr>
          </thead>
          <tbody>
            {[...s.byModel]
              .sort((a, b) => b.costUsd - a.costUsd)
              .map((m) => (
                <tr key={m.provider + '/' + m.model}>
                  <td>
                    {m.provider}/{m.model}
                  </td>
                  <td className="num">{formatInt(m.requests)}</td>
                  <td className="num">{formatUSD(m.costUsd)}</td>
                  <td className="num">{s.totalUsd ? ((m.costUsd / s.totalUsd) * 100).toFixed(1) + '%' : '—'}</td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function GatewaySpend({ gateways, from, to }: { gateways: Gateway[]; from: string; to: string }) {
  const [pick, setPick] = useState('');
  const id = pick || gateways[0]?.id || '';
  const q = useGQL<{ gatewaySpend: SpendT }>(Q.gatewaySpend, { id, from, to }, !id);
  if (gateways.length === 0) return null;
  const g = gateways.find((x) => x.id === id);
  return (
    <>
      <div className="panel-head standalone">
        <h2>Per gateway</h2>
        <div className="inline-field">
          <label htmlFor="spend-gateway">Gateway</label>
          <select id="spend-gateway" value={id} onChange={(e) => setPick(e.target.value)}>
            {gateways.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name} ({x.slug})
              </option>
            ))}
          </select>
        </div>
      </div>
      <QueryView<SpendT> q={q} field="gatewaySpend" what="the gateway’s spend">
        {(s) => <SpendView spend={s} scope={`gateway ${g?.slug ?? id}`} filename={`sluice-spend-${g?.slug ?? id}.csv`} range={[from, to]} />}
      </QueryView>
    </>
  );
}
