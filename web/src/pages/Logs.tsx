// The log explorer: a filterable, sortable, paged table of request logs
// with a total count; a row opens a side panel with the request's error
// and attempts, and links to the full log. Filters and order live in the
// URL, so a filtered view can be bookmarked.

import { useCallback, useRef, useState, type MouseEvent } from 'react';
import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Connection, Gateway, LogRecord } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RefLink } from '../components/RefLink';
import { TenantPicker } from '../components/TenantPicker';
import { Badge, Empty, ExportCSV, PageHeader, Pager, StatusBadge, usePager } from '../components/ui';
import { objectsToCSV } from '../lib/csv';
import { formatDuration, formatInt, formatTime } from '../lib/format';
import { logFilter, logOrder, modelLabel, nextOrder, readFilters, type LogFilters, type LogOrder, type SortKey } from '../lib/logs';
import { Link, setQuery, useLocation } from '../lib/router';
import { FilterBar, useLogNames, type TokenRef } from './logs/FilterBar';
import { LogPanel } from './logs/LogPanel';
import { Cost, logUnpriced } from '../components/Cost';

export function Logs() {
  const { role, tenant, session } = useApp();
  const { query } = useLocation();
  const applied = readFilters(query);
  const tenantId = role === 'administrator' ? tenant : '';
  const scopeTenant = role === 'administrator' ? tenant : session.user.tenantId;
  const built = logFilter(applied, tenantId);
  const order = logOrder(applied);
  const key = JSON.stringify(applied) + tenantId;
  const gws = useGQL<{ gateways: Connection<Gateway> }>(Q.gateways, { tenantId: tenant || session.user.tenantId }, role === 'administrator' && !tenant);
  const gateways = gws.data?.gateways?.data ?? [];
  const names = useLogNames(scopeTenant, gateways, applied.user);

  return (
    <>
      <PageHeader title="Logs" subtitle="Every inference request. Filter, sort, and open a row to see why it failed. Bodies are stored when the gateway logs them, after redaction.">
        {role === 'administrator' && <TenantPicker allowAll />}
      </PageHeader>
      <FilterBar key={'filters' + key} applied={applied} gateways={gateways} users={names.users} tokens={names.tokens} scoped={!!scopeTenant} />
      {'error' in built ? (
        <p className="form-error" role="alert">
          {built.error}
        </p>
      ) : (
        <LogTable key={'table' + key} filter={built.filter} order={order} applied={applied} gateways={gateways} users={names.users} tokens={names.tokens} />
      )}
    </>
  );
}

const COLUMNS: { label: string; sort?: SortKey; num?: boolean }[] = [
  { label: 'Time', sort: 'ts' },
  { label: 'Gateway' },
  { label: 'Operation' },
  { label: 'Model' },
  { label: 'Status', sort: 'status' },
  { label: 'Latency', sort: 'latency', num: true },
  { label: 'Tokens in/out', sort: 'tokens', num: true },
  { label: 'Cost', sort: 'cost', num: true },
  { label: 'Cache' },
];

function LogTable({
  filter,
  order,
  applied,
  gateways,
  users,
  tokens,
}: {
  filter: Record<string, unknown>;
  order: LogOrder;
  applied: LogFilters;
  gateways: Gateway[];
  users: { id: string; name: string; email: string }[];
  tokens: TokenRef[];
}) {
  const pager = usePager();
  const q = useGQL<{ logs: Connection<LogRecord> }>(Q.logs, { filter, sort: { by: order.by, order: order.order }, cursor: pager.cursor });
  const [open, setOpen] = useState<LogRecord | null>(null);
  const opener = useRef<HTMLElement | null>(null);
  const names = {
    gateway: (id: string) => gateways.find((g) => g.id === id)?.name ?? id,
    user: (id: string) => users.find((u) => u.id === id)?.name || users.find((u) => u.id === id)?.email || id,
    token: (id: string) => tokens.find((t) => t.id === id)?.name ?? id,
  };
  const close = useCallback(() => {
    setOpen(null);
    opener.current?.focus();
  }, []);
  const show = (l: LogRecord, from: HTMLElement | null) => {
    opener.current = from;
    setOpen(l);
  };
  const rowClick = (l: LogRecord) => (e: MouseEvent<HTMLTableRowElement>) => {
    if ((e.target as HTMLElement).closest('a, button')) return;
    show(l, e.currentTarget.querySelector<HTMLElement>('button.row-open'));
  };
  return (
    <div className={'log-explorer' + (open ? ' with-panel' : '')}>
      <section className="panel">
        <QueryView<Connection<LogRecord>> q={q} field="logs" what="request logs">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No requests match. Widen the filters, or send one from the Playground.</Empty>
            ) : (
              <>
                <div className="panel-head">
                  <span>
                    <strong data-testid="log-count">
                      {c.totalCount != null ? `${formatInt(c.totalCount)} ${c.totalCount === 1 ? 'request' : 'requests'}` : `${c.data.length} requests on this page`}
                    </strong>{' '}
                    <button type="button" className="link" onClick={q.refetch}>
                      Refresh
                    </button>
                  </span>
                  <ExportCSV filename="sluice-logs.csv" csv={() => objectsToCSV(c.data, ['id', 'ts', 'tenantId', 'gatewayId', 'userId', 'tokenId', 'provider', 'model', 'route', 'status', 'errorCode', 'errorMessage', 'latencyMs', 'tokensIn', 'tokensOut', 'costUsd', 'priced', 'cache', 'operation'])} />
                </div>
                <div className="table-scroll">
                  <table className="table logs">
                    <thead>
                      <tr>
                        {COLUMNS.map((col) => (
                          <th
                            key={col.label}
                            scope="col"
                            className={col.num ? 'num' : undefined}
                            aria-sort={col.sort && order.by === col.sort ? (order.order === 'asc' ? 'ascending' : 'descending') : undefined}
                          >
                            {col.sort ? (
                              <button type="button" className="sort" onClick={() => setQuery({ ...applied, ...nextOrder(order, col.sort as SortKey) })}>
                                {col.label}
                                <span aria-hidden="true">{order.by === col.sort ? (order.order === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
                              </button>
                            ) : (
                              col.label
                            )}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {c.data.map((l) => (
                        <tr key={l.id} data-log={l.id} className={open?.id === l.id ? 'selected' : undefined} onClick={rowClick(l)}>
                          <td>
                            <Link to={`/ui/logs/${l.id}`}>{formatTime(l.ts)}</Link>
                          </td>
                          <td>
                            <RefLink r={l.gateway} fallback={names.gateway(l.gatewayId)} />
                          </td>
                          <td>{l.operation ? <code>{l.operation}</code> : <span className="muted">—</span>}</td>
                          <td className="model">
                            <button type="button" className="link row-open" aria-label={`Open ${modelLabel(l)} at ${formatTime(l.ts)} in the side panel`} onClick={(e) => show(l, e.currentTarget)}>
                              {modelLabel(l)}
                            </button>
                            {l.route ? <span className="muted"> via {l.route}</span> : null}
                          </td>
                          <td className="status">
                            <StatusBadge status={l.status} /> {l.errorCode && <code className="muted">{l.errorCode}</code>}
                          </td>
                          <td className="num" data-latency-ms={l.latencyMs}>
                            {formatDuration(l.latencyMs)}
                          </td>
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
      {open && <LogPanel log={open} names={names} onClose={close} />}
    </div>
  );
}
