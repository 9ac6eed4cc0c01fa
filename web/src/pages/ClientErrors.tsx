// Errors the dashboard itself reported (window errors, unhandled
// rejections, render errors), grouped by message and first stack line.

import { useState } from 'react';
import { Q } from '../api/queries';
import type { ClientErrorRow, Connection } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { Empty, PageHeader, Pager, usePager } from '../components/ui';
import { formatRelative, formatTime } from '../lib/format';

export function ClientErrors() {
  const pager = usePager();
  const q = useGQL<{ clientErrors: Connection<ClientErrorRow> }>(Q.clientErrors, { cursor: pager.cursor });
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="Client errors" subtitle="Errors of the dashboard in users’ browsers. Tokens are masked before they are stored.">
        <button type="button" onClick={q.refetch}>
          Refresh
        </button>
      </PageHeader>
      <section className="panel">
        <QueryView<Connection<ClientErrorRow>> q={q} field="clientErrors" what="client errors">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No client errors reported. Good.</Empty>
            ) : (
              <>
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">Message</th>
                      <th scope="col" className="num">
                        Count
                      </th>
                      <th scope="col">Last seen</th>
                      <th scope="col">First seen</th>
                      <th scope="col">Tenant / user</th>
                      <th scope="col">Release</th>
                    </tr>
                  </thead>
                  <tbody>
                    {c.data.map((e) => [
                      <tr key={e.id}>
                        <td className="wrap">
                          <button type="button" className="link" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>
                            {e.message}
                          </button>
                        </td>
                        <td className="num">{e.count}</td>
                        <td>{formatRelative(e.lastSeenAt)}</td>
                        <td>{formatTime(e.ts)}</td>
                        <td>
                          {e.tenantId} / {e.userId}
                        </td>
                        <td>{e.release || '—'}</td>
                      </tr>,
                      open === e.id && (
                        <tr key={e.id + '-d'}>
                          <td colSpan={6}>
                            <dl className="facts">
                              <dt>URL</dt>
                              <dd>{e.url || '—'}</dd>
                              <dt>Browser</dt>
                              <dd>{e.userAgent || '—'}</dd>
                              <dt>Context</dt>
                              <dd>{e.context ? <code>{JSON.stringify(e.context)}</code> : '—'}</dd>
                            </dl>
                            <pre>{e.stack || '(no stack)'}</pre>
                          </td>
                        </tr>
                      ),
                    ])}
                  </tbody>
                </table>
                <Pager pager={pager} nextCursor={c.nextCursor} />
              </>
            )
          }
        </QueryView>
      </section>
    </>
  );
}
