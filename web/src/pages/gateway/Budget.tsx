// A gateway's budget and what it has cost, by model.

import { M, Q } from '../../api/queries';
import type { Gateway, Spend } from '../../api/types';
import { BudgetForm } from '../../components/BudgetForm';
import { QueryView, useGQL } from '../../components/data';
import { Empty } from '../../components/ui';
import { formatInt, formatUSD } from '../../lib/format';
import { rangeOf } from '../../lib/range';
import { useMemo } from 'react';
import { Cost, unpricedSub } from '../../components/Cost';

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
      <section className="panel">
        <h2>Spend in the last 30 days</h2>
        <QueryView<Spend> q={spend} field="gatewaySpend" what="this gateway’s spend">
          {(s) =>
            s.byModel.length === 0 ? (
              <Empty>No spend in the last 30 days.</Empty>
            ) : (
              <table className="table">
                <caption>
                  Total {formatUSD(s.totalUsd)}
                  {s.unpricedRequests ? ` ${unpricedSub(s.unpricedRequests)}` : ''}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col" className="num">
                      Requests
                    </th>
                    <th scope="col" className="num">
                      Cost
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {s.byModel.map((m) => (
                    <tr key={m.provider + '/' + m.model}>
                      <td>
                        {m.provider}/{m.model}
                      </td>
                      <td className="num">{formatInt(m.requests)}</td>
                      <td className="num">
                        <Cost usd={m.costUsd} unpriced={m.unpricedRequests} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </QueryView>
      </section>
    </>
  );
}
