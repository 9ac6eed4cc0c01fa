// A gateway's provider keys. The key itself is write-only: after adding
// it, only its last four characters are ever shown. Each key shows its
// health (its circuit breaker and last error), can be tested (one minimal
// upstream call made by the server) and rotated without delete-and-re-add:
// add the new key, shift the weight to it, retire (disable) the old one.

import { useState, type FormEvent } from 'react';
import { M, Q } from '../../api/queries';
import type { BreakerState, CatalogModel, Connection, Gateway, KeyTest, Provider, ProviderKey } from '../../api/types';
import { QueryView, useAction, useGQL } from '../../components/data';
import { ActionsHeader, Badge, Button, ConfirmButton, Empty, Field, InlineProblem, Saved, Submit } from '../../components/ui';
import { formatDuration, formatRelative, formatTime } from '../../lib/format';
import * as v from '../../lib/validate';
import { BreakerBadge } from './Observe';
import { modelOptions } from './models';

type KeysData = {
  providerKeys: Connection<ProviderKey>;
  providers: Connection<Provider>;
  circuitBreaker: Connection<BreakerState>;
  models: Connection<CatalogModel>;
};

export function Keys({ gateway: g }: { gateway: Gateway }) {
  const q = useGQL<KeysData>(Q.gatewayKeys, { id: g.id });
  const act = useAction();
  const [tests, setTests] = useState<Record<string, KeyTest>>({});
  const [rotating, setRotating] = useState<ProviderKey | null>(null);
  const providers = q.data?.providers?.data ?? [];
  const breakers = q.data?.circuitBreaker?.data ?? [];
  const catalog = q.data?.models?.data ?? [];
  const keys = q.data?.providerKeys?.data ?? [];
  const ref = (k: ProviderKey) => ({ gatewayId: g.id, provider: k.provider, alias: k.alias });

  const test = async (k: ProviderKey) => {
    const res = await act.run<KeyTest>(M.testProviderKey, ref(k), 'testProviderKey');
    if (res) setTests({ ...tests, [k.id]: res });
  };
  const setDisabled = async (k: ProviderKey, disabled: boolean) => {
    if (await act.run(M.updateProviderKey, { ...ref(k), input: { disabled } }, 'updateProviderKey')) q.refetch();
  };

  return (
    <>
      <section className="panel">
        <div className="panel-head">
          <h2>Provider keys</h2>
          <button type="button" onClick={q.refetch}>
            Refresh
          </button>
        </div>
        <QueryView<Connection<ProviderKey>> q={q} field="providerKeys" what="the provider keys">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No provider key yet: requests have nowhere to go. Add one below.</Empty>
            ) : (
              <table className="table keys-table">
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Alias</th>
                    <th scope="col">Key</th>
                    <th scope="col">Health</th>
                    <th scope="col" className="num">
                      Weight
                    </th>
                    <th scope="col">Models</th>
                    <th scope="col">Added</th>
                    <ActionsHeader />
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((k) => {
                    const b = breakers.find((x) => x.provider === k.provider && x.keyAlias === k.alias);
                    const t = tests[k.id];
                    return (
                      <tr key={k.id} data-key={`${k.provider}/${k.alias}`}>
                        <td>{providers.find((p) => p.id === k.provider)?.name ?? k.provider}</td>
                        <td>
                          <code>{k.alias}</code>
                        </td>
                        <td>
                          <code>…{k.last4}</code>
                          <div className="hint wrap">{k.baseUrl || 'provider default'}</div>
                        </td>
                        <td className="wrap" data-testid="key-health">
                          {k.disabled ? <Badge tone="neutral">disabled</Badge> : <BreakerBadge state={b?.state ?? 'closed'} />}
                          {b?.lastError ? (
                            <div className="hint">
                              Last error {formatRelative(b.lastErrorAt)}: {b.lastError}
                            </div>
                          ) : null}
                          {t && (
                            <div className={t.ok ? 'saved' : 'error-text'} role="status" data-testid="key-test">
                              {t.ok ? `Test ok: ${t.model} answered in ${formatDuration(t.latencyMs)}.` : `Test failed (${t.model}): ${t.message}`}
                            </div>
                          )}
                        </td>
                        <td className="num">{k.weight}</td>
                        <td className="wrap">{k.models.length ? k.models.join(', ') : 'any'}</td>
                        <td>{formatTime(k.createdAt)}</td>
                        <td className="row-actions">
                          <Button className="small" busy={act.busy} onClick={() => test(k)} aria-label={`Test ${k.provider}/${k.alias}`}>
                            Test
                          </Button>
                          {!k.disabled && (
                            <Button className="small" onClick={() => setRotating(k)} aria-label={`Rotate ${k.provider}/${k.alias}`}>
                              Rotate
                            </Button>
                          )}
                          {k.disabled ? (
                            <Button className="small" onClick={() => setDisabled(k, false)} aria-label={`Enable ${k.provider}/${k.alias}`}>
                              Enable
                            </Button>
                          ) : (
                            <ConfirmButton label="Disable" confirm={`Disable ${k.provider}/${k.alias}`} onConfirm={() => setDisabled(k, true)} />
                          )}
                          <ConfirmButton
                            label="Delete"
                            confirm={`Delete ${k.provider}/${k.alias}`}
                            onConfirm={async () => {
                              if (await act.run(M.deleteProviderKey, ref(k), 'deleteProviderKey')) q.refetch();
                            }}
                          />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )
          }
        </QueryView>
        <InlineProblem problem={act.problem} />
      </section>
      {rotating && (
        <Rotate
          key={rotating.id}
          gatewayId={g.id}
          old={rotating}
          keys={keys}
          onChanged={q.refetch}
          onClose={() => setRotating(null)}
        />
      )}
      {providers.length > 0 && <AddKey gatewayId={g.id} providers={providers} keys={keys} catalog={catalog} onAdded={q.refetch} />}
    </>
  );
}

/**
 * Rotate guides a key rotation in three steps: add the new key (the same
 * provider, endpoint and models), shift traffic to it by weight, then
 * disable the old key. Nothing is deleted; the old key can be enabled
 * again until it is.
 */
function Rotate({
  gatewayId,
  old,
  keys,
  onChanged,
  onClose,
}: {
  gatewayId: string;
  old: ProviderKey;
  keys: ProviderKey[];
  onChanged: () => void;
  onClose: () => void;
}) {
  const [f, setF] = useState({ alias: nextAlias(old.alias, keys), key: '', share: '90' });
  const [added, setAdded] = useState<ProviderKey | null>(null);
  const [shifted, setShifted] = useState(false);
  const [retired, setRetired] = useState(false);
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const label = `${old.provider}/${old.alias}`;
  const errs = { alias: v.keyAlias(f.alias), key: v.providerKey(f.key), share: v.intIn(f.share, 1, 100, 'The share') };
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });

  const add = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (errs.alias || errs.key) return;
    const input = { provider: old.provider, alias: f.alias, key: f.key.trim(), baseUrl: old.baseUrl || undefined, weight: old.weight, models: old.models };
    const k = await act.run<ProviderKey>(M.addProviderKey, { gatewayId, input }, 'addProviderKey');
    if (k) {
      setAdded(k);
      setF({ ...f, key: '' });
      onChanged();
    }
  };
  const shift = async (e: FormEvent) => {
    e.preventDefault();
    if (!added || errs.share) return;
    const share = Number(f.share);
    // Weights are 1–1,000: the share in percent, the old key keeping at least 1.
    const ok =
      (await act.run(M.updateProviderKey, { gatewayId, provider: added.provider, alias: added.alias, input: { weight: share } }, 'updateProviderKey')) &&
      (await act.run(M.updateProviderKey, { gatewayId, provider: old.provider, alias: old.alias, input: { weight: Math.max(100 - share, 1) } }, 'updateProviderKey'));
    if (ok) {
      setShifted(true);
      onChanged();
    }
  };
  const retire = async () => {
    if (await act.run(M.updateProviderKey, { gatewayId, provider: old.provider, alias: old.alias, input: { disabled: true } }, 'updateProviderKey')) {
      setRetired(true);
      onChanged();
    }
  };

  return (
    <section className="panel rotate" aria-label={`Rotate ${label}`}>
      <div className="panel-head">
        <h2>Rotate {label}</h2>
        <button type="button" className="small" onClick={onClose}>
          Close
        </button>
      </div>
      <ol className="steps">
        <li aria-current={!added ? 'step' : undefined}>
          <h3>1. Add the new key</h3>
          {added ? (
            <p className="saved">
              Added {added.provider}/{added.alias} (…{added.last4}) with the old key’s endpoint and models.
            </p>
          ) : (
            <form onSubmit={add} noValidate aria-label="New key of the rotation">
              <div className="form-grid">
                <Field label="New alias" error={touched ? errs.alias : null}>
                  <input value={f.alias} onChange={set('alias')} autoComplete="off" />
                </Field>
                <Field label="New API key" hint="Write-only: stored encrypted, never shown again." error={touched ? errs.key : null}>
                  <input type="password" value={f.key} onChange={set('key')} autoComplete="new-password" spellCheck={false} />
                </Field>
              </div>
              <p className="hint">
                Sent to {old.baseUrl || 'the provider’s default endpoint'}; models {old.models.length ? old.models.join(', ') : 'any'}.
              </p>
              <div className="form-actions">
                <Submit busy={act.busy}>Add new key</Submit>
              </div>
            </form>
          )}
        </li>
        <li aria-current={added && !shifted ? 'step' : undefined}>
          <h3>2. Shift the traffic</h3>
          <form onSubmit={shift} noValidate aria-label="Shift the traffic">
            <div className="form-grid">
              <Field label="Share of the new key (%)" hint="The old key keeps the rest (at least weight 1) until it is disabled." error={errs.share}>
                <input inputMode="numeric" value={f.share} onChange={set('share')} disabled={!added} />
              </Field>
            </div>
            <div className="form-actions">
              <Submit busy={act.busy} disabled={!added || shifted}>
                Shift weight
              </Submit>
              {shifted && (
                <span className="saved" role="status">
                  Weights set: new {f.share}, old {Math.max(100 - Number(f.share), 1)}.
                </span>
              )}
            </div>
          </form>
        </li>
        <li aria-current={shifted && !retired ? 'step' : undefined}>
          <h3>3. Retire the old key</h3>
          <p className="hint">The proxy stops using {label} at once; it stays listed (disabled) and can be enabled again or deleted later.</p>
          <div className="form-actions">
            <Button kind="primary" busy={act.busy} disabled={!added || retired} onClick={retire}>
              Disable {label}
            </Button>
            {retired && (
              <span className="saved" role="status">
                Rotation done: {label} is disabled.
              </span>
            )}
          </div>
        </li>
      </ol>
      <InlineProblem problem={act.problem} />
    </section>
  );
}

