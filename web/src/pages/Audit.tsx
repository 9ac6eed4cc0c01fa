// The platform audit log: every admin write and every denied one.

import { useState, type FormEvent } from 'react';
import { Q } from '../api/queries';
import type { AuditEntry, Connection } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { RefLink } from '../components/RefLink';
import { Badge, Empty, ExportCSV, Field, FromToFields, PageHeader, Pager, usePager } from '../components/ui';
import { objectsToCSV } from '../lib/csv';
import { formatTime } from '../lib/format';
import { localInputToISO } from '../lib/range';
import { refText } from '../lib/refs';

const RESOURCE_TYPES = ['', 'tenant', 'gateway', 'provider_key', 'rule', 'token', 'user', 'model_price', 'session'];

/**
 * Actor is who made an entry: the user as named today, linked where the
 * role may open it; a user since deleted keeps the email of the time.
 */
function Actor({ a }: { a: AuditEntry }) {
  if (a.actor?.state === 'deleted' && a.actorEmail) return <span title="This user no longer exists.">(deleted) {a.actorEmail}</span>;
  return <RefLink r={a.actor} fallback={a.actorEmail || a.actorId || '—'} />;
}

export function Audit() {
  const [draft, setDraft] = useState({ tenant: '', actor: '', action: '', resourceType: '', from: '', to: '' });
  const [filter, setFilter] = useState<Record<string, string>>({});
  const pager = usePager();
  const q = useGQL<{ auditLog: Connection<AuditEntry> }>(Q.audit, { filter, cursor: pager.cursor });
  const [open, setOpen] = useState<string | null>(null);
  const set = (k: keyof typeof draft) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const f: Record<string, string> = {};
    if (draft.tenant) f.tenantId = draft.tenant.trim();
    if (draft.actor) f.actorId = draft.actor.trim();
    if (draft.action) f.action = draft.action.trim();
    if (draft.resourceType) f.resourceType = draft.resourceType;
    const from = localInputToISO(draft.from);
    const to = localInputToISO(draft.to);
    if (from) f.from = from;
    if (to) f.to = to;
    pager.reset();
    setFilter(f);
  };
  return (
    <>
      <PageHeader title="Audit log" subtitle="Every admin write, recorded in the same transaction as the write; denied writes too. Secrets are masked." />
      <form className="panel filters" onSubmit={apply} aria-label="Filter the audit log">
        <div className="form-grid dense">
          <Field label="Tenant">
            <input value={draft.tenant} onChange={set('tenant')} />
          </Field>
          <Field label="Actor (user id)">
            <input value={draft.actor} onChange={set('actor')} placeholder="usr_…" />
          </Field>
          <Field label="Action">
            <input value={draft.action} onChange={set('action')} placeholder="gateway.update" />
          </Field>
          <Field label="Resource type">
            <select value={draft.resourceType} onChange={set('resourceType')}>
              {RESOURCE_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t || 'Any'}
                </option>
              ))}
            </select>
          </Field>
          <FromToFields from={draft.from} to={draft.to} set={set} />
        </div>
        <div className="form-actions">
          <button type="submit" className="primary">
            Apply filters
          </button>
        </div>
      </form>
      <section className="panel">
        <QueryView<Connection<AuditEntry>> q={q} field="auditLog" what="the audit log">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No entries match.</Empty>
            ) : (
              <>
                <div className="panel-head">
                  <span />
                  <ExportCSV
                    filename="sluice-audit.csv"
                    csv={() =>
                      objectsToCSV(
                        c.data.map((a) => ({ ...a, resourceName: refText(a.resource, ''), changes: a.changes == null ? '' : JSON.stringify(a.changes) })),
                        ['ts', 'actorEmail', 'actorRole', 'tenantId', 'action', 'resourceType', 'resourceId', 'resourceName', 'outcome', 'ip', 'requestId', 'changes'],
                      )
                    }
                  />
                </div>
                <div className="table-scroll">
                  <table className="table">
                    <thead>
                      <tr>
                        <th scope="col">Time</th>
                        <th scope="col">Actor</th>
                        <th scope="col">Tenant</th>
                        <th scope="col">Action</th>
                        <th scope="col">Resource</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Changes</th>
                      </tr>
                    </thead>
                    <tbody>
                      {c.data.map((a) => (
                        <tr key={a.id}>
                          <td>{formatTime(a.ts)}</td>
                          <td>
                            <Actor a={a} /> <span className="muted">{a.actorRole}</span>
                          </td>
                          <td>{a.tenantId || '—'}</td>
                          <td>
                            <code>{a.action}</code>
                          </td>
                          <td className="wrap" data-resource={a.resourceId}>
                            <span className="muted">{a.resourceType}</span> {a.resource ? <RefLink r={a.resource} /> : <code>{a.resourceId}</code>}
                          </td>
                          <td>
                            <Badge tone={a.outcome === 'ok' ? 'good' : 'bad'}>{a.outcome}</Badge>
                          </td>
                          <td className="wrap">
                            {a.changes == null ? (
                              '—'
                            ) : (
                              <>
                                <button type="button" className="link" aria-expanded={open === a.id} onClick={() => setOpen(open === a.id ? null : a.id)}>
                                  {open === a.id ? 'Hide' : 'Show'}
                                </button>
                                {open === a.id && <pre>{JSON.stringify(a.changes, null, 2)}</pre>}
                              </>
                            )}
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
    </>
  );
}
