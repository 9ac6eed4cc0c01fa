// Model prices (USD per million tokens) with deprecation and sunset dates.
// Administrators edit them; a change applies to requests served after it.
// Above them, the models that served requests in the last 30 days without a
// price (their cost counted as 0), each with a one-click "Add price" that
// fills the form below.

import { useMemo, useRef, useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, ModelPrice, Provider, UnpricedModel } from '../api/types';
import { QueryView, useAction, useGQL, type QueryState } from '../components/data';
import { ActionsHeader, Badge, Button, ConfirmButton, Empty, ExportCSV, Field, InlineProblem, PageHeader, Pager, Submit, usePager } from '../components/ui';
import { objectsToCSV } from '../lib/csv';
import { formatCompact, formatDate, formatInt, formatUSD } from '../lib/format';
import { allowed } from '../lib/policy';
import { rangeOf } from '../lib/range';
import * as v from '../lib/validate';

/** lifecycle says whether a model is current, deprecated or past its sunset. */
export function lifecycle(p: Pick<ModelPrice, 'deprecatedAt' | 'sunsetAt'>, now = new Date()): 'current' | 'deprecated' | 'sunset' {
  if (p.sunsetAt && new Date(p.sunsetAt) <= now) return 'sunset';
  if (p.deprecatedAt && new Date(p.deprecatedAt) <= now) return 'deprecated';
  return 'current';
}