/** nextAlias proposes an alias for the successor of alias that no key of the gateway has. */
export function nextAlias(alias: string, keys: { alias: string }[]): string {
  const base = alias.replace(/-\d+$/, '');
  for (let i = 2; ; i++) {
    const a = `${base}-${i}`.slice(0, 63);
    if (!keys.some((k) => k.alias === a)) return a;
  }
}

function AddKey({
  gatewayId,
  providers,
  keys,
  catalog,
  onAdded,
}: {
  gatewayId: string;
  providers: Provider[];
  keys: ProviderKey[];
  catalog: CatalogModel[];
  onAdded: () => void;
}) {
  const [f, setF] = useState({ provider: providers.find((p) => p.id === 'openai')?.id ?? providers[0].id, alias: '', key: '', baseUrl: '', weight: '1', models: '' });
  const [touched, setTouched] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const act = useAction();
  const prov = providers.find((p) => p.id === f.provider);
  const offered = modelOptions(f.provider, keys, catalog, ['chat', 'completion', 'embedding']).filter((m) => !v.csvList(f.models).includes(m));
  const errs = {
    alias: v.keyAlias(f.alias),
    key: v.providerKey(f.key),
    baseUrl: v.baseURL(f.baseUrl, !!prov?.baseUrlRequired),
    weight: v.intIn(f.weight, 1, 1000, 'The weight'),
  };
  const show = (k: keyof typeof errs) => (touched ? errs[k] : null);
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setAdded(null);
    if (Object.values(errs).some(Boolean)) return;
    const input = {
      provider: f.provider,
      alias: f.alias,
      key: f.key.trim(),
      baseUrl: f.baseUrl.trim() || undefined,
      weight: Number(f.weight),
      models: v.csvList(f.models),
    };
    const k = await act.run<ProviderKey>(M.addProviderKey, { gatewayId, input }, 'addProviderKey');
    if (k) {
      setAdded(`Added ${k.provider}/${k.alias} (…${k.last4}). The key is stored encrypted and will not be shown again.`);
      setF({ ...f, alias: '', key: '', baseUrl: '', models: '' });
      setTouched(false);
      onAdded();
    }
  };
  return (
    <form className="panel" onSubmit={submit} noValidate aria-label="Add a provider key">
      <h2>Add a provider key</h2>
      <div className="form-grid">
        <Field label="Provider">
          <select value={f.provider} onChange={set('provider')}>
            {providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Alias" hint="Names the key in routes and breakers, e.g. main." error={show('alias')}>
          <input value={f.alias} onChange={set('alias')} autoComplete="off" />
        </Field>
        <Field label="API key" hint="Write-only: stored encrypted, never shown again." error={show('key')}>
          <input type="password" value={f.key} onChange={set('key')} autoComplete="new-password" spellCheck={false} />
        </Field>
        <Field
          label="Base URL"
          hint={prov?.baseUrlRequired ? 'Required for this provider.' : `Optional; default ${prov?.defaultBaseUrl || 'the provider’s'}.`}
          error={show('baseUrl')}
        >
          <input type="url" value={f.baseUrl} onChange={set('baseUrl')} placeholder={prov?.defaultBaseUrl || 'https://…'} spellCheck={false} />
        </Field>
        <Field label="Weight" hint="Keys of one provider are balanced by weight (1–1,000)." error={show('weight')}>
          <input inputMode="numeric" value={f.weight} onChange={set('weight')} />
        </Field>
        <Field label="Models" hint="Comma-separated models this key serves (offered in the playground). Empty: any.">
          <input value={f.models} onChange={set('models')} placeholder="gpt-4o, gpt-4o-mini" />
        </Field>
        <Field label="Add a catalog model" hint={`Models of ${prov?.name ?? f.provider} in the catalog; any other can be typed above.`}>
          <select
            value=""
            onChange={(e) => {
              if (e.target.value) setF({ ...f, models: [...v.csvList(f.models), e.target.value].join(', ') });
            }}
          >
            <option value="">Choose a model…</option>
            {offered.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div className="form-actions">
        <Submit busy={act.busy}>Add key</Submit>
      </div>
      {added && <Saved>{added}</Saved>}
      <InlineProblem problem={act.problem} />
    </form>
  );
}
