// One user: role, status, password, rate limit, gateway assignments, tokens, budget.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, Gateway, Token, User } from '../api/types';
import { BudgetForm } from '../components/BudgetForm';
import { QueryView, useAction, useGQL } from '../components/data';
import { CreateToken, TokenTable } from '../components/Tokens';
import { Badge, Button, ConfirmButton, Empty, Field, InlineProblem, PageHeader, Saved, Submit } from '../components/ui';
import { formatRateLimit, formatRelative, formatTime } from '../lib/format';
import { canHoldTokens, grantableRoles, ROLE_LABELS, type Role } from '../lib/policy';
import { Link, navigate } from '../lib/router';
import * as v from '../lib/validate';
import { RateLimitFields, rateLimitErrors } from '../components/RateLimitFields';

interface Detail {
  user: User;
  userGateways: Connection<{ id: string; slug: string; name: string }>;
  userTokens: Connection<Token>;
}

export function UserDetail({ id }: { id: string }) {
  const q = useGQL<Detail>(Q.user, { id });
  return (
    <QueryView<User> q={q} field="user" what="this user">
      {(u) => (
        <>
          <PageHeader
            title={u.name || u.email}
            subtitle={
              <>
                <Link to="/ui/users">Users</Link> / {u.email} · tenant <strong>{u.tenantId}</strong> · created {formatTime(u.createdAt)} · last seen{' '}
                {u.lastSeenAt ? formatRelative(u.lastSeenAt) : 'never'}
              </>
            }
          />
          <Account user={u} onSaved={q.refetch} />
          <UserRateLimit user={u} onSaved={q.refetch} />
          <Assignments user={u} assigned={q.data?.userGateways?.data ?? []} onChanged={q.refetch} />
          {canHoldTokens(u.role) ? (
            <UserTokens user={u} tokens={q.data?.userTokens?.data ?? []} onChanged={q.refetch} />
          ) : (
            <section className="panel">
              <h2>Tokens</h2>
              <Empty>{ROLE_LABELS[u.role]} users hold no API tokens; they sign in with a password.</Empty>
            </section>
          )}
          <section className="panel">
            <h2>Budget</h2>
            <BudgetForm
              key={JSON.stringify(u.budget)}
              budget={u.budget}
              set={(budget, act) => act.run(M.updateUser, { id: u.id, input: { budget } }, 'updateUser')}
              remove={(act) => act.run(M.deleteUserBudget, { id: u.id }, 'deleteUserBudget')}
              onChanged={q.refetch}
            />
          </section>
        </>
      )}
    </QueryView>
  );
}

function Account({ user: u, onSaved }: { user: User; onSaved: () => void }) {
  const { role, session } = useApp();
  const self = session.user.id === u.id;
  const roles = grantableRoles(role);
  const [newRole, setNewRole] = useState<Role>(u.role);
  const [password, setPassword] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  const act = useAction();
  const pwErr = password ? v.password(password) : null;

  const patch = async (input: Record<string, unknown>, done: string) => {
    setMsg(null);
    if (await act.run(M.updateUser, { id: u.id, input }, 'updateUser')) {
      setMsg(done);
      onSaved();
      return true;
    }
    return false;
  };
  const outranks = !roles.includes(u.role);
  return (
    <section className="panel">
      <h2>Account</h2>
      <dl className="facts">
        <dt>Role</dt>
        <dd>{ROLE_LABELS[u.role]}</dd>
        <dt>Status</dt>
        <dd>
          <Badge tone={u.status === 'active' ? 'good' : 'warn'}>{u.status}</Badge>
        </dd>
      </dl>
      {outranks ? (
        <Outranks />
      ) : (
        <>
          <form
            className="inline-form"
            aria-label="Change role"
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              patch({ role: newRole }, `Role changed to ${ROLE_LABELS[newRole]}. The user’s sessions have ended.`);
            }}
          >
            <Field label="Role" hint={self ? 'Nobody changes their own role.' : undefined}>
              <select value={newRole} onChange={(e) => setNewRole(e.target.value as Role)} disabled={self}>
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {ROLE_LABELS[r]}
                  </option>
                ))}
              </select>
            </Field>
            <Submit busy={act.busy} disabled={self || newRole === u.role}>
              Change role
            </Submit>
          </form>
          <form
            className="inline-form"
            aria-label="Set password"
            onSubmit={async (e: FormEvent) => {
              e.preventDefault();
              if (!password || pwErr) return;
              if (await patch({ password }, 'Password set.')) setPassword('');
            }}
          >
            <Field label="New password" hint="12+ characters. Setting it ends the user’s sessions." error={pwErr}>
              <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
            </Field>
            <Submit busy={act.busy} disabled={!password || !!pwErr}>
              Set password
            </Submit>
          </form>
          {!self && (
            <div className="row-actions">
              {u.status === 'active' ? (
                <ConfirmButton label="Disable user" confirm={`Disable ${u.email}`} onConfirm={() => patch({ status: 'disabled' }, 'User disabled: its tokens and sessions stop working.')} />
              ) : (
                <Button onClick={() => patch({ status: 'active' }, 'User enabled.')}>Enable user</Button>
              )}
              <ConfirmButton
                label="Delete user"
                confirm={`Delete ${u.email} and revoke its tokens`}
                onConfirm={async () => {
                  if (await act.run(M.deleteUser, { id: u.id }, 'deleteUser')) navigate('/ui/users');
                }}
              />
            </div>
          )}
        </>
      )}
      {msg && <Saved>{msg}</Saved>}
      <InlineProblem problem={act.problem} />
    </section>
  );
}

