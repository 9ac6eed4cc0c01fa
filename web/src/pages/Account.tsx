// My Account: who I am, my rate limit, my own API tokens, and my password.
// The roles that may not read /me (Finance, Viewer) see who they are from
// their session and may still change their password.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, Token, User } from '../api/types';
import { QueryView, useAction, useGQL } from '../components/data';
import { CreateToken, TokenTable } from '../components/Tokens';
import { BudgetBar, Field, InlineProblem, PageHeader, Saved, Submit } from '../components/ui';
import { formatRateLimit, formatRelative, formatTime } from '../lib/format';
import { allowed, ROLE_LABELS } from '../lib/policy';
import * as v from '../lib/validate';

export function Account() {
  const { role, session } = useApp();
  return (
    <>
      <PageHeader title="My account" />
      {allowed(role, 'me.read') ? (
        <Profile />
      ) : (
        <section className="panel">
          <dl className="facts">
            <dt>Email</dt>
            <dd>{session.user.email}</dd>
            <dt>Name</dt>
            <dd>{session.user.name || '—'}</dd>
            <dt>Role</dt>
            <dd>{ROLE_LABELS[role]}</dd>
            <dt>Tenant</dt>
            <dd>{session.user.tenantId}</dd>
          </dl>
        </section>
      )}
      {allowed(role, 'me.password.change') && <ChangePassword signedInWithPassword={session.kind === 'session'} />}
    </>
  );
}

function Profile() {
  const q = useGQL<{ me: User; myTokens: Connection<Token> }>(Q.account);
  const act = useAction();
  return (
    <QueryView<User> q={q} field="me" what="My Account">
      {(u) => (
        <>
          <section className="panel">
            <dl className="facts">
              <dt>Email</dt>
              <dd>{u.email}</dd>
              <dt>Name</dt>
              <dd>{u.name || '—'}</dd>
              <dt>Role</dt>
              <dd>{ROLE_LABELS[u.role]}</dd>
              <dt>Tenant</dt>
              <dd>{u.tenantId}</dd>
              <dt>Member since</dt>
              <dd>{formatTime(u.createdAt)}</dd>
              <dt>Last seen</dt>
              <dd>{u.lastSeenAt ? formatRelative(u.lastSeenAt) : '—'}</dd>
              <dt>Rate limit</dt>
              <dd data-testid="my-rate-limit">
                {formatRateLimit(u.rateLimit)}
                <span className="muted"> — over all your tokens; a tenant administrator sets it</span>
              </dd>
            </dl>
            {u.budget && <BudgetBar budget={u.budget} />}
          </section>
          <section className="panel">
            <h2>My tokens</h2>
            <p className="hint">API tokens that act as you: on the inference API for the gateways you may use, and on the admin API.</p>
            <QueryView<Connection<Token>> q={q} field="myTokens" what="your tokens">
              {(c) => (
                <TokenTable
                  tokens={c.data}
                  onDelete={async (t) => {
                    if (await act.run(M.deleteMyToken, { tokenId: t.id }, 'deleteMyToken')) q.refetch();
                  }}
                />
              )}
            </QueryView>
            <InlineProblem problem={act.problem} />
          </section>
          <CreateToken title="New personal token" create={(input, a) => a.run<Token>(M.createMyToken, { input }, 'createMyToken')} onCreated={q.refetch} />
        </>
      )}
    </QueryView>
  );
}

/** ChangePassword changes the caller's password: the server checks the current one and ends the caller's other sessions. */
function ChangePassword({ signedInWithPassword }: { signedInWithPassword: boolean }) {
  const [f, setF] = useState({ current: '', next: '', again: '' });
  const [touched, setTouched] = useState(false);
  const [done, setDone] = useState(false);
  const act = useAction();
  const errs = {
    current: f.current ? null : 'Your current password is required.',
    next: v.password(f.next) ?? (f.next === f.current ? 'The new password must differ from the current one.' : null),
    again: f.again === f.next ? null : 'The two new passwords differ.',
  };
  const show = (k: keyof typeof errs) => (touched ? errs[k] : null);
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => {
    setDone(false);
    setF({ ...f, [k]: e.target.value });
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (Object.values(errs).some(Boolean)) return;
    if (await act.run(M.changeMyPassword, { currentPassword: f.current, newPassword: f.next }, 'changeMyPassword')) {
      setF({ current: '', next: '', again: '' });
      setTouched(false);
      setDone(true);
    }
  };
  return (
    <section className="panel" aria-labelledby="change-password">
      <h2 id="change-password">Password</h2>
      <p className="hint">
        {signedInWithPassword ? 'Changing it signs you out everywhere else; this session stays.' : 'Changing it signs you out of every dashboard session.'} 12 characters or more.
      </p>
      <form onSubmit={submit} noValidate aria-label="Change my password">
        <div className="form-grid">
          <Field label="Current password" error={show('current') ?? (act.problem?.param === 'current_password' ? act.problem.message : null)}>
            <input type="password" value={f.current} onChange={set('current')} autoComplete="current-password" />
          </Field>
          <Field label="New password" error={show('next')}>
            <input type="password" value={f.next} onChange={set('next')} autoComplete="new-password" />
          </Field>
          <Field label="New password, again" error={show('again')}>
            <input type="password" value={f.again} onChange={set('again')} autoComplete="new-password" />
          </Field>
        </div>
        <div className="form-actions">
          <Submit busy={act.busy}>Change password</Submit>
        </div>
        {done && <Saved>Password changed. Your other sessions have ended.</Saved>}
        {act.problem?.param !== 'current_password' && <InlineProblem problem={act.problem} />}
      </form>
    </section>
  );
}
