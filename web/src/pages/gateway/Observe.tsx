// What a gateway is doing: circuit-breaker state per provider key,
// content-rule hits, and recent traces.

import { useMemo, useState } from 'react';
import { Q } from '../../api/queries';
import type { BreakerState, Connection, Gateway, GuardrailEvent, TraceSummary } from '../../api/types';
import { QueryView, useGQL } from '../../components/data';
import { RangePicker } from '../../components/TenantPicker';
import { Badge, Empty, Pager, StatusBadge, usePager } from '../../components/ui';
import { formatDuration, formatInt, formatRelative, formatTime } from '../../lib/format';
import { RANGES, rangeOf, type RangeId } from '../../lib/range';
import { Link } from '../../lib/router';

/** BreakerBadge shows a breaker state in words and colour: closed, open or half-open. */
export function BreakerBadge({ state }: { state: string }) {
  return <Badge tone={state === 'closed' ? 'good' : state === 'open' ? 'bad' : 'warn'}>{state.replace('_', '-')}</Badge>;
}

export function Health({ gateway: g }: { gateway: Gateway }) {
  const q = useGQL<{ circuitBreaker: Connection<BreakerState> }>(Q.gatewayHealth, { id: g.id });
  return (
    <section className="panel">
      <h2>Circuit breakers</h2>
      <p className="hint">
        A target opens after {g.circuitBreaker.failureThreshold} consecutive retryable failures and stays open for {g.circuitBreaker.cooldownSeconds} s
        (doubling while probes fail), then lets one probe through.{' '}
        <button type="button" className="link" onClick={q.refetch}>
          Refresh
        </button>
      </p>
      <QueryView<Connection<BreakerState>> q={q} field="circuitBreaker" what="the circuit-breaker state">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>No provider keys, so no breakers.</Empty>
          ) : (
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Provider key</th>
                  <th scope="col">State</th>
                  <th scope="col" className="num">
                    Consecutive failures
                  </th>
                  <th scope="col">Opened</th>
                  <th scope="col">Next probe</th>
                  <th scope="col">Last error</th>
                </tr>
              </thead>
              <tbody>
                {c.data.map((b) => (
                  <tr key={b.provider + '/' + b.keyAlias}>
                    <td>
                      {b.provider}/<code>{b.keyAlias}</code>
                    </td>
                    <td>
                      <BreakerBadge state={b.state} />
                    </td>
                    <td className="num">{b.consecutiveFailures}</td>
                    <td>{b.openedAt ? formatRelative(b.openedAt) : '—'}</td>
                    <td>{b.nextProbeAt ? formatRelative(b.nextProbeAt) : '—'}</td>
                    <td className="wrap">{b.lastError ? `${b.lastError} (${formatRelative(b.lastErrorAt)})` : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryView>
    </section>
  );
}

export function Guardrails({ gateway: g }: { gateway: Gateway }) {
  const [range, setRange] = useState<RangeId>('7d');
  const r = useMemo(() => rangeOf(range), [range]);
  const q = useGQL<{ guardrailStats: { total: number; byRule: { ruleId: string; ruleName: string; action: string; hits: number }[] }; guardrailEvents: Connection<GuardrailEvent> }>(
    Q.gatewayGuardrails,
    { id: g.id, from: r.from, to: r.to },
  );
  return (
    <>
      <section className="panel">
        <div className="panel-head">
          <h2>Content-rule hits</h2>
          <RangePicker value={range} onChange={setRange} options={RANGES} />
        </div>
        <QueryView<{ total: number; byRule: { ruleId: string; ruleName: string; action: string; hits: number }[] }> q={q} field="guardrailStats" what="guardrail figures">
          {(s) =>
            s.total === 0 ? (
              <Empty>No rule hits in this range.</Empty>
            ) : (
              <table className="table">
                <caption>{formatInt(s.total)} hits</caption>
                <thead>
                  <tr>
                    <th scope="col">Rule</th>
                    <th scope="col">Action</th>
                    <th scope="col" className="num">
                      Hits
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {s.byRule.map((h) => (
                    <tr key={h.ruleId + h.action}>
                      <td>{h.ruleName}</td>
                      <td>{h.action}</td>
                      <td className="num">{formatInt(h.hits)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </QueryView>
      </section>
      <section className="panel">
        <h2>Recent events</h2>
        <QueryView<Connection<GuardrailEvent>> q={q} field="guardrailEvents" what="guardrail events">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No events.</Empty>
            ) : (
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Rule</th>
                    <th scope="col">Action</th>
                    <th scope="col">Direction</th>
                    <th scope="col">Excerpt (masked)</th>
                    <th scope="col">Request</th>
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((e) => (
                    <tr key={e.id}>
                      <td>{formatTime(e.ts)}</td>
                      <td>{e.ruleName}</td>
                      <td>{e.action}</td>
                      <td>{e.direction}</td>
                      <td className="wrap">
                        <code>{e.excerpt}</code>
                      </td>
                      <td>
                        <Link to={`/ui/logs/${e.requestId}`}>log</Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </QueryView>
      </section>
    </>
  );
}

export function Traces({ gateway: g }: { gateway: Gateway }) {
  const [range, setRange] = useState<RangeId>('24h');
  const r = useMemo(() => rangeOf(range), [range]);
  const pager = usePager();
  const q = useGQL<{ gatewayTraces: Connection<TraceSummary> }>(Q.gatewayTraces, { id: g.id, from: r.from, to: r.to, cursor: pager.cursor });
  return (
    <section className="panel">
      <div className="panel-head">
        <h2>Traces</h2>
        <RangePicker value={range} onChange={(v) => { pager.reset(); setRange(v); }} options={RANGES} />
      </div>
      <QueryView<Connection<TraceSummary>> q={q} field="gatewayTraces" what="traces">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>No traces in this range.</Empty>
          ) : (
            <>
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Start</th>
                    <th scope="col">Model</th>
                    <th scope="col">Status</th>
                    <th scope="col" className="num">
                      Duration
                    </th>
                    <th scope="col" className="num">
                      Spans
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((t) => (
                    <tr key={t.id}>
                      <td>
                        <Link to={`/ui/logs/${t.requestId}`}>{formatTime(t.start)}</Link>
                      </td>
                      <td>{t.model}</td>
                      <td>
                        <StatusBadge status={t.status} />
                      </td>
                      <td className="num">{formatDuration(t.durationMs)}</td>
                      <td className="num">{t.spans}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager pager={pager} nextCursor={c.nextCursor} />
            </>
          )
        }
      </QueryView>
    </section>
  );
}
