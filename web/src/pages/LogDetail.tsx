// One request log with its bodies, and its trace as a span waterfall.

import { useState } from 'react';
import { Q } from '../api/queries';
import type { LogRecord, Trace } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RefLink } from '../components/RefLink';
import { Badge, CopyButton, Empty, PageHeader, StatusBadge } from '../components/ui';
import { formatDuration, formatInt, formatTime, prettyBody } from '../lib/format';
import { Link } from '../lib/router';
import { modelLabel } from '../lib/logs';
import { layoutWaterfall } from '../lib/waterfall';
import { Cost, logUnpriced } from '../components/Cost';

export function LogDetail({ id }: { id: string }) {
  const q = useGQL<{ log: LogRecord }>(Q.log, { id });
  return (
    <QueryView<LogRecord> q={q} field="log" what="this request log">
      {(l) => (
        <>
          <PageHeader
            title={modelLabel(l)}
            subtitle={
              <>
                <Link to="/ui/logs">Logs</Link> / <code>{l.id}</code> <CopyButton text={l.id} label="Copy id" />
              </>
            }
          />
          <section className="panel">
            <h2>Request</h2>
            <dl className="facts grid" data-testid="log-facts">
              <dt>Time</dt>
              <dd>{formatTime(l.ts)}</dd>
              <dt>Status</dt>
              <dd>
                <StatusBadge status={l.status} /> {l.errorCode && <code>{l.errorCode}</code>}
              </dd>
              {l.errorMessage ? (
                <>
                  <dt>Error message</dt>
                  <dd>{l.errorMessage}</dd>
                </>
              ) : null}
              <dt>Tenant / gateway</dt>
              <dd>
                {l.tenantId} / <RefLink r={l.gateway} fallback={l.gatewayId || '—'} />
              </dd>
              <dt>Operation</dt>
              <dd>{l.operation ? <code>{l.operation}</code> : '—'}</dd>
              <dt>Route</dt>
              <dd>{l.route || '—'}</dd>
              <dt>Token / user</dt>
              <dd>
                <RefLink r={l.token} fallback={l.tokenId || '—'} /> / <RefLink r={l.user} fallback={l.userId || '—'} />
              </dd>
              <dt>Latency</dt>
              <dd>
                {formatDuration(l.latencyMs)} (first byte {formatDuration(l.ttfbMs)})
              </dd>
              <dt>Tokens</dt>
              <dd>
                {formatInt(l.tokensIn)} in, {formatInt(l.tokensOut)} out{l.cachedTokens ? `, ${formatInt(l.cachedTokens)} cached` : ''}
                {l.cacheWriteTokens
                  ? `, ${formatInt(l.cacheWriteTokens)} written to the cache${l.cacheWrite1hTokens ? ` (${formatInt(l.cacheWrite1hTokens)} for 1 h)` : ''}`
                  : ''}
                {l.reasoningTokens ? `, ${formatInt(l.reasoningTokens)} reasoning` : ''}
              </dd>
              <dt>Cost</dt>
              <dd>
                <Cost usd={l.costUsd} unpriced={logUnpriced(l)} />
              </dd>
              {l.flags && l.flags.length > 0 && (
                <>
                  <dt>Flags</dt>
                  <dd data-testid="log-flags">{l.flags.join(', ')}</dd>
                </>
              )}
              <dt>Cache</dt>
              <dd>{l.cache || '—'}</dd>
              <dt>Attempts</dt>
              <dd>{l.attempts}</dd>
              <dt>Rule hits</dt>
              <dd>{l.ruleHits?.length ? l.ruleHits.join(', ') : 'none'}</dd>
              <dt>Metadata</dt>
              <dd>
                {l.metadata && Object.keys(l.metadata).length
                  ? Object.entries(l.metadata).map(([k, v]) => (
                      <Badge key={k}>
                        {k}={v}
                      </Badge>
                    ))
                  : 'none'}
              </dd>
              <dt>Client</dt>
              <dd>
                {l.clientIp || '—'} · {l.userAgent || '—'}
              </dd>
            </dl>
          </section>
          <section className="panel">
            <h2>Trace</h2>
            {l.traceId ? <TraceView id={l.traceId} /> : <Empty>This request has no trace.</Empty>}
          </section>
          <div className="bodies">
            <Body title="Request body" text={l.requestBody ?? ''} />
            <Body title="Response body" text={l.responseBody ?? ''} />
          </div>
        </>
      )}
    </QueryView>
  );
}

function Body({ title, text }: { title: string; text: string }) {
  const [raw, setRaw] = useState(false);
  return (
    <section className="panel body">
      <div className="panel-head">
        <h2>{title}</h2>
        {text && (
          <span className="row-actions">
            <button type="button" className="small" onClick={() => setRaw(!raw)} aria-pressed={raw}>
              {raw ? 'Pretty' : 'Raw'}
            </button>
            <CopyButton text={text} />
          </span>
        )}
      </div>
      {text ? <pre tabIndex={0}>{raw ? text : prettyBody(text)}</pre> : <Empty>Not stored (the gateway does not log bodies, or the body was empty).</Empty>}
    </section>
  );
}

export function TraceView({ id }: { id: string }) {
  const q = useGQL<{ trace: Trace }>(Q.trace, { id });
  const [open, setOpen] = useState<string | null>(null);
  return (
    <QueryView<Trace> q={q} field="trace" what="this trace">
      {(t) => {
        const rows = layoutWaterfall(t.root, t.start, t.durationMs);
        if (rows.length === 0) return <Empty>The trace has no spans.</Empty>;
        return (
          <table className="waterfall" data-testid="waterfall">
            <caption className="sr-only">Span waterfall: each span of the trace, when it started and how long it took</caption>
            <thead>
              <tr className="wf-head">
                <th scope="col" className="wf-name">
                  Span
                </th>
                <th scope="col">
                  0 – {formatDuration(t.durationMs)}
                </th>
                <th scope="col" className="wf-dur">
                  Duration
                </th>
              </tr>
            </thead>
            {rows.map((r) => (
              <tbody key={r.span.spanId}>
                <tr className={'wf-row' + (r.span.status === 'error' ? ' wf-error' : '')}>
                  <th scope="row" className="wf-name" style={{ paddingLeft: `${r.depth * 1.1}rem` }}>
                    <button type="button" className="link" aria-expanded={open === r.span.spanId} onClick={() => setOpen(open === r.span.spanId ? null : r.span.spanId)}>
                      {r.span.name}
                    </button>
                  </th>
                  <td>
                    <div className="wf-track">
                      <span className="wf-bar" style={{ left: `${r.left}%`, width: `${r.width}%` }} title={`${r.span.name}: ${formatDuration(r.span.durationMs)} at +${formatDuration(r.offsetMs)}`} />
                      <span className="sr-only">starts at +{formatDuration(r.offsetMs)}</span>
                    </div>
                  </td>
                  <td className="wf-dur">{formatDuration(r.span.durationMs)}</td>
                </tr>
                {open === r.span.spanId && (
                  <tr>
                    <td colSpan={3}>
                      <dl className="facts wf-attrs">
                        <dt>Status</dt>
                        <dd>{r.span.status}</dd>
                        <dt>Starts at</dt>
                        <dd>+{formatDuration(r.offsetMs)}</dd>
                        {Object.entries(r.span.attributes ?? {}).map(([k, v]) => [<dt key={k}>{k}</dt>, <dd key={k + 'v'}>{v}</dd>])}
                      </dl>
                    </td>
                  </tr>
                )}
              </tbody>
            ))}
          </table>
        );
      }}
    </QueryView>
  );
}
