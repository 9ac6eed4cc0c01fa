// The small building blocks every page uses: loading, empty and error
// states, the "no access" panel, labelled form fields, confirm buttons, the
// once-shown secret and paging.

import {
  cloneElement,
  useId,
  useState,
  type ButtonHTMLAttributes,
  type ReactElement,
  type ReactNode,
} from 'react';
import { downloadCSV } from '../lib/csv';
import { useApp } from '../app/context';
import type { Problem } from '../api/errors';
import { ROLE_LABELS } from '../lib/policy';
import type { Budget } from '../api/types';
import { formatPercent, formatUSD } from '../lib/format';
import { budgetLevel, budgetRatio, budgetResets, budgetStateLabel, budgetSummary } from '../lib/budget';

export function Loading({ what }: { what?: string }) {
  return (
    <div className="state loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading{what ? ` ${what}` : ''}…
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state empty">{children}</div>;
}

/** NoAccess is what a page shows for FORBIDDEN: never a blank page. */
export function NoAccess({ what, detail }: { what: string; detail?: string }) {
  const { role } = useApp();
  return (
    <section className="panel no-access" role="alert" aria-label="No access">
      <h2>You don't have access to {what}</h2>
      <p>
        {detail ??
          `Your role, ${ROLE_LABELS[role]}, does not include this part of Sluice. If you need it, ask an administrator of your tenant.`}
      </p>
    </section>
  );
}

/** ProblemView shows a classified error with the right tone and, when given, a retry. */
export function ProblemView({ problem, what, retry }: { problem: Problem; what: string; retry?: () => void }) {
  if (problem.kind === 'forbidden') return <NoAccess what={what} />;
  if (problem.kind === 'not_found') {
    return (
      <section className="panel notice" role="alert">
        <h2>Not found</h2>
        <p>{problem.message || `There is no such ${what}, or it belongs to another tenant.`}</p>
      </section>
    );
  }
  return (
    <section className="panel error-panel" role="alert">
      <h2>Could not load {what}</h2>
      <p>{problem.message}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </section>
  );
}

/** InlineProblem is a form's error line. */
export function InlineProblem({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <p className="form-error" role="alert">
      {problem.message}
      {problem.param ? <span className="param"> (field: {problem.param})</span> : null}
    </p>
  );
}

export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const described = [hint ? id + '-hint' : '', error ? id + '-err' : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={'field' + (error ? ' has-error' : '')}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described })}
      {hint && (
        <small className="hint" id={id + '-hint'}>
          {hint}
        </small>
      )}
      {error && (
        <small className="field-error" id={id + '-err'}>
          {error}
        </small>
      )}
    </div>
  );
}

/** FromToFields are a filter form's From and To (datetime-local values, in the browser's zone). */
export function FromToFields({ from, to, set }: { from: string; to: string; set: (k: 'from' | 'to') => (e: { target: { value: string } }) => void }) {
  return (
    <>
      <Field label="From">
        <input type="datetime-local" value={from} onChange={set('from')} />
      </Field>
      <Field label="To">
        <input type="datetime-local" value={to} onChange={set('to')} />
      </Field>
    </>
  );
}

