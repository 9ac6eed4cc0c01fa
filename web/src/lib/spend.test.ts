import { describe, expect, it } from 'vitest';
import { daySpendCSV, modelSpendCSV, scopeSpendCSV } from './spend';

const range = { from: '2026-11-20T00:00:00Z', to: '2026-11-27T00:00:00Z' };

describe('spend CSV', () => {
  it('exports spend per token with the budget state', () => {
    const csv = scopeSpendCSV(
      'token',
      [
        { id: 'tok_1', name: 'ci, nightly', requests: 3, costUsd: 85, budget: { amountUsd: 100, period: 'weekly', hard: true, spentUsd: 85, remainingUsd: 15, resetsAt: '2026-11-30T00:00:00Z' } },
        { id: 'tok_2', name: '=cmd()', requests: 1, costUsd: 0.5, budget: null, unpricedRequests: 2 },
      ],
      range,
    );
    expect(csv.split('\r\n')).toEqual([
      'from,to,token_id,token_name,requests,cost_usd,unpriced_requests,budget_usd,budget_period,budget_hard,budget_spent_usd,budget_used_pct,budget_state,budget_resets_at',
      '2026-11-20T00:00:00Z,2026-11-27T00:00:00Z,tok_1,"ci, nightly",3,85,0,100,weekly,true,85,85,warn,2026-11-30T00:00:00Z',
      "2026-11-20T00:00:00Z,2026-11-27T00:00:00Z,tok_2,'=cmd(),1,0.5,2,,,,,,,",
      '',
    ]);
  });
  it('exports spend per model and per day', () => {
    expect(modelSpendCSV({ ...range, byModel: [{ provider: 'openai', model: 'gpt-4o', requests: 2, costUsd: 1.25, unpricedRequests: 1 }] })).toBe(
      'from,to,provider,model,requests,cost_usd,unpriced_requests\r\n2026-11-20T00:00:00Z,2026-11-27T00:00:00Z,openai,gpt-4o,2,1.25,1\r\n',
    );
    expect(daySpendCSV([{ day: '2026-11-26', requests: 4, costUsd: 0 }])).toBe('day,requests,cost_usd\r\n2026-11-26,4,0\r\n');
  });
});
