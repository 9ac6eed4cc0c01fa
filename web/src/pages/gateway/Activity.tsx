// A gateway's Activity, the first tab: what it did over a range —
// requests, errors split into upstream failures and refusals, latency,
// spend, its top models — and the circuit breakers of its keys now.

import { useMemo, useState } from 'react';
import { Q } from '../../api/queries';
import type { BreakerState, Connection, Gateway, Group, Point, Stats } from '../../api/types';
import { QueryView, useGQL } from '../../components/data';
import { RangePicker } from '../../components/TenantPicker';
import { Empty, Stat } from '../../components/ui';
import { formatDuration, formatInt, formatPercent, formatUSD } from '../../lib/format';
import { RANGES, rangeOf, type RangeId } from '../../lib/range';
import { Link } from '../../lib/router';
import { Charts } from '../Overview';
import { BreakerBadge } from './Observe';

type ActivityData = {
  stats: Stats;
  timeseries: { interval: string; points: Point[] };
  analytics: { groups: Group[] };
  circuitBreaker: Connection<BreakerState>;
};

export function Activity({ gateway: g }: { gateway: Gateway }) {
  const [range, setRange] = useState<RangeId>('24h');
  const [tick, setTick] = useState(0);
  const r = useMemo(() => rangeOf(range), [range, tick]);
  const q = useGQL<ActivityData>(Q.gatewayActivity, { id: g.id, from: r.from, to: r.to, interval: r.interval });
  return (
    <>
      <section className="panel">
        <div className="panel-head">
          <h2>Activity</h2>
          <RangePicker value={range} onChange={setRange} options={RANGES} />
          <button type="button" onClick={() => setTick((t) => t + 1)}>
            Refresh
          </button>
        </div>
        <QueryView<Stats> q={q} field="stats" what="the gateway's figures">
          {(s) => <Figures s={s} />}
        </QueryView>
      </section>
      <QueryView<{ points: Point[] }> q={q} field="timeseries" what="the gateway's time series">
        {(ts) => <Charts points={ts.points} range={r} />}
      </QueryView>
      <div className="activity-grid">
        <section className="panel" aria-labelledby="top-models">
          <h2 id="top-models">Top models</h2>
          <QueryView<{ groups: Group[] }> q={q} field="analytics" what="the gateway's models">
            {(a) => <TopModels groups={a.groups.slice(0, 8)} />}
          </QueryView>
        </section>
        <section className="panel" aria-labelledby="breakers-now">
          <h2 id="breakers-now">Circuit breakers now</h2>
          <QueryView<Connection<BreakerState>> q={q} field="circuitBreaker" what="the circuit breakers">
            {(c) => <BreakerList states={c.data} gatewayId={g.id} />}
          </QueryView>
        </section>
      </div>
    </>
  );
}

function Figures({ s }: { s: Stats }) {
  const reasons = (s.refusalsByReason ?? []).map((x) => `${x.reason} ${formatInt(x.count)}`).join(', ');
  return (
    <div className="stats" role="group" aria-label="Gateway figures">
      <Stat label="Requests" value={formatInt(s.requests)} sub={`${formatInt(s.cached)} from cache`} />
      <Stat
        label="Errors"
        value={formatInt(s.errors)}
        sub={`${formatInt(s.upstreamErrors ?? 0)} upstream failures · ${formatInt(s.refusals ?? 0)} refusals${s.requests ? ` · ${formatPercent(s.errors / s.requests)}` : ''}`}
      />
      <Stat label="Latency p50" value={formatDuration(s.latencyMs.p50)} sub={`p99 ${formatDuration(s.latencyMs.p99)}`} />
      <Stat label="Spend" value={formatUSD(s.costUsd)} />
      {reasons && <Stat label="Refusals by reason" value={formatInt(s.refusals ?? 0)} sub={reasons} />}
    </div>
  );
}

function TopModels({ groups }: { groups: Group[] }) {
  if (groups.length === 0) return <Empty>No requests in this range.</Empty>;
  return (
    <table className="table" aria-label="Top models">
      <thead>
        <tr>
          <th scope="col">Model</th>
          {['Requests', 'Errors', 'p50', 'Spend'].map((h) => (
            <th key={h} scope="col" className="num">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {groups.map((m) => (
          <tr key={m.key}>
            <td className="wrap">
              <code>{m.key || '—'}</code>
            </td>
            <td className="num">{formatInt(m.requests)}</td>
            <td className="num">{formatInt(m.errors)}</td>
            <td className="num">{formatDuration(m.latencyMs.p50)}</td>
            <td className="num">{formatUSD(m.costUsd)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BreakerList({ states, gatewayId }: { states: BreakerState[]; gatewayId: string }) {
  if (states.length === 0) return <Empty>No provider keys, so no breakers.</Empty>;
  return (
    <>
      <ul className="breaker-list" aria-label="Breaker states">
        {states.map((b) => (
          <li key={b.provider + '/' + b.keyAlias} data-breaker={`${b.provider}/${b.keyAlias}`}>
            <span>
              {b.provider}/<code>{b.keyAlias}</code>
            </span>
            <BreakerBadge state={b.state} />
            {b.lastError ? <span className="hint wrap">{b.lastError}</span> : null}
          </li>
        ))}
      </ul>
      <p className="hint">
        <Link to={`/ui/gateways/${gatewayId}/keys`}>Provider keys</Link> tests and rotates keys.
      </p>
    </>
  );
}
