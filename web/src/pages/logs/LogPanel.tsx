// The side panel of the log explorer: what a triager needs of one request
// (status, the error the client got, model, user and token, cost) and how
// it got its answer (attempts, retries, fallbacks), with a link to the
// full log. Escape or Close closes it and focus goes back to the row.

import { useEffect, useRef } from 'react';
import { Q } from '../../api/queries';
import type { LogRecord, Trace } from '../../api/types';
import { useGQL } from '../../components/data';
import { RefLink } from '../../components/RefLink';
import { Badge, Empty, Loading, StatusBadge } from '../../components/ui';
import { formatDuration, formatInt, formatTime } from '../../lib/format';
import { attemptSummary, attemptsOf, modelLabel } from '../../lib/logs';
import { Link } from '../../lib/router';
import { Cost, logUnpriced } from '../../components/Cost';

export function LogPanel({ log, names, onClose }: { log: LogRecord; names: { gateway: (id: string) => string; token: (id: string) => string; user: (id: string) => string }; onClose: () => void }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.querySelector<HTMLElement>('h2')?.focus();
  }, [log.id]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  const full = useGQL<{ log: LogRecord }>(Q.log, { id: log.id });
  const l = full.data?.log ?? log;
  return (
    <aside ref={ref} className="log-panel panel" role="dialog" aria-modal="false" aria-labelledby="log-panel-title" data-testid="log-panel">
      <div className="panel-head">
        <h2 id="log-panel-title" tabIndex={-1}>
          {modelLabel(l)}
        </h2>
        <button type="button" className="small" onClick={onClose}>
          Close
        </button>
      </div>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={l.status} /> {l.errorCode && <code>{l.errorCode}</code>}
        </dd>
        {(l.errorMessage || l.status >= 400) && (
          <>
            <dt>Error message</dt>
            <dd data-testid="log-panel-error">{l.errorMessage || <span className="muted">not recorded (a log written before Sluice kept it)</span>}</dd>
          </>
        )}
        <dt>Time</dt>
        <dd>{formatTime(l.ts)}</dd>
        <dt>Gateway</dt>
        <dd>
          <RefLink r={l.gateway} fallback={names.gateway(l.gatewayId)} />
        </dd>
        <dt>User / token</dt>
        <dd>
          <RefLink r={l.user} fallback={l.userId ? names.user(l.userId) : '—'} /> / <RefLink r={l.token} fallback={l.tokenId ? names.token(l.tokenId) : '—'} />
        </dd>
        <dt>Latency</dt>
        <dd>{formatDuration(l.latencyMs)}</dd>
        <dt>Tokens</dt>
        <dd>
          {formatInt(l.tokensIn)} in, {formatInt(l.tokensOut)} out
        </dd>
        <dt>Cost</dt>
        <dd>
          <Cost usd={l.costUsd} unpriced={logUnpriced(l)} />
        </dd>
      </dl>
      <h3>Attempts</h3>
      {full.fetching && !full.data ? <Loading what="the attempts" /> : l.traceId ? <Attempts traceId={l.traceId} recorded={l.attempts ?? 0} /> : <p>{attemptSummary([], l.attempts ?? 0)}</p>}
      <p>
        <Link to={`/ui/logs/${l.id}`}>Open the full log with its bodies and trace</Link>
      </p>
    </aside>
  );
}

function Attempts({ traceId, recorded }: { traceId: string; recorded: number }) {
  const q = useGQL<{ trace: Trace | null }>(Q.trace, { id: traceId });
  if (q.fetching && !q.data) return <Loading what="the attempts" />;
  const attempts = attemptsOf(q.data?.trace?.root);
  return (
    <>
      <p data-testid="attempt-summary">{attemptSummary(attempts, recorded)}</p>
      {attempts.length === 0 ? (
        recorded > 0 && <Empty>The trace holds no attempt span.</Empty>
      ) : (
        <ol className="attempts">
          {attempts.map((a) => (
            <li key={a.n + a.kind}>
              <Badge tone={a.ok ? 'good' : 'bad'}>{a.ok ? 'ok' : a.outcome || 'error'}</Badge> {a.kind !== 'first' && <Badge tone="warn">{a.kind}</Badge>}{' '}
              {a.provider ? `${a.provider}/${a.model}` : `attempt ${a.n}`}
              {a.keyAlias && <span className="muted"> key {a.keyAlias}</span>}
              {a.upstreamStatus && a.upstreamStatus !== '0' && <span className="muted"> · upstream {a.upstreamStatus}</span>} · {formatDuration(a.durationMs)}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
