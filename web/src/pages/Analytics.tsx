// Analytics: requests, errors, tokens, cost and latency grouped by model,
// provider, gateway, user, status or error code; charts of latency, cost per
// group, errors by reason, cache savings and guardrail hits over time; and
// for administrators the tenant's top lists, error rate and cache savings.
// CSV export in the browser. The range is a preset or custom, in the URL.

import { useState } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Group, GroupTimeseries, Point, TenantAnalysis } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RefLink } from '../components/RefLink';
import { RangeControl, useRangeParam } from '../components/RangeControl';
import { TenantPicker } from '../components/TenantPicker';
import { CacheSavingsChart, CostByGroupChart, ErrorsByReasonChart, GuardrailHitsChart, LatencyChart } from '../components/UsageCharts';
import { Empty, ExportCSV, PageHeader, Stat } from '../components/ui';
import { objectsToCSV } from '../lib/csv';
import { formatCompact, formatDuration, formatInt, formatPercent, formatUSD } from '../lib/format';
import { allowed, seesTenantFigures } from '../lib/policy';
import type { TimeRange } from '../lib/range';
import { Cost, unpricedSub } from '../components/Cost';
import { readsUserNames, refText } from '../lib/refs';

const GROUPS = [
  ['model', 'Model'],
  ['provider', 'Provider'],
  ['gateway', 'Gateway'],
  ['user', 'User'],
  ['status', 'Status'],
  ['error_code', 'Error code'],
] as const;

/** groupsCSV flattens analysis groups for export; a group of a gateway or user carries its name. */
export function groupsCSV(groups: Group[], groupBy: string): string {
  const named = groups.some((g) => g.ref);
  return objectsToCSV(
    groups.map((g) => ({ ...g, name: refText(g.ref, ''), p50: g.latencyMs.p50, p95: g.latencyMs.p95, errorRate: g.requests ? g.errors / g.requests : 0 })),
    [['key', groupBy], ...(named ? [['name', `${groupBy}_name`] as ['name', string]] : []), 'requests', 'errors', ['errorRate', 'error_rate'], ['tokensIn', 'tokens_in'], ['tokensOut', 'tokens_out'], ['costUsd', 'cost_usd'], ['p50', 'latency_p50_ms'], ['p95', 'latency_p95_ms']],
  );
}

export function Analytics() {
  const { role, tenant, session } = useApp();
  const { choice, range: r, setChoice } = useRangeParam('7d');
  const [groupBy, setGroupBy] = useState<string>('model');
  const tenantId = role === 'administrator' ? tenant || null : null;
  const q = useGQL<{ analytics: { groups: Group[] } }>(Q.analytics, { tenantId, groupBy, from: r.from, to: r.to });
  const withTenant = allowed(role, 'tenant.analytics') || role === 'demo_user';
  const ta = useGQL<{ tenantAnalytics: TenantAnalysis }>(Q.tenantAnalytics, { tenantId: tenant || session.user.tenantId, from: r.from, to: r.to }, !withTenant);

  return (
    <>
      <PageHeader
        title="Analytics"
        subtitle={role !== 'administrator' && seesTenantFigures(role) ? "Your tenant's usage, grouped the way you choose." : 'Usage grouped the way you choose.'}
      >
        {role === 'administrator' && <TenantPicker allowAll />}
        <RangeControl key={JSON.stringify(choice)} choice={choice} onChange={setChoice} />
      </PageHeader>
      {withTenant ? (
        <QueryView<TenantAnalysis> q={ta} field="tenantAnalytics" what="tenant analytics">
          {(a) => <TenantSummary a={a} tenant={tenant || session.user.tenantId} />}
        </QueryView>
      ) : (
        <p className="muted" data-testid="tenant-summary-scope">
          The tenant summary (error rate, cache savings, top lists) is for Tenant Administrators; group by gateway, user or model below for the same rankings.
        </p>
      )}
      <OverTime tenantId={tenantId} range={r} withGuardrails={allowed(role, 'guardrail.stats')} />
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
            <ExportCSV filename={`sluice-analytics-${groupBy}.csv`} csv={() => groupsCSV(q.data!.analytics.groups, groupBy)} />
          ) : null}
        </div>
        <QueryView<{ groups: Group[] }> q={q} field="analytics" what="analytics">
          {(a) => (
            <>
              {groupBy === 'user' && !readsUserNames(role) && a.groups.some((g) => g.ref?.state === 'hidden') && (
                <p className="muted" data-testid="names-hidden">
                  Users are shown by id: your role may not read users. A Tenant Administrator sees their emails.
                </p>
              )}
              <GroupTable groups={a.groups} label={GROUPS.find((g) => g[0] === groupBy)?.[1] ?? groupBy} none={NONE[groupBy]} />
            </>
          )}
        </QueryView>
      </section>
    </>
  );
}

