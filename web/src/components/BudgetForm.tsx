// Setting and removing a budget: of a gateway, a user, an API token or the tenant.

import { useState, type FormEvent } from 'react';
import type { Budget } from '../api/types';
import * as v from '../lib/validate';
import { useAction } from './data';
import { BudgetBar, Check, ConfirmButton, Empty, Field, InlineProblem, Submit } from './ui';

export function BudgetForm({
  budget,
  set,
  remove,
  onChanged,
  label = 'Budget',
}: {
  /** label names the budget (the form and its bar), e.g. "Budget of token ci". */
  label?: string;
  budget: Budget | null;
  set: (input: { amountUsd: number; period: string; hard: boolean }, act: ReturnType<typeof useAction>) => Promise<unknown>;
  remove: (act: ReturnType<typeof useAction>) => Promise<unknown>;
  onChanged: () => void;
}) {
  const [f, setF] = useState({ amount: budget ? String(budget.amountUsd) : '', period: budget?.period ?? 'monthly', hard: budget?.hard ?? true });
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const err = v.amount(f.amount);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (err) return;
    if (await set({ amountUsd: Number(f.amount), period: f.period, hard: f.hard }, act)) onChanged();
  };
  return (
    <>
      {budget ? <BudgetBar budget={budget} label={label} /> : <Empty>No budget: spending is not limited.</Empty>}
      <form onSubmit={submit} noValidate aria-label={label}>
        <div className="form-grid">
          <Field label="Budget amount (USD)" error={touched ? err : null}>
            <input inputMode="decimal" value={f.amount} onChange={(e) => setF({ ...f, amount: e.target.value })} />
          </Field>
          <Field label="Period" hint="UTC calendar; weeks start on Monday.">
            <select value={f.period} onChange={(e) => setF({ ...f, period: e.target.value })}>
              <option value="daily">Daily</option>
              <option value="weekly">Weekly</option>
              <option value="monthly">Monthly</option>
              <option value="total">Total (never resets)</option>
            </select>
          </Field>
        </div>
        <Check label="Hard budget: refuse requests over it (otherwise only flag them)" checked={f.hard} onChange={(b) => setF({ ...f, hard: b })} />
        <div className="form-actions">
          <Submit busy={act.busy}>{budget ? 'Update budget' : 'Set budget'}</Submit>
          {budget && (
            <ConfirmButton
              label="Remove budget"
              confirm="Remove the budget"
              onConfirm={async () => {
                if (await remove(act)) onChanged();
              }}
            />
          )}
        </div>
        <InlineProblem problem={act.problem} />
      </form>
    </>
  );
}
