// A gateway's budget and what it has cost, by model (the Spend page's table).

import { M, Q } from '../../api/queries';
import type { Gateway, Spend } from '../../api/types';
import { BudgetForm } from '../../components/BudgetForm';
import { QueryView, useGQL } from '../../components/data';
import { formatUSD } from '../../lib/format';
import { rangeOf } from '../../lib/range';
import { useMemo } from 'react';
import { unpricedSub } from '../../components/Cost';
import { ModelSpendTable } from '../../components/SpendTables';

export function BudgetTab({ gateway: g, onSaved }: { gateway: Gateway; onSaved: () => void }) {
  const r = useMemo(() => rangeOf('30d'), []);
  const spend = useGQL<{ gatewaySpend: Spend }>(Q.gatewaySpend, { id: g.id, from: r.from, to: r.to });
  return (
    <>
      <section className="panel">
        <h2>Budget</h2>
        <BudgetForm
          key={JSON.stringify(g.budget)}
          budget={g.budget}
          set={(budget, act) => act.run(M.updateGateway, { id: g.id, input: { budget } }, 'updateGateway')}
          remove={(act) => act.run(M.deleteGatewayBudget, { id: g.id }, 'deleteGatewayBudget')}
          onChanged={() => {
            onSaved();
            spend.refetch();
          }}
        />
      </section>
      <QueryView<Spend> q={spend} field="gatewaySpend" what="this gateway’s spend">
        {(s) => (
          <>
            <section className="panel">
              <h2>Spend in the last 30 days</h2>
              <p>
                Total {formatUSD(s.totalUsd)}
                {s.unpricedRequests ? ` ${unpricedSub(s.unpricedRequests)}` : ''}
              </p>
            </section>
            <ModelSpendTable spend={s} slug={`gateway-${g.name}`} />
          </>
        )}
      </QueryView>
    </>
  );
}