/** OverTime is the charts of the range: latency, cost per group, errors by reason, cache savings and guardrail hits. */
function OverTime({ tenantId, range, withGuardrails }: { tenantId: string | null; range: TimeRange; withGuardrails: boolean }) {
  const q = useGQL<{ timeseries: { points: Point[] }; reasons: GroupTimeseries }>(Q.analyticsCharts, { tenantId, from: range.from, to: range.to, interval: range.interval });
  return (
    <section className="panel" aria-labelledby="over-time">
      <h2 id="over-time">Over time</h2>
      <div className="charts">
        <QueryView<{ points: Point[] }> q={q} field="timeseries" what="the time series">
          {(ts) => (
            <>
              <LatencyChart points={ts.points} range={range} />
              <CacheSavingsChart points={ts.points} range={range} />
            </>
          )}
        </QueryView>
        <CostByGroupChart tenantId={tenantId} range={range} />
        <QueryView<GroupTimeseries> q={q} field="reasons" what="errors by reason">
          {(gt) => <ErrorsByReasonChart gt={gt} range={range} />}
        </QueryView>
        {withGuardrails && <GuardrailHitsChart tenantId={tenantId} range={range} />}
      </div>
    </section>
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
        <TopList title="Top models by cost" groups={a.topModels} />
        <TopList title="Top users by cost" groups={a.topUsers} none={NONE.user} />
        <TopList title="Top gateways by cost" groups={a.topGateways} />
      </div>
    </section>
  );
}

/** NONE names the group of requests without a user or gateway (a gateway token has no user). */
const NONE: Record<string, string> = { user: 'no user (gateway tokens)', gateway: 'no gateway' };

/** barWidths are the bar lengths of a top list in percent: proportional to cost, the value the list is sorted by. */
export function barWidths(groups: Group[]): number[] {
  const max = Math.max(0, ...groups.map((g) => g.costUsd));
  return groups.map((g) => (max > 0 ? (g.costUsd / max) * 100 : 0));
}

function TopList({ title, groups, none = '(none)' }: { title: string; groups: Group[]; none?: string }) {
  const shown = groups.slice(0, 8);
  const widths = barWidths(shown);
  return (
    <div className="top-list">
      <h3>{title}</h3>
      {groups.length === 0 ? (
        <Empty>None yet.</Empty>
      ) : (
        <ol aria-label={title}>
          {shown.map((g, i) => (
            <li key={g.key} data-cost={g.costUsd}>
              <span className="top-key" title={g.key}>
                <RefLink r={g.ref} fallback={g.key || none} />
              </span>
              <span className="top-bar" aria-hidden="true">
                <span style={{ width: `${widths[i]}%` }} />
              </span>
              <span className="top-val">
                <Cost usd={g.costUsd} unpriced={g.unpricedRequests} /> · {formatCompact(g.requests)} req
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

function GroupTable({ groups, label, none = '(none)' }: { groups: Group[]; label: string; none?: string }) {
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
                <td>{g.ref ? <RefLink r={g.ref} /> : g.key || <em>{none}</em>}</td>
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
