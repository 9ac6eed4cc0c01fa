// Analytics: requests, errors, tokens, cost and latency grouped by model,
// provider, gateway, user, status or error code; and for administrators the
// tenant's top lists, error rate and cache savings. CSV export in the browser.

import { useMemo, useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Group, TenantAnalysis } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RangePicker, TenantPicker } from '../components/TenantPicker';
import { Empty, PageHeader, Stat } from '../components/ui';
import { downloadCSV, objectsToCSV } from '../lib/csv';
import { formatCompact, formatDuration, formatInt, formatPercent, formatUSD } from '../lib/format';
import { allowed } from '../lib/policy';
import { RANGES, rangeOf, type RangeId } from '../lib/range';
import { Cost, unpricedSub } from '../components/Cost';

const GROUPS = [
  ['model', 'Model'],
  ['provider', 'Provider'],
  ['gateway', 'Gateway'],
  ['user', 'User'],
  ['status', 'Status'],
  ['error_code', 'Error code'],
] as const;

/** groupsCSV flattens analysis groups for export. */
export function groupsCSV(groups: Group[], groupBy: string): string {
  return objectsToCSV(
    groups.map((g) => ({ ...g, p50: g.latencyMs.p50, p95: g.latencyMs.p95, errorRate: g.requests ? g.errors / g.requests : 0 })),
    [['key', groupBy], 'requests', 'errors', ['errorRate', 'error_rate'], ['tokensIn', 'tokens_in'], ['tokensOut', 'tokens_out'], ['costUsd', 'cost_usd'], ['p50', 'latency_p50_ms'], ['p95', 'latency_p95_ms']],
  );
}

export function Analytics() {
  const { role, tenant, session } = useApp();
  const [range, setRange] = useState<RangeId>('7d');
  const [groupBy, setGroupBy] = useState<string>('model');
  const r = useMemo(() => rangeOf(range), [range]);
  const tenantId = role === 'administrator' ? tenant || null : null;
  const q = useGQL<{ analytics: { groups: Group[] } }>(Q.analytics, { tenantId, groupBy, from: r.from, to: r.to });
  const withTenant = allowed(role, 'tenant.analytics') || role === 'demo_user';
  const ta = useGQL<{ tenantAnalytics: TenantAnalysis }>(Q.tenantAnalytics, { tenantId: tenant || session.user.tenantId, from: r.from, to: r.to }, !withTenant);

  return (
    <>
      <PageHeader title="Analytics" subtitle="Usage grouped the way you choose.">
        {role === 'administrator' && <TenantPicker allowAll />}
        <RangePicker value={range} onChange={setRange} options={RANGES} />
      </PageHeader>
      {withTenant && (
        <QueryView<TenantAnalysis> q={ta} field="tenantAnalytics" what="tenant analytics">
          {(a) => <TenantSummary a={a} tenant={tenant || session.user.tenantId} />}
        </QueryView>
      )}
      <section className="panel">
        <div className="panel-head">
          <div className="inline-field">
            <label htmlFor="group-by">Group by</label>
            <select id="group-by" value={groupBy} onChange={(e) => setGroupBy(e.target.value)}>
              {GROUPS.map(([k, l]) => (
                <option key={k} value={k}>
                  {l}
                </option>
              ))}
            </select>
          </div>
          {q.data?.analytics?.groups?.length ? (
            <button type="button" className="small" onClick={() => downloadCSV(`sluice-analytics-${groupBy}.csv`, groupsCSV(q.data!.analytics.groups, groupBy))}>
              Export CSV
            </button>
          ) : null}
        </div>
        <QueryView<{ groups: Group[] }> q={q} field="analytics" what="analytics">
          {(a) => <GroupTable groups={a.groups} label={GROUPS.find((g) => g[0] === groupBy)?.[1] ?? groupBy} />}
        </QueryView>
      </section>
    </>
  );
}

function TenantSummary({ a, tenant }: { a: TenantAnalysis; tenant: string }) {
  return (
    <section className="panel">
      <h2>Tenant {tenant}</h2>
      <div className="stats">
        <Stat label="Requests" value={formatInt(a.requests)} />
        <Stat label="Error rate" value={formatPercent(a.errorRate)} />
        <Stat label="Cache savings" value={formatUSD(a.cacheSavingsUsd)} sub="cost avoided by cache hits" />
      </div>
      <div className="top-lists">
        <TopList title="Top models" groups={a.topModels} />
        <TopList title="Top users" groups={a.topUsers} />
        <TopList title="Top gateways" groups={a.topGateways} />
      </div>
    </section>
  );
}

function TopList({ title, groups }: { title: string; groups: Group[] }) {
  const max = Math.max(1, ...groups.map((g) => g.requests));
  return (
    <div className="top-list">
      <h3>{title}</h3>
      {groups.length === 0 ? (
        <Empty>None yet.</Empty>
      ) : (
        <ol>
          {groups.slice(0, 8).map((g) => (
            <li key={g.key}>
              <span className="top-key">{g.key || '(none)'}</span>
              <span className="top-bar" aria-hidden="true">
                <span style={{ width: `${(g.requests / max) * 100}%` }} />
              </span>
              <span className="top-val">
                {formatCompact(g.requests)} · <Cost usd={g.costUsd} unpriced={g.unpricedRequests} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** totals sums analysis groups: every request falls in exactly one group. */
export function totals(groups: Group[]) {
  const requests = groups.reduce((n, g) => n + g.requests, 0);
  const errors = groups.reduce((n, g) => n + g.errors, 0);
  return {
    requests,
    errors,
    errorRate: requests ? errors / requests : 0,
    costUsd: groups.reduce((n, g) => n + g.costUsd, 0),
    unpricedRequests: groups.reduce((n, g) => n + (g.unpricedRequests ?? 0), 0),
  };
}

function GroupTable({ groups, label }: { groups: Group[]; label: string }) {
  if (groups.length === 0) return <Empty>No requests in this range.</Empty>;
  const t = totals(groups);
  return (
    <>
      <div className="stats">
        <Stat label="Requests in range" value={formatInt(t.requests)} />
        <Stat label="Error rate" value={formatPercent(t.errorRate)} sub={`${formatInt(t.errors)} errors`} />
        <Stat label="Cost in range" value={formatUSD(t.costUsd)} sub={unpricedSub(t.unpricedRequests)} />
      </div>
      <div className="table-scroll">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Errors
              </th>
              <th scope="col" className="num">
                Error rate
              </th>
              <th scope="col" className="num">
                Tokens in / out
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                p50 / p95
              </th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.key}>
                <td>{g.key || <em>(none)</em>}</td>
                <td className="num">{formatInt(g.requests)}</td>
                <td className="num">{formatInt(g.errors)}</td>
                <td className="num">{formatPercent(g.requests ? g.errors / g.requests : 0)}</td>
                <td className="num">
                  {formatCompact(g.tokensIn)} / {formatCompact(g.tokensOut)}
                </td>
                <td className="num">
                  <Cost usd={g.costUsd} unpriced={g.unpricedRequests} />
                </td>
                <td className="num">
                  {formatDuration(g.latencyMs.p50)} / {formatDuration(g.latencyMs.p95)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
