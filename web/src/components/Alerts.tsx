// The budget alerts a tenant was sent (CONTRACT §14): which budget crossed
// which threshold, and whether its webhook was delivered.

import { Q } from '../api/queries';
import type { Alert, Connection } from '../api/types';
import { formatPercent, formatTime, formatUSD } from '../lib/format';
import { QueryView, useGQL } from './data';
import { Badge, Empty, Pager, usePager } from './ui';

const STATUS_TONE: Record<string, 'good' | 'warn' | 'bad'> = { delivered: 'good', pending: 'warn', failed: 'bad' };

/** AlertTable lists alerts newest first. */
export function AlertTable({ alerts }: { alerts: Alert[] }) {
  if (alerts.length === 0) return <Empty>No budget alert has been sent.</Empty>;
  return (
    <table className="table">
      <caption className="sr-only">Budget alerts, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Budget</th>
          <th scope="col" className="num">
            Threshold
          </th>
          <th scope="col" className="num">
            Spent
          </th>
          <th scope="col">Period</th>
          <th scope="col">Delivery</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((a) => (
          <tr key={a.id} data-alert={`${a.scope}:${a.scopeId}:${a.threshold}`}>
            <td>{formatTime(a.at)}</td>
            <td>
              {a.scope} <code>{a.scopeId}</code>
            </td>
            <td className="num">{a.threshold} %</td>
            <td className="num">
              {formatUSD(a.spentUsd)} of {formatUSD(a.amountUsd)} ({formatPercent(a.amountUsd ? a.spentUsd / a.amountUsd : 0, 0)})
            </td>
            <td>
              {a.period}
              {a.periodStart ? ` from ${formatTime(a.periodStart)}` : ''}
            </td>
            <td className="wrap">
              <Badge tone={STATUS_TONE[a.status] ?? 'warn'}>{a.status}</Badge>{' '}
              {a.deliveredAt ? formatTime(a.deliveredAt) : `${a.attempts} attempt${a.attempts === 1 ? '' : 's'}`}
              {a.lastError && a.status !== 'delivered' && <span className="hint"> — {a.lastError}</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** TenantAlerts reads and lists the alerts of a tenant, page by page. */
export function TenantAlerts({ tenantId }: { tenantId: string }) {
  const pager = usePager();
  const q = useGQL<{ tenant: { id: string; alerts: Connection<Alert> | null } }>(Q.tenantAlerts, { id: tenantId, cursor: pager.cursor });
  return (
    <QueryView<{ id: string; alerts: Connection<Alert> | null }> q={q} field="tenant" what="the budget alerts">
      {(t) => (
        <>
          <AlertTable alerts={t.alerts?.data ?? []} />
          <Pager pager={pager} nextCursor={t.alerts?.nextCursor} />
        </>
      )}
    </QueryView>
  );
}