export function Prices() {
  const { role } = useApp();
  const [provider, setProvider] = useState('');
  const pager = usePager();
  const q = useGQL<{ modelPrices: Connection<ModelPrice> }>(Q.prices, { provider: provider || null, cursor: pager.cursor });
  const providers = useGQL<{ providers: Connection<Provider> }>(Q.providers);
  const [editing, setEditing] = useState<string | null>(null);
  const canEdit = allowed(role, 'model_price.put');
  const del = useAction();
  const plist = providers.data?.providers?.data ?? [];
  const [prefill, setPrefill] = useState<{ provider: string; model: string; n: number } | null>(null);
  const addForm = useRef<HTMLElement>(null);
  const r30 = useMemo(() => rangeOf('30d'), []);
  const unpriced = useGQL<{ unpricedModels: Connection<UnpricedModel> }>(Q.unpricedModels, { from: r30.from, to: r30.to });
  const saved = () => {
    q.refetch();
    unpriced.refetch();
  };
  return (
    <>
      <PageHeader title="Model prices" subtitle="USD per million tokens. The cost of a request is computed when it is served; later changes do not rewrite history.">
        <div className="inline-field">
          <label htmlFor="price-provider">Provider</label>
          <select
            id="price-provider"
            value={provider}
            onChange={(e) => {
              pager.reset();
              setProvider(e.target.value);
            }}
          >
            <option value="">All</option>
            {plist.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
      </PageHeader>
      <Unpriced
        q={unpriced}
        canEdit={canEdit}
        onAdd={(m) => {
          setPrefill({ provider: m.provider, model: m.model, n: (prefill?.n ?? 0) + 1 });
          setTimeout(() => {
            addForm.current?.scrollIntoView({ block: 'center' });
            addForm.current?.querySelector<HTMLInputElement>('input[inputmode="decimal"]')?.focus();
          });
        }}
      />
      <section className="panel">
        <QueryView<Connection<ModelPrice>> q={q} field="modelPrices" what="model prices">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No prices{provider ? ` for ${provider}` : ''}.</Empty>
            ) : (
              <>
                <div className="panel-head">
                  <span>{c.data.length} models on this page</span>
                  <ExportCSV filename="sluice-model-prices.csv" csv={() => objectsToCSV(c.data, ['provider', 'model', 'inputPerMtok', 'outputPerMtok', 'cachedInputPerMtok', 'deprecatedAt', 'sunsetAt', 'source'])} />
                </div>
                <div className="table-scroll">
                  <table className="table">
                    <thead>
                      <tr>
                        <th scope="col">Provider</th>
                        <th scope="col">Model</th>
                        <th scope="col" className="num">
                          Input
                        </th>
                        <th scope="col" className="num">
                          Output
                        </th>
                        <th scope="col" className="num">
                          Cached input
                        </th>
                        <th scope="col">Deprecated</th>
                        <th scope="col">Sunset</th>
                        <th scope="col">Source</th>
                        {canEdit && <ActionsHeader />}
                      </tr>
                    </thead>
                    <tbody>
                      {c.data.map((p) => {
                        const k = p.provider + '/' + p.model;
                        if (editing === k) {
                          return (
                            <tr key={k}>
                              <td colSpan={9}>
                                <PriceForm
                                  price={p}
                                  providers={plist}
                                  onDone={() => {
                                    setEditing(null);
                                    saved();
                                  }}
                                  onCancel={() => setEditing(null)}
                                />
                              </td>
                            </tr>
                          );
                        }
                        const life = lifecycle(p);
                        return (
                          <tr key={k} className={life !== 'current' ? 'row-' + life : undefined}>
                            <td>{p.provider}</td>
                            <td>
                              {p.model} {life !== 'current' && <Badge tone={life === 'sunset' ? 'bad' : 'warn'}>{life}</Badge>}
                            </td>
                            <td className="num">{formatUSD(p.inputPerMtok)}</td>
                            <td className="num">{formatUSD(p.outputPerMtok)}</td>
                            <td className="num">{formatUSD(p.cachedInputPerMtok)}</td>
                            <td>{formatDate(p.deprecatedAt)}</td>
                            <td>{formatDate(p.sunsetAt)}</td>
                            <td>{p.source}</td>
                            {canEdit && (
                              <td className="row-actions">
                                <Button className="small" onClick={() => setEditing(k)}>
                                  Edit
                                </Button>
                                <ConfirmButton
                                  label="Delete"
                                  confirm={`Delete the price of ${p.model}`}
                                  onConfirm={async () => {
                                    if (await del.run(M.deleteModelPrice, { provider: p.provider, model: p.model }, 'deleteModelPrice')) q.refetch();
                                  }}
                                />
                              </td>
                            )}
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
                <Pager pager={pager} nextCursor={c.nextCursor} />
              </>
            )
          }
        </QueryView>
        <InlineProblem problem={del.problem} />
      </section>
      {canEdit && plist.length > 0 && (
        <section className="panel" ref={addForm} aria-labelledby="add-price">
          <h2 id="add-price">Add or replace a price</h2>
          <PriceForm key={prefill ? `${prefill.provider}/${prefill.model}/${prefill.n}` : 'new'} initial={prefill ?? undefined} providers={plist} onDone={saved} />
        </section>
      )}
    </>
  );
}

const dateIn = (iso: string | null) => (iso ? iso.slice(0, 10) : '');
const dateOut = (d: string) => (d ? new Date(d + 'T00:00:00Z').toISOString() : null);

/** Unpriced lists the models that served requests in the last 30 days without a price and still have none. */
function Unpriced({ q, canEdit, onAdd }: { q: QueryState<{ unpricedModels: Connection<UnpricedModel> }>; canEdit: boolean; onAdd: (m: UnpricedModel) => void }) {
  return (
    <section className="panel" aria-labelledby="unpriced-models" data-testid="unpriced-models">
      <h2 id="unpriced-models">Models in use without a price</h2>
      <p className="hint">Models that answered requests in the last 30 days with no price: their cost counts as 0 and reads “unpriced”. A price applies to requests served after it is added.</p>
      <QueryView<Connection<UnpricedModel>> q={q} field="unpricedModels" what="the models without a price">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>Every model in use has a price.</Empty>
          ) : (
            <div className="table-scroll">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Model</th>
                    <th scope="col" className="num">
                      Unpriced requests
                    </th>
                    <th scope="col" className="num">
                      Tokens in / out
                    </th>
                    {canEdit && <ActionsHeader />}
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((m) => (
                    <tr key={m.provider + '/' + m.model} data-unpriced-model={`${m.provider}/${m.model}`}>
                      <td>{m.provider}</td>
                      <td>{m.model}</td>
                      <td className="num">{formatInt(m.requests)}</td>
                      <td className="num">
                        {formatCompact(m.tokensIn)} / {formatCompact(m.tokensOut)}
                      </td>
                      {canEdit && (
                        <td className="row-actions">
                          <Button className="small" onClick={() => onAdd(m)} aria-label={`Add price for ${m.provider}/${m.model}`}>
                            Add price
                          </Button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
    </section>
  );
}

function PriceForm({
  price,
  initial,
  providers,
  onDone,
  onCancel,
}: {
  price?: ModelPrice;
  /** initial fills a new price's provider and model (an unpriced model's "Add price"). */
  initial?: { provider: string; model: string };
  providers: Provider[];
  onDone: () => void;
  onCancel?: () => void;
}) {
  const [f, setF] = useState({
    provider: price?.provider ?? initial?.provider ?? providers[0].id,
    model: price?.model ?? initial?.model ?? '',
    input: price ? String(price.inputPerMtok) : '',
    output: price ? String(price.outputPerMtok) : '',
    cached: price ? String(price.cachedInputPerMtok) : '',
    deprecated: dateIn(price?.deprecatedAt ?? null),
    sunset: dateIn(price?.sunsetAt ?? null),
  });
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const errs = {
    model: f.model.trim() ? null : 'The model is required.',
    input: v.price(f.input, 'The input price'),
    output: v.price(f.output, 'The output price'),
    cached: v.price(f.cached, 'The cached input price'),
    sunset: f.sunset && f.deprecated && f.sunset <= f.deprecated ? 'The sunset must come after the deprecation.' : null,
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (Object.values(errs).some(Boolean)) return;
    const input = [
      {
        provider: f.provider,
        model: f.model.trim(),
        inputPerMtok: Number(f.input || 0),
        outputPerMtok: Number(f.output || 0),
        cachedInputPerMtok: Number(f.cached || 0),
        deprecatedAt: dateOut(f.deprecated),
        sunsetAt: dateOut(f.sunset),
      },
    ];
    if (await act.run(M.putModelPrices, { input }, 'putModelPrices')) {
      if (!price) setF({ ...f, model: '', input: '', output: '', cached: '', deprecated: '', sunset: '' });
      setTouched(false);
      onDone();
    }
  };
  const show = (k: keyof typeof errs) => (touched ? errs[k] : null);
  return (
    <form onSubmit={submit} noValidate aria-label={price ? `Edit the price of ${price.model}` : 'Add a price'}>
      <div className="form-grid dense">
        <Field label="Provider">
          <select value={f.provider} onChange={set('provider')} disabled={!!price}>
            {providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
            {!providers.some((p) => p.id === f.provider) && <option value={f.provider}>{f.provider}</option>}
          </select>
        </Field>
        <Field label="Model" error={show('model')}>
          <input value={f.model} onChange={set('model')} disabled={!!price} />
        </Field>
        <Field label="Input per Mtok" error={show('input')}>
          <input inputMode="decimal" value={f.input} onChange={set('input')} />
        </Field>
        <Field label="Output per Mtok" error={show('output')}>
          <input inputMode="decimal" value={f.output} onChange={set('output')} />
        </Field>
        <Field label="Cached input per Mtok" error={show('cached')}>
          <input inputMode="decimal" value={f.cached} onChange={set('cached')} />
        </Field>
        <Field label="Deprecated on">
          <input type="date" value={f.deprecated} onChange={set('deprecated')} />
        </Field>
        <Field label="Sunset on" hint="After it, the model answers 410." error={show('sunset')}>
          <input type="date" value={f.sunset} onChange={set('sunset')} />
        </Field>
      </div>
      <div className="form-actions">
        <Submit busy={act.busy}>{price ? 'Save price' : 'Add price'}</Submit>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <InlineProblem problem={act.problem} />
    </form>
  );
}
