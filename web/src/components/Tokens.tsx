// Token lists and the create form, shared by gateway tokens, user tokens
// and My Account. A new token's secret is shown once, with a copy button.

import { Fragment, useState, type FormEvent, type ReactNode } from 'react';
import type { Token } from '../api/types';
import { BudgetForm } from './BudgetForm';
import { formatRelative, formatTime } from '../lib/format';
import { localInputToISO } from '../lib/range';
import * as v from '../lib/validate';
import { useAction } from './data';
import { ActionsHeader, Badge, BudgetBar, Button, ConfirmButton, Empty, Field, InlineProblem, SecretOnce, Submit } from './ui';

/** setBudget sets (budget) or removes (null) the budget of a token, returning null when it failed. */
export type SetTokenBudget = (t: Token, budget: { amountUsd: number; period: string; hard: boolean } | null, act: ReturnType<typeof useAction>) => Promise<unknown>;

export function TokenTable({
  tokens,
  onRevoke,
  onDelete,
  setBudget,
  onChanged,
}: {
  tokens: Token[];
  onRevoke?: (t: Token) => void;
  onDelete?: (t: Token) => void;
  /** setBudget, when given, offers to edit each token's budget (Manage gateway API tokens). */
  setBudget?: SetTokenBudget;
  onChanged?: () => void;
}) {
  const [open, setOpen] = useState<string | null>(null);
  if (tokens.length === 0) return <Empty>No tokens.</Empty>;
  const cols = 9;
  return (
    <table className="table">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Token</th>
          <th scope="col">Status</th>
          <th scope="col">Limits</th>
          <th scope="col">Models</th>
          <th scope="col">Budget</th>
          <th scope="col">Last used</th>
          <th scope="col">Created</th>
          <ActionsHeader />
        </tr>
      </thead>
      <tbody>
        {tokens.map((t) => {
          const expired = t.expiresAt && new Date(t.expiresAt).getTime() < Date.now();
          return (
            <Fragment key={t.id}>
              <tr data-token={t.name}>
                <td>{t.name || <em>unnamed</em>}</td>
                <td>
                  <code>
                    {t.prefix}…{t.last4}
                  </code>
                </td>
                <td>
                  {t.revoked ? (
                    <Badge tone="bad">revoked</Badge>
                  ) : expired ? (
                    <Badge tone="warn">expired</Badge>
                  ) : (
                    <Badge tone="good">{t.expiresAt ? `expires ${formatRelative(t.expiresAt)}` : 'active'}</Badge>
                  )}
                </td>
                <td>
                  {t.rateLimit.requestsPerMinute == null && t.rateLimit.tokensPerMinute == null
                    ? '—'
                    : [t.rateLimit.requestsPerMinute != null && `${t.rateLimit.requestsPerMinute} req/min`, t.rateLimit.tokensPerMinute != null && `${t.rateLimit.tokensPerMinute} tok/min`]
                        .filter(Boolean)
                        .join(', ')}
                </td>
                <td className="wrap">{t.allowedModels.length ? t.allowedModels.join(', ') : 'all'}</td>
                <td className="budget-cell">{t.budget ? <BudgetBar budget={t.budget} compact label={`Budget of token ${t.name || t.prefix}`} /> : 'none'}</td>
                <td>{t.lastUsedAt ? formatRelative(t.lastUsedAt) : 'never'}</td>
                <td>{formatTime(t.createdAt)}</td>
                <td className="row-actions">
                  {setBudget && !t.revoked && (
                    <button type="button" className="small" aria-expanded={open === t.id} onClick={() => setOpen(open === t.id ? null : t.id)}>
                      {open === t.id ? 'Close' : 'Budget'}
                    </button>
                  )}
                  {onRevoke && !t.revoked && (
                    <ConfirmButton label="Revoke" confirm={`Revoke ${t.name || t.prefix}`} onConfirm={() => onRevoke(t)} />
                  )}
                  {onDelete && <ConfirmButton label="Delete" confirm={`Delete ${t.name || t.prefix}`} onConfirm={() => onDelete(t)} />}
                </td>
              </tr>
              {setBudget && open === t.id && (
                <tr data-token-budget={t.name}>
                  <td colSpan={cols}>
                    <BudgetForm
                      key={JSON.stringify(t.budget ?? null)}
                      label={`Budget of token ${t.name || t.prefix}`}
                      budget={t.budget ?? null}
                      set={(b, act) => setBudget(t, b, act)}
                      remove={(act) => setBudget(t, null, act)}
                      onChanged={() => onChanged?.()}
                    />
                  </td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}

/** CreateToken asks for a token's name, expiry, limits and models, and shows the secret of the new token once. */
export function CreateToken({
  create,
  onCreated,
  title = 'New token',
  afterSecret,
}: {
  /** create runs the mutation with a TokenInput and returns the created token (with its secret), or null. */
  create: (input: Record<string, unknown>, act: ReturnType<typeof useAction>) => Promise<Token | null>;
  onCreated: () => void;
  title?: string;
  /** afterSecret, when given, renders more about the new token beside its secret (shown once, with it). */
  afterSecret?: (secret: string) => ReactNode;
}) {
  const [f, setF] = useState({ name: '', expires: '', rpm: '', tpm: '', models: '' });
  const [secret, setSecret] = useState<string | null>(null);
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const errs = {
    name: f.name.length > 200 ? 'At most 200 characters.' : null,
    expires: v.futureTime(f.expires),
    rpm: v.intIn(f.rpm, 1, 10_000_000, 'Requests per minute', true),
    tpm: v.intIn(f.tpm, 1, 2_000_000_000, 'Tokens per minute', true),
  };
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (Object.values(errs).some(Boolean)) return;
    const input: Record<string, unknown> = { name: f.name.trim() || undefined };
    const exp = localInputToISO(f.expires);
    if (exp) input.expiresAt = exp;
    if (f.rpm || f.tpm) input.rateLimit = { requestsPerMinute: f.rpm ? Number(f.rpm) : null, tokensPerMinute: f.tpm ? Number(f.tpm) : null };
    const models = v.csvList(f.models);
    if (models.length) input.allowedModels = models;
    const t = await create(input, act);
    if (t?.secret) {
      setSecret(t.secret);
      setF({ name: '', expires: '', rpm: '', tpm: '', models: '' });
      setTouched(false);
      onCreated();
    }
  };
  return (
    <section className="panel">
      <h2>{title}</h2>
      {secret && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
      {secret && afterSecret?.(secret)}
      <form onSubmit={submit} noValidate aria-label={title}>
        <div className="form-grid">
          <Field label="Token name" error={touched ? errs.name : null}>
            <input value={f.name} onChange={set('name')} placeholder="ci, laptop…" />
          </Field>
          <Field label="Expires" hint="Optional." error={touched ? errs.expires : null}>
            <input type="datetime-local" value={f.expires} onChange={set('expires')} />
          </Field>
          <Field label="Requests per minute" hint="Optional limit." error={touched ? errs.rpm : null}>
            <input inputMode="numeric" value={f.rpm} onChange={set('rpm')} />
          </Field>
          <Field label="Tokens per minute" hint="Optional limit." error={touched ? errs.tpm : null}>
            <input inputMode="numeric" value={f.tpm} onChange={set('tpm')} />
          </Field>
          <Field label="Allowed models" hint="Comma-separated; empty allows all.">
            <input value={f.models} onChange={set('models')} />
          </Field>
        </div>
        <div className="form-actions">
          <Submit busy={act.busy}>Create token</Submit>
        </div>
        <InlineProblem problem={act.problem} />
      </form>
    </section>
  );
}

export { Button };
