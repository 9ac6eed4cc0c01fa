// A gateway's routes: model names clients may use on /compat, each a list
// of targets tried in order (fallback) or balanced by weight (loadbalance).

import { Fragment, useState, type FormEvent } from 'react';
import { M, Q } from '../../api/queries';
import type { Connection, Gateway, Provider, Route } from '../../api/types';
import { useAction, useGQL } from '../../components/data';
import { ActionsHeader, Button, Empty, Field, InlineProblem, Submit } from '../../components/ui';
import * as v from '../../lib/validate';
import { OptionList, useGatewayModels } from './models';

interface TargetDraft {
  provider: string;
  model: string;
  keyAlias: string;
  weight: string;
}
interface RouteDraft {
  name: string;
  strategy: string;
  targets: TargetDraft[];
}

const toDraft = (r: Route): RouteDraft => ({
  name: r.name,
  strategy: r.strategy,
  targets: r.targets.map((t) => ({ provider: t.provider, model: t.model, keyAlias: t.keyAlias ?? '', weight: String(t.weight) })),
});

/** routeErrors validates route drafts; it returns one message per route (null when valid). */
export function routeErrors(routes: RouteDraft[]): (string | null)[] {
  const names = new Set<string>();
  return routes.map((r) => {
    const e = v.routeName(r.name);
    if (e) return e;
    if (names.has(r.name)) return `The route name ${r.name} is used twice.`;
    names.add(r.name);
    if (r.targets.length < 1 || r.targets.length > 16) return 'A route has 1 to 16 targets.';
    for (const t of r.targets) {
      if (!t.provider) return 'Every target needs a provider.';
      if (!t.model.trim()) return 'Every target needs a model.';
      const w = v.intIn(t.weight, 1, 1000, 'A weight');
      if (w) return w;
    }
    return null;
  });
}

export function Routes({ gateway: g, onSaved }: { gateway: Gateway; onSaved: () => void }) {
  const providers = useGQL<{ providers: Connection<Provider> }>(Q.providers);
  const [routes, setRoutes] = useState<RouteDraft[]>(() => g.routes.map(toDraft));
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const errs = routeErrors(routes);
  const plist = providers.data?.providers?.data ?? [];
  const picks = useGatewayModels(g.id);
  const used = [...new Set(routes.flatMap((r) => r.targets.map((t) => t.provider)))];

  const update = (i: number, r: RouteDraft) => {
    setSaved(false);
    setRoutes(routes.map((x, j) => (j === i ? r : x)));
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (errs.some(Boolean)) return;
    const input = {
      routes: routes.map((r) => ({
        name: r.name,
        strategy: r.strategy,
        targets: r.targets.map((t) => ({ provider: t.provider, model: t.model.trim(), keyAlias: t.keyAlias.trim() || null, weight: Number(t.weight) })),
      })),
    };
    if (await act.run(M.updateGateway, { id: g.id, input }, 'updateGateway')) {
      setSaved(true);
      onSaved();
    }
  };
  const blankTarget = (): TargetDraft => ({ provider: plist[0]?.id ?? 'openai', model: '', keyAlias: '', weight: '1' });

  return (
    <form className="panel" onSubmit={submit} noValidate aria-label="Routes">
      <h2>Routes</h2>
      <p className="hint">
        A route is a model name clients can send to <code>/compat</code>. Retryable failures (timeouts, 429, 5xx) are retried, then the next target is tried.
        Clients can also name any <code>provider/model</code> directly.
      </p>
      {routes.length === 0 && <Empty>No routes: clients name provider/model directly.</Empty>}
      {routes.map((r, i) => (
        <fieldset key={i} className="route">
          <legend>Route {r.name || i + 1}</legend>
          <div className="form-grid">
            <Field label="Route name" error={errs[i] && v.routeName(r.name) ? errs[i] : null}>
              <input value={r.name} onChange={(e) => update(i, { ...r, name: e.target.value })} />
            </Field>
            <Field label="Strategy">
              <select value={r.strategy} onChange={(e) => update(i, { ...r, strategy: e.target.value })}>
                <option value="fallback">Fallback: targets in order</option>
                <option value="loadbalance">Load balance: weighted</option>
              </select>
            </Field>
          </div>
          <table className="table compact">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Key alias</th>
                <th scope="col">Weight</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {r.targets.map((t, k) => {
                const setT = (patch: Partial<TargetDraft>) => update(i, { ...r, targets: r.targets.map((x, j) => (j === k ? { ...x, ...patch } : x)) });
                return (
                  <tr key={k}>
                    <td>{k + 1}</td>
                    <td>
                      <select aria-label={`Provider of target ${k + 1}`} value={t.provider} onChange={(e) => setT({ provider: e.target.value })}>
                        {!plist.some((p) => p.id === t.provider) && <option value={t.provider}>{t.provider}</option>}
                        {plist.map((p) => (
                          <option key={p.id} value={p.id}>
                            {p.name}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      <input
                        aria-label={`Model of target ${k + 1}`}
                        list={`route-models-${t.provider}`}
                        value={t.model}
                        onChange={(e) => setT({ model: e.target.value })}
                        placeholder="gpt-4o"
                        autoComplete="off"
                      />
                    </td>
                    <td>
                      <input aria-label={`Key alias of target ${k + 1}`} list={`route-aliases-${t.provider}`} autoComplete="off" value={t.keyAlias} onChange={(e) => setT({ keyAlias: e.target.value })} placeholder="any" />
                    </td>
                    <td>
                      <input aria-label={`Weight of target ${k + 1}`} inputMode="numeric" className="narrow" value={t.weight} onChange={(e) => setT({ weight: e.target.value })} />
                    </td>
                    <td className="row-actions">
                      <Button className="small" disabled={k === 0} onClick={() => { const ts = [...r.targets]; [ts[k - 1], ts[k]] = [ts[k], ts[k - 1]]; update(i, { ...r, targets: ts }); }} aria-label={`Move target ${k + 1} up`}>
                        ↑
                      </Button>
                      <Button className="small" disabled={r.targets.length === 1} onClick={() => update(i, { ...r, targets: r.targets.filter((_, j) => j !== k) })} aria-label={`Remove target ${k + 1}`}>
                        Remove
                      </Button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {errs[i] && !v.routeName(r.name) && <p className="field-error">{errs[i]}</p>}
          <div className="row-actions">
            <Button className="small" onClick={() => update(i, { ...r, targets: [...r.targets, blankTarget()] })}>
              Add target
            </Button>
            <Button className="small danger" onClick={() => setRoutes(routes.filter((_, j) => j !== i))}>
              Remove route
            </Button>
          </div>
        </fieldset>
      ))}
      <div className="form-actions">
        <Button onClick={() => setRoutes([...routes, { name: '', strategy: 'fallback', targets: [blankTarget()] }])}>Add route</Button>
        <Submit busy={act.busy} disabled={errs.some(Boolean)}>
          Save routes
        </Submit>
        {saved && (
          <span className="saved" role="status">
            Saved.
          </span>
        )}
      </div>
      <InlineProblem problem={act.problem} />
      {used.map((p) => (
        <Fragment key={p}>
          <OptionList id={`route-models-${p}`} models={picks.models(p)} />
          <OptionList id={`route-aliases-${p}`} models={picks.aliases(p)} />
        </Fragment>
      ))}
    </form>
  );
}
