// Users of a tenant: the list and a form to create one, with a role the
// caller may grant.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, User } from '../api/types';
import { QueryView, useAction, useGQL } from '../components/data';
import { TenantPicker, useTenantId } from '../components/TenantPicker';
import { Badge, Empty, Field, InlineProblem, PageHeader, Pager, Submit, usePager } from '../components/ui';
import { formatRelative } from '../lib/format';
import { canHoldTokens, grantableRoles, ROLE_LABELS, type Role } from '../lib/policy';
import { Link, navigate } from '../lib/router';
import * as v from '../lib/validate';

export function Users() {
  const tenantId = useTenantId();
  const pager = usePager();
  const q = useGQL<{ users: Connection<User> }>(Q.users, { tenantId, cursor: pager.cursor });
  return (
    <>
      <PageHeader title="Users" subtitle="People who sign in to the dashboard or call gateways with their own tokens.">
        <TenantPicker />
      </PageHeader>
      <QueryView<Connection<User>> q={q} field="users" what="users">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>No users in this tenant yet.</Empty>
          ) : (
            <>
              <div className="table-scroll">
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Name</th>
                      <th scope="col">Role</th>
                      <th scope="col">Status</th>
                      <th scope="col">Last seen</th>
                    </tr>
                  </thead>
                  <tbody>
                    {c.data.map((u) => (
                      <tr key={u.id}>
                        <td>
                          <Link to={`/ui/users/${u.id}`}>{u.email}</Link>
                        </td>
                        <td>{u.name || '—'}</td>
                        <td>{ROLE_LABELS[u.role] ?? u.role}</td>
                        <td>
                          <Badge tone={u.status === 'active' ? 'good' : 'warn'}>{u.status}</Badge>
                        </td>
                        <td>{u.lastSeenAt ? formatRelative(u.lastSeenAt) : 'never'}</td>
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
      {!q.problemFor('users') && <CreateUser tenantId={tenantId} />}
    </>
  );
}

function CreateUser({ tenantId }: { tenantId: string }) {
  const { role } = useApp();
  const roles = grantableRoles(role);
  const [f, setF] = useState({ email: '', name: '', role: 'member' as Role, password: '' });
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const needsPassword = !canHoldTokens(f.role);
  const errs = {
    email: v.email(f.email),
    password: v.password(f.password, !needsPassword),
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (errs.email || errs.password) return;
    const input = { email: f.email.trim(), name: f.name.trim() || undefined, role: f.role, password: f.password || undefined };
    const u = await act.run<{ id: string }>(M.createUser, { tenantId, input }, 'createUser');
    if (u) navigate(`/ui/users/${u.id}`);
  };
  return (
    <section className="panel">
      <h2>New user</h2>
      <form onSubmit={submit} noValidate aria-label="New user">
        <div className="form-grid">
          <Field label="Email" error={touched ? errs.email : null}>
            <input type="email" value={f.email} onChange={(e) => setF({ ...f, email: e.target.value })} autoComplete="off" />
          </Field>
          <Field label="Name">
            <input value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} maxLength={200} />
          </Field>
          <Field label="Role" hint="Only roles at or below your own.">
            <select value={f.role} onChange={(e) => setF({ ...f, role: e.target.value as Role })}>
              {roles.map((r) => (
                <option key={r} value={r}>
                  {ROLE_LABELS[r]}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Password"
            hint={needsPassword ? 'Required: this role signs in with a password only (it holds no tokens). 12+ characters.' : 'Optional; 12+ characters. Without one the user cannot sign in to the dashboard.'}
            error={touched ? errs.password : null}
          >
            <input type="password" value={f.password} onChange={(e) => setF({ ...f, password: e.target.value })} autoComplete="new-password" />
          </Field>
        </div>
        <div className="form-actions">
          <Submit busy={act.busy}>Create user</Submit>
        </div>
        <InlineProblem problem={act.problem} />
      </form>
    </section>
  );
}
