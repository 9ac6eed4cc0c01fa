// Request logs: a filterable, paged table; a row opens the log with its
// bodies and trace. Filters live in the URL, so a filtered view can be shared.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Connection, Gateway, LogRecord } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { TenantPicker } from '../components/TenantPicker';
import { Badge, Empty, Field, PageHeader, Pager, StatusBadge, usePager } from '../components/ui';
import { objectsToCSV, downloadCSV } from '../lib/csv';
import { formatDuration, formatInt, formatTime } from '../lib/format';
import { localInputToISO } from '../lib/range';
import { Link, setQuery, useLocation } from '../lib/router';
import * as v from '../lib/validate';
import { Cost, logUnpriced } from '../components/Cost';

const KEYS = ['gateway', 'user', 'provider', 'model', 'status', 'error_code', 'operation', 'metadata', 'from', 'to'] as const;
type Filters = Record<(typeof KEYS)[number], string>;

/** OPERATIONS are the front doors a log can name (CONTRACT §12). */
export const OPERATIONS = ['chat', 'completions', 'embeddings', 'responses', 'messages', 'count_tokens', 'models'] as const;
/** logFilter turns the URL's filters into a LogFilterInput; bad input is reported, not sent. */
export function logFilter(f: Filters, tenantId: string): { filter: Record<string, unknown> } | { error: string } {
  const filter: Record<string, unknown> = {};
  if (tenantId) filter.tenantId = tenantId;
  if (f.gateway) filter.gatewayId = f.gateway;
  if (f.user) filter.userId = f.user;
  if (f.provider) filter.provider = f.provider;
  if (f.model) filter.model = f.model;
  if (f.status) {
    const e = v.intIn(f.status, 100, 599, 'The status');
    if (e) return { error: e };
    filter.status = Number(f.status);
  }
  if (f.error_code) filter.errorCode = f.error_code;
  if (f.operation) {
    if (!(OPERATIONS as readonly string[]).includes(f.operation)) return { error: `The operation must be one of ${OPERATIONS.join(', ')}.` };
    filter.operation = f.operation;
  }
  if (f.metadata) {
    const m = v.metadataPairs(f.metadata);
    if ('error' in m) return { error: m.error };
    filter.metadata = m.value;
  }
  const from = localInputToISO(f.from);
  const to = localInputToISO(f.to);
  if (from) filter.from = from;
  if (to) filter.to = to;
  if (from && to && from >= to) return { error: 'The start of the range must be before its end.' };
  return { filter };
}

export function Logs() {
  const { role, tenant, session } = useApp();
  const { query } = useLocation();
  const applied = Object.fromEntries(KEYS.map((k) => [k, query.get(k) ?? ''])) as Filters;
  const tenantId = role === 'administrator' ? tenant : '';
  const built = logFilter(applied, tenantId);
  const key = JSON.stringify(applied) + tenantId;
  const gws = useGQL<{ gateways: Connection<Gateway> }>(Q.gateways, { tenantId: tenant || session.user.tenantId }, role === 'administrator' && !tenant);

  return (
    <>
      <PageHeader title="Logs" subtitle="Every inference request, newest first. Bodies are stored when the gateway logs them, after redaction.">
        {role === 'administrator' && <TenantPicker allowAll />}
      </PageHeader>
      <FilterForm key={"filters" + key} applied={applied} gateways={gws.data?.gateways?.data ?? []} />
      {'error' in built ? (
        <p className="form-error" role="alert">
          {built.error}
        </p>
      ) : (
        <LogTable key={"table" + key} filter={built.filter} gateways={gws.data?.gateways?.data ?? []} />
      )}
    </>
  );
}

