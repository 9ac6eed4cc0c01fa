// A gateway's provider keys. The key itself is write-only: after adding
// it, only its last four characters are ever shown.

import { useState, type FormEvent } from 'react';
import { M, Q } from '../../api/queries';
import type { Connection, Gateway, Provider, ProviderKey } from '../../api/types';
import { QueryView, useAction, useGQL } from '../../components/data';
import { ConfirmButton, Empty, Field, InlineProblem, Submit } from '../../components/ui';
import { formatTime } from '../../lib/format';
import * as v from '../../lib/validate';

export function Keys({ gateway: g }: { gateway: Gateway }) {
  const q = useGQL<{ providerKeys: Connection<ProviderKey>; providers: Connection<Provider> }>(Q.gatewayKeys, { id: g.id });
  const del = useAction();
  const providers = q.data?.providers?.data ?? [];
  return (
    <>
      <section className="panel">
        <h2>Provider keys</h2>
        <QueryView<Connection<ProviderKey>> q={q} field="providerKeys" what="the provider keys">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No provider key yet: requests have nowhere to go. Add one below.</Empty>
            ) : (
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Alias</th>
                    <th scope="col">Key</th>
                    <th scope="col">Base URL</th>
                    <th scope="col">Weight</th>
                    <th scope="col">Models</th>
                    <th scope="col">Added</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((k) => (
                    <tr key={k.id}>
                      <td>{providers.find((p) => p.id === k.provider)?.name ?? k.provider}</td>
                      <td>
                        <code>{k.alias}</code>
                      </td>
                      <td>
                        <code>…{k.last4}</code>
                      </td>
                      <td className="wrap">{k.baseUrl || 'provider default'}</td>
                      <td>{k.weight}</td>
                      <td className="wrap">{k.models.length ? k.models.join(', ') : 'any'}</td>
                      <td>{formatTime(k.createdAt)}</td>
                      <td>
                        <ConfirmButton
                          label="Delete"
                          confirm={`Delete ${k.provider}/${k.alias}`}
                          onConfirm={async () => {
                            if (await del.run(M.deleteProviderKey, { gatewayId: g.id, provider: k.provider, alias: k.alias }, 'deleteProviderKey')) q.refetch();
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </QueryView>
        <InlineProblem problem={del.problem} />
      </section>
      {providers.length > 0 && <AddKey gatewayId={g.id} providers={providers} onAdded={q.refetch} />}
    </>
  );
}

function AddKey({ gatewayId, providers, onAdded }: { gatewayId: string; providers: Provider[]; onAdded: () => void }) {
  const [f, setF] = useState({ provider: providers.find((p) => p.id === 'openai')?.id ?? providers[0].id, alias: '', key: '', baseUrl: '', weight: '1', models: '' });
  const [touched, setTouched] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const act = useAction();
  const prov = providers.find((p) => p.id === f.provider);
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
      </div>
      <div className="form-actions">
        <Submit busy={act.busy}>Add key</Submit>
      </div>
      {added && (
        <p className="saved" role="status">
          {added}
        </p>
      )}
      <InlineProblem problem={act.problem} />
    </form>
  );
}