export function Check({
  label,
  checked,
  onChange,
  disabled,
}: {
  label: ReactNode;
  checked: boolean;
  onChange: (v: boolean) => void;
  disabled?: boolean;
}) {
  return (
    <label className="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}

type BtnProps = ButtonHTMLAttributes<HTMLButtonElement> & { busy?: boolean; kind?: 'primary' | 'danger' | 'plain' };

/** Button disables itself while busy; writes are disabled in the read-only demo unless `read` is set. */
export function Button({ busy, kind = 'plain', children, disabled, className, write = true, ...rest }: BtnProps & { write?: boolean }) {
  const { readOnly } = useApp();
  const ro = readOnly && write;
  return (
    <button
      type="button"
      className={[kind, className].filter(Boolean).join(' ')}
      disabled={disabled || busy || ro}
      title={ro ? 'Read-only demo' : rest.title}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy ? <span className="spinner small" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

export function Submit({ busy, children, disabled }: { busy?: boolean; children: ReactNode; disabled?: boolean }) {
  const { readOnly } = useApp();
  return (
    <button type="submit" className="primary" disabled={disabled || busy || readOnly} title={readOnly ? 'Read-only demo' : undefined} aria-busy={busy || undefined}>
      {busy ? <span className="spinner small" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

/** ConfirmButton asks a second time, in place, before a destructive action. */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  busy,
}: {
  label: string;
  confirm: string;
  onConfirm: () => void;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <Button kind="danger" className="small" onClick={() => setAsking(true)} busy={busy}>
        {label}
      </Button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={confirm}>
      <Button
        kind="danger"
        className="small"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirm}
      </Button>
      <button type="button" className="small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" className="small" onClick={copy}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy by hand' : label}
    </button>
  );
}

/** SecretOnce shows a new token's secret, the only time the server sends it. */
export function SecretOnce({ secret, onDone, what = 'token' }: { secret: string; onDone: () => void; what?: string }) {
  return (
    <div className="secret-once" role="region" aria-label={`New ${what}`}>
      <p>
        <strong>Copy the new {what} now.</strong> It is shown this once; Sluice keeps only a hash of it.
      </p>
      <div className="secret-row">
        <code className="secret" data-testid="new-secret">
          {secret}
        </code>
        <CopyButton text={secret} />
      </div>
      <button type="button" className="small" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

/**
 * BudgetBar shows a budget everywhere one shows: a meter that turns amber
 * at 80 % and red at 100 %, and the same state in words (level, figures,
 * period and when it resets), so colour is never the only sign. compact
 * fits a table cell; label names the budget for screen readers.
 */
export function BudgetBar({ budget, compact = false, label = 'Budget' }: { budget: Budget; compact?: boolean; label?: string }) {
  const ratio = budgetRatio(budget);
  const level = budgetLevel(budget);
  const state = budgetStateLabel(budget);
  return (
    <div className={'budget' + (compact ? ' compact' : '')} data-level={level}>
      <div
        className={'bar ' + level}
        role="meter"
        aria-valuemin={0}
        aria-valuemax={budget.amountUsd}
        aria-valuenow={Math.min(budget.spentUsd, budget.amountUsd)}
        aria-valuetext={budgetSummary(budget)}
        aria-label={`${label} spent`}
      >
        <span style={{ width: `${Math.min(100, ratio * 100)}%` }} />
      </div>
      <div className="budget-figures">
        {level !== 'ok' && <Badge tone={level === 'over' ? 'bad' : 'warn'}>{state}</Badge>}
        <span>
          {formatUSD(budget.spentUsd)} of {formatUSD(budget.amountUsd)} ({formatPercent(ratio, 0)})
        </span>
        {!compact && <span>{formatUSD(budget.remainingUsd)} left</span>}
        <span>
          {budget.period}, {budget.hard ? (compact ? 'hard' : 'hard (requests over it are refused)') : compact ? 'soft' : 'soft (flagged only)'}
        </span>
        <span>{budgetResets(budget)}</span>
      </div>
    </div>
  );
}

/** usePager keeps the cursors of the pages visited so that "Previous" works on cursor lists. */
export function usePager() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  const cursor = stack[stack.length - 1];
  return {
    cursor,
    page: stack.length,
    next: (c: string) => setStack((s) => [...s, c]),
    prev: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([null]),
  };
}

export function Pager({ pager, nextCursor }: { pager: ReturnType<typeof usePager>; nextCursor?: string | null }) {
  if (pager.page === 1 && !nextCursor) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="small" disabled={pager.page === 1} onClick={pager.prev}>
        ← Previous
      </button>
      <span>Page {pager.page}</span>
      <button type="button" className="small" disabled={!nextCursor} onClick={() => nextCursor && pager.next(nextCursor)}>
        Next →
      </button>
    </nav>
  );
}

/** ActionsHeader heads a column of row buttons (its name is for screen readers). */
export const ActionsHeader = () => (
  <th scope="col">
    <span className="sr-only">Actions</span>
  </th>
);

/** Saved says, to screen readers too, that a write went through. */
export function Saved({ children }: { children: ReactNode }) {
  return (
    <p className="saved" role="status">
      {children}
    </p>
  );
}

/** ExportCSV downloads the CSV that csv builds when pressed; what, if given, names the table for screen readers (after the visible text, which the name must contain). */
export function ExportCSV({ filename, csv, what }: { filename: string; csv: () => string; what?: string }) {
  return (
    <button type="button" className="small" onClick={() => downloadCSV(filename, csv())}>
      Export CSV{what && <span className="sr-only"> of {what}</span>}
    </button>
  );
}

export function StatusBadge({ status }: { status: number }) {
  const cls = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'good';
  return <span className={'badge ' + cls}>{status}</span>;
}

export function Badge({ children, tone = 'neutral' }: { children: ReactNode; tone?: 'good' | 'warn' | 'bad' | 'neutral' }) {
  return <span className={'badge ' + tone}>{children}</span>;
}

export function PageHeader({ title, children, subtitle }: { title: string; subtitle?: ReactNode; children?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle && <p className="subtitle">{subtitle}</p>}
      </div>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}

export function Stat({ label, value, sub }: { label: string; value: ReactNode; sub?: ReactNode }) {
  return (
    <div className="stat" role="group" aria-label={label}>
      <div className="stat-label">{label}</div>
      <div className="stat-value" data-testid={'stat-' + label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}>
        {value}
      </div>
      {sub && <div className="stat-sub">{sub}</div>}
    </div>
  );
}