function FilterForm({ applied, gateways }: { applied: Filters; gateways: Gateway[] }) {
  const [f, setF] = useState<Filters>(applied);
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setQuery(f);
  };
  return (
    <form className="panel filters" onSubmit={submit} aria-label="Filter logs">
      <div className="form-grid dense">
        <Field label="Gateway">
          <select value={f.gateway} onChange={set('gateway')}>
            <option value="">Any</option>
            {!gateways.some((g) => g.id === f.gateway) && f.gateway && <option value={f.gateway}>{f.gateway}</option>}
            {gateways.map((g) => (
              <option key={g.id} value={g.id}>
                {g.slug}
              </option>
            ))}
          </select>
        </Field>
        <Field label="User id">
          <input value={f.user} onChange={set('user')} placeholder="usr_…" />
        </Field>
        <Field label="Provider">
          <input value={f.provider} onChange={set('provider')} placeholder="openai" />
        </Field>
        <Field label="Model">
          <input value={f.model} onChange={set('model')} placeholder="gpt-4o-mini" />
        </Field>
        <Field label="Status">
          <input inputMode="numeric" value={f.status} onChange={set('status')} placeholder="429" />
        </Field>
        <Field label="Error code">
          <input value={f.error_code} onChange={set('error_code')} placeholder="upstream_error" />
        </Field>
        <Field label="Operation">
          <select value={f.operation} onChange={set('operation')}>
            <option value="">Any</option>
            {OPERATIONS.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Metadata" hint="key=value, one per line; all must match.">
          <textarea rows={1} value={f.metadata} onChange={set('metadata')} placeholder="team=search" />
        </Field>
        <Field label="From">
          <input type="datetime-local" value={f.from} onChange={set('from')} />
        </Field>
        <Field label="To">
          <input type="datetime-local" value={f.to} onChange={set('to')} />
        </Field>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button type="button" onClick={() => setQuery({})}>
          Clear
        </button>
      </div>
    </form>
  );
}

function LogTable({ filter, gateways }: { filter: Record<string, unknown>; gateways: Gateway[] }) {
  const pager = usePager();
  const q = useGQL<{ logs: Connection<LogRecord> }>(Q.logs, { filter, cursor: pager.cursor });
  const slug = (id: string) => gateways.find((g) => g.id === id)?.slug ?? id;
  return (
    <section className="panel">
      <QueryView<Connection<LogRecord>> q={q} field="logs" what="request logs">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>No requests match. Widen the filters, or send one from the Playground.</Empty>
          ) : (
            <>
              <div className="panel-head">
                <span>
                  {c.data.length} requests on this page{' '}
                  <button type="button" className="link" onClick={q.refetch}>
                    Refresh
                  </button>
                </span>
                <button
                  type="button"
                  className="small"
                  onClick={() =>
                    downloadCSV(
                      'sluice-logs.csv',
                      objectsToCSV(c.data, ['id', 'ts', 'tenantId', 'gatewayId', 'userId', 'provider', 'model', 'route', 'status', 'errorCode', 'latencyMs', 'tokensIn', 'tokensOut', 'costUsd', 'cache', 'operation']),
                    )
                  }
                >
                  Export CSV
                </button>
              </div>
              <div className="table-scroll">
                <table className="table logs">
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Gateway</th>
                      <th scope="col">Operation</th>
                      <th scope="col">Model</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="num">
                        Latency
                      </th>
                      <th scope="col" className="num">
                        Tokens in/out
                      </th>
                      <th scope="col" className="num">
                        Cost
                      </th>
                      <th scope="col">Cache</th>
                    </tr>
                  </thead>
                  <tbody>
                    {c.data.map((l) => (
                      <tr key={l.id} data-log={l.id}>
                        <td>
                          <Link to={`/ui/logs/${l.id}`}>{formatTime(l.ts)}</Link>
                        </td>
                        <td>{slug(l.gatewayId)}</td>
                        <td>{l.operation ? <code>{l.operation}</code> : <span className="muted">—</span>}</td>
                        <td>
                          {l.provider}/{l.model}
                          {l.route ? <span className="muted"> via {l.route}</span> : null}
                        </td>
                        <td>
                          <StatusBadge status={l.status} /> {l.errorCode && <code className="muted">{l.errorCode}</code>}
                        </td>
                        <td className="num">{formatDuration(l.latencyMs)}</td>
                        <td className="num">
                          {formatInt(l.tokensIn)} / {formatInt(l.tokensOut)}
                        </td>
                        <td className="num">
                          <Cost usd={l.costUsd} unpriced={logUnpriced(l)} />
                        </td>
                        <td>
                          <Badge tone={l.cache === 'HIT' ? 'good' : 'neutral'}>{l.cache || '—'}</Badge>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pager={pager} nextCursor={c.nextCursor} />
            </>
          )
        }
      </QueryView>
    </section>
  );
}
