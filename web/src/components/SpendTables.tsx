// The tables of spend: per gateway, user or token (with each budget's bar),
// per model and per day. Every table exports itself as CSV in the browser.
// The Spend page uses them; any page that shows spend can.

import type { ReactNode } from 'react';
import type { ScopeSpend, Spend } from '../api/types';
import { formatInt, formatPercent, formatUSD } from '../lib/format';
import { Link } from '../lib/router';
import { daySpendCSV, modelSpendCSV, scopeSpendCSV } from '../lib/spend';
import { BudgetBar, Empty, ExportCSV } from './ui';
import { Cost } from './Cost';

/** SpendSection is a titled panel of one spend table with its export button. */
function SpendSection({ title, id, exporter, children }: { title: string; id: string; exporter: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-labelledby={id} data-spend={id}>
      <div className="panel-head">
        <h2 id={id}>{title}</h2>
        {exporter}
      </div>
      {children}
    </section>
  );
}

const share = (cost: number, total: number) => (total ? formatPercent(cost / total) : '—');

const KIND_LABEL = { gateway: 'Gateway', user: 'User', token: 'API token' } as const;
const NONE_LABEL = { gateway: 'no gateway', user: 'no user (gateway tokens)', token: 'no token' } as const;

/**
 * ScopeSpendTable lists the spend per gateway, user or token of a range,
 * costliest first, with each one's budget bar; link, when given, turns a
 * name into a link (for roles that may open the object).
 */
export function ScopeSpendTable({
  kind,
  rows,
  totalUsd,
  range,
  slug,
  link,
}: {
  kind: 'gateway' | 'user' | 'token';
  rows: ScopeSpend[];
  totalUsd: number;
  range: { from: string; to: string };
  /** slug names the download: sluice-spend-<slug>-by-<kind>.csv */
  slug: string;
  link?: (r: ScopeSpend) => string | null;
}) {
  const title = `By ${kind === 'token' ? 'API token' : kind}`;
  return (
    <SpendSection
      title={title}
      id={`spend-by-${kind}`}
      exporter={<ExportCSV what={`spend ${title.toLowerCase()}`} filename={`sluice-spend-${slug}-by-${kind}.csv`} csv={() => scopeSpendCSV(kind, rows, range)} />}
    >
      {rows.length === 0 ? (
        <Empty>No spend in this range.</Empty>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">{KIND_LABEL[kind]}</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                Share
              </th>
              <th scope="col">Budget</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const to = r.id ? link?.(r) : null;
              const name = r.id ? r.name || <em>{r.id} (deleted or of another tenant)</em> : <em>{NONE_LABEL[kind]}</em>;
              return (
                <tr key={r.id || '-'} data-row={r.name || r.id}>
                  <td>{to ? <Link to={to}>{name}</Link> : name}</td>
                  <td className="num">{formatInt(r.requests)}</td>
                  <td className="num">
                    <Cost usd={r.costUsd} unpriced={r.unpricedRequests} />
                  </td>
                  <td className="num">{share(r.costUsd, totalUsd)}</td>
                  <td className="budget-cell">{r.budget ? <BudgetBar budget={r.budget} compact label={`Budget of ${r.name || r.id}`} /> : 'none'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </SpendSection>
  );
}

/** ModelSpendTable lists the spend per model, costliest first. */
export function ModelSpendTable({ spend: s, slug }: { spend: Spend; slug: string }) {
  const rows = [...s.byModel].sort((a, b) => b.costUsd - a.costUsd);
  return (
    <SpendSection
      title="By model"
      id="spend-by-model"
      exporter={<ExportCSV what="spend by model" filename={`sluice-spend-${slug}-by-model.csv`} csv={() => modelSpendCSV({ ...s, byModel: rows })} />}
    >
      {rows.length === 0 ? (
        <Empty>No spend in this range.</Empty>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                Share
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.provider + '/' + m.model}>
                <td>
                  {m.provider}/{m.model}
                </td>
                <td className="num">{formatInt(m.requests)}</td>
                <td className="num">
                  <Cost usd={m.costUsd} unpriced={m.unpricedRequests} />
                </td>
                <td className="num">{share(m.costUsd, s.totalUsd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </SpendSection>
  );
}

/** DaySpendTable lists the spend per UTC day of the range, newest first (days without requests included). */
export function DaySpendTable({ days, slug }: { days: { day: string; requests: number; costUsd: number }[]; slug: string }) {
  const rows = [...days].reverse();
  return (
    <SpendSection title="By day" id="spend-by-day" exporter={<ExportCSV what="spend by day" filename={`sluice-spend-${slug}-by-day.csv`} csv={() => daySpendCSV(days)} />}>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col" className="num">
              Requests
            </th>
            <th scope="col" className="num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td className="num">{formatInt(d.requests)}</td>
              <td className="num">{formatUSD(d.costUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </SpendSection>
  );
}