/** Outranks stands in for a form the caller may not use: the user's role is above its own. */
const Outranks = () => <p className="hint">This user’s role outranks yours: you cannot change it.</p>;

const limitText = (n: number | null | undefined) => (n == null ? '' : String(n));
const limitOf = (s: string) => (s.trim() === '' ? null : Number(s.trim()));

/** UserRateLimit shows the user's per-minute limits (over all its tokens) and lets the caller change them. */
function UserRateLimit({ user: u, onSaved }: { user: User; onSaved: () => void }) {
  const { role } = useApp();
  const [f, setF] = useState({ rpm: limitText(u.rateLimit.requestsPerMinute), tpm: limitText(u.rateLimit.tokensPerMinute) });
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const errs = rateLimitErrors(f.rpm, f.tpm);
  const outranks = !grantableRoles(role).includes(u.role);
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => {
    setSaved(false);
    setF({ ...f, [k]: e.target.value });
  };
  return (
    <section className="panel" aria-labelledby="user-rate-limit">
      <h2 id="user-rate-limit">Rate limit</h2>
      <p className="hint">
        Per minute, over all the user’s tokens, on top of each token’s and gateway’s own limits. Now: <strong data-testid="user-rate-limit">{formatRateLimit(u.rateLimit)}</strong>.
      </p>
      {outranks ? (
        <Outranks />
      ) : (
        <form
          className="inline-form"
          aria-label="Rate limit of the user"
          onSubmit={async (e: FormEvent) => {
            e.preventDefault();
            if (errs.rpm || errs.tpm) return;
            // The in-flight limit is set through the API only: it is kept as it is.
            const rateLimit = { requestsPerMinute: limitOf(f.rpm), tokensPerMinute: limitOf(f.tpm), maxInFlight: u.rateLimit.maxInFlight ?? null };
            if (await act.run(M.updateUser, { id: u.id, input: { rateLimit } }, 'updateUser')) {
              setSaved(true);
              onSaved();
            }
          }}
        >
          <RateLimitFields f={f} errs={errs} set={set} />
          <Submit busy={act.busy} disabled={!!(errs.rpm || errs.tpm)}>
            Save rate limit
          </Submit>
        </form>
      )}
      {saved && <Saved>Rate limit saved.</Saved>}
      <InlineProblem problem={act.problem} />
    </section>
  );
}

function Assignments({ user: u, assigned, onChanged }: { user: User; assigned: { id: string; slug: string; name: string }[]; onChanged: () => void }) {
  const gws = useGQL<{ gateways: Connection<Gateway> }>(Q.gateways, { tenantId: u.tenantId });
  const [pick, setPick] = useState('');
  const act = useAction();
  const free = (gws.data?.gateways?.data ?? []).filter((g) => !assigned.some((a) => a.id === g.id));
  return (
    <section className="panel">
      <h2>Gateways</h2>
      <p className="hint">The user’s tokens may call the gateways assigned here (administrators may call any gateway of their scope).</p>
      {assigned.length === 0 ? (
        <Empty>No gateway assigned.</Empty>
      ) : (
        <ul className="chips">
          {assigned.map((g) => (
            <li key={g.id}>
              <span>
                {g.name} <code>{g.slug}</code>
              </span>
              <ConfirmButton
                label="Unassign"
                confirm={`Unassign ${g.slug}`}
                onConfirm={async () => {
                  if (await act.run(M.unassignGateway, { userId: u.id, gatewayId: g.id }, 'unassignGateway')) onChanged();
                }}
              />
            </li>
          ))}
        </ul>
      )}
      {free.length > 0 && (
        <form
          className="inline-form"
          aria-label="Assign a gateway"
          onSubmit={async (e: FormEvent) => {
            e.preventDefault();
            const id = pick || free[0].id;
            if (await act.run(M.assignGateway, { userId: u.id, gatewayId: id }, 'assignGateway')) {
              setPick('');
              onChanged();
            }
          }}
        >
          <Field label="Gateway to assign">
            <select value={pick || free[0].id} onChange={(e) => setPick(e.target.value)}>
              {free.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name} ({g.slug})
                </option>
              ))}
            </select>
          </Field>
          <Submit busy={act.busy}>Assign</Submit>
        </form>
      )}
      <InlineProblem problem={act.problem} />
    </section>
  );
}

function UserTokens({ user: u, tokens, onChanged }: { user: User; tokens: Token[]; onChanged: () => void }) {
  const act = useAction();
  return (
    <>
      <section className="panel">
        <h2>Tokens</h2>
        <TokenTable
          tokens={tokens}
          onRevoke={async (t) => {
            if (await act.run(M.revokeUserToken, { userId: u.id, tokenId: t.id }, 'updateUserToken')) onChanged();
          }}
          onDelete={async (t) => {
            if (await act.run(M.deleteUserToken, { userId: u.id, tokenId: t.id }, 'deleteUserToken')) onChanged();
          }}
          setBudget={(t, budget, a) => a.run(M.setUserTokenBudget, { userId: u.id, tokenId: t.id, budget }, 'updateUserToken')}
          onChanged={onChanged}
        />
        <InlineProblem problem={act.problem} />
      </section>
      <CreateToken title={`New token for ${u.email}`} create={(input, a) => a.run<Token>(M.createUserToken, { userId: u.id, input }, 'createUserToken')} onCreated={onChanged} />
    </>
  );
}
