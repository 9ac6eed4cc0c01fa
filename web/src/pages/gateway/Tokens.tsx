// A gateway's API tokens: they call this gateway's inference paths only.

import { M, Q } from '../../api/queries';
import type { Connection, Gateway, ProviderKey, Token } from '../../api/types';
import { QueryView, useAction, useGQL } from '../../components/data';
import { CreateToken, TokenTable } from '../../components/Tokens';
import { InlineProblem, Pager, usePager } from '../../components/ui';
import { snippetModel } from '../../lib/snippets';
import { Connect } from './Connect';

export function Tokens({ gateway: g }: { gateway: Gateway }) {
  const pager = usePager();
  const q = useGQL<{ gatewayTokens: Connection<Token> }>(Q.gatewayTokens, { id: g.id, cursor: pager.cursor });
  const act = useAction();
  const keys = useGQL<{ providerKeys: Connection<Pick<ProviderKey, 'provider' | 'models' | 'disabled'>> }>(Q.gatewayModels, { id: g.id });
  return (
    <>
      <section className="panel">
        <h2>Gateway tokens</h2>
        <p className="hint">Gateway tokens work on this gateway’s inference API only, never on the admin API.</p>
        <QueryView<Connection<Token>> q={q} field="gatewayTokens" what="the gateway tokens">
          {(c) => (
            <>
              <TokenTable
                tokens={c.data}
                onRevoke={async (t) => {
                  if (await act.run(M.revokeGatewayToken, { gatewayId: g.id, tokenId: t.id }, 'updateGatewayToken')) q.refetch();
                }}
                onDelete={async (t) => {
                  if (await act.run(M.deleteGatewayToken, { gatewayId: g.id, tokenId: t.id }, 'deleteGatewayToken')) q.refetch();
                }}
                setBudget={(t, budget, a) => a.run(M.setGatewayTokenBudget, { gatewayId: g.id, tokenId: t.id, budget }, 'updateGatewayToken')}
                onChanged={q.refetch}
              />
              <Pager pager={pager} nextCursor={c.nextCursor} />
            </>
          )}
        </QueryView>
        <InlineProblem problem={act.problem} />
      </section>
      <CreateToken
        title="New gateway token"
        create={(input, a) => a.run<Token>(M.createGatewayToken, { gatewayId: g.id, input }, 'createGatewayToken')}
        onCreated={q.refetch}
        afterSecret={(secret) => <Connect gateway={g} token={secret} model={snippetModel(g.routes, keys.data?.providerKeys?.data ?? [])} />}
      />
    </>
  );
}
