// My Account: who I am, and my own API tokens.

import { M, Q } from '../api/queries';
import type { Connection, Token, User } from '../api/types';
import { QueryView, useAction, useGQL } from '../components/data';
import { CreateToken, TokenTable } from '../components/Tokens';
import { BudgetBar, InlineProblem, PageHeader } from '../components/ui';
import { formatRelative, formatTime } from '../lib/format';
import { ROLE_LABELS } from '../lib/policy';

export function Account() {
  const q = useGQL<{ me: User; myTokens: Connection<Token> }>(Q.account);
  const act = useAction();
  return (
    <>
      <PageHeader title="My account" />
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
    </>
  );
}
