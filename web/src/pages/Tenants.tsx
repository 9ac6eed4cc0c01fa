// Tenants: list, create, settings (with the budget alert webhook), the
// tenant's budget and its alerts, suspend, delete, and purge after typing
// the tenant's id. A Tenant Administrator sees and edits its own tenant only.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, Provider, Tenant } from '../api/types';
import { TenantAlerts } from '../components/Alerts';
import { BudgetForm } from '../components/BudgetForm';
import { QueryView, useAction, useGQL } from '../components/data';
import { ActionsHeader, Badge, Button, Check, ConfirmButton, Empty, Field, InlineProblem, PageHeader, Saved, Submit } from '../components/ui';
import { formatTime } from '../lib/format';
import { allowed } from '../lib/policy';
import * as v from '../lib/validate';

export function Tenants() {
  const { role } = useApp();
  const q = useGQL<{ tenants: Connection<Tenant> }>(Q.tenants, {});
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="Tenants" subtitle={role === 'administrator' ? 'Every tenant of this Sluice.' : 'Your tenant.'} />
      <QueryView<Connection<Tenant>> q={q} field="tenants" what="tenants">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>No tenants.</Empty>
          ) : (
            <div className="table-scroll">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Id</th>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col">Log retention</th>
                    <th scope="col">Allowed providers</th>
                    <th scope="col">Created</th>
                    <ActionsHeader />
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((t) => [
                    <tr key={t.id} data-tenant={t.id}>
                      <td>
                        <code>{t.id}</code>
                      </td>
                      <td>{t.name}</td>
                      <td>
                        <Badge tone={t.status === 'active' ? 'good' : 'warn'}>{t.status}</Badge>
                      </td>
                      <td>{t.settings.logRetentionDays} days</td>
                      <td className="wrap">{t.settings.allowedProviders.length ? t.settings.allowedProviders.join(', ') : 'all'}</td>
                      <td>{formatTime(t.createdAt)}</td>
                      <td>
                        <button type="button" className="small" aria-expanded={open === t.id} onClick={() => setOpen(open === t.id ? null : t.id)}>
                          {open === t.id ? 'Close' : 'Manage'}
                        </button>
                      </td>
                    </tr>,
                    open === t.id && (
                      <tr key={t.id + '-edit'}>
                        <td colSpan={7}>
                          <ManageTenant
                            tenant={t}
                            onChanged={q.refetch}
                            onGone={() => {
                              setOpen(null);
                              q.refetch();
                            }}
                          />
                        </td>
                      </tr>
                    ),
                  ])}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
      {allowed(role, 'tenant.create') && <CreateTenant onCreated={q.refetch} />}
    </>
  );
}

function CreateTenant({ onCreated }: { onCreated: () => void }) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const err = v.slug(id, 'The tenant id');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setDone(null);
    if (err) return;
    const t = await act.run<Tenant>(M.createTenant, { input: { id, name: name.trim() || undefined } }, 'createTenant');
    if (t) {
      setDone(`Tenant ${t.id} created.`);
      setId('');
      setName('');
      setTouched(false);
      onCreated();
    }
  };
  return (
    <section className="panel">
      <h2>New tenant</h2>
      <form onSubmit={submit} noValidate aria-label="New tenant">
        <div className="form-grid">
          <Field label="Tenant id" hint="Immutable; it is the {tenant} of inference paths." error={touched ? err : null}>
            <input value={id} onChange={(e) => setId(e.target.value.toLowerCase())} autoComplete="off" />
          </Field>
          <Field label="Tenant name" hint="Optional; defaults to the id.">
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
          </Field>
        </div>
        <div className="form-actions">
          <Submit busy={act.busy}>Create tenant</Submit>
        </div>
        {done && <Saved>{done}</Saved>}
        <InlineProblem problem={act.problem} />
      </form>
    </section>
  );
}

function ManageTenant({ tenant: t, onChanged, onGone }: { tenant: Tenant; onChanged: () => void; onGone: () => void }) {
  const { role, session } = useApp();
  const providers = useGQL<{ providers: Connection<Provider> }>(Q.providers);
  const [f, setF] = useState({
    name: t.name,
    retention: String(t.settings.logRetentionDays),
    bodies: t.settings.logBodiesDefault,
    allowed: t.settings.allowedProviders,
    hookURL: t.settings.alertWebhookUrl ?? '',
    hookSecret: '',
    dropSecret: false,
  });
  const [msg, setMsg] = useState<string | null>(null);
  const [purgeText, setPurgeText] = useState('');
  const act = useAction();
  const retErr = v.intIn(f.retention, 1, 3650, 'Log retention');
  const secretSet = !!t.settings.alertWebhookSecretSet && !f.dropSecret;
  const hookErr = v.webhookURL(f.hookURL);
  const secretErr = v.webhookSecret(f.hookSecret, f.hookURL, secretSet);
  const isAdmin = role === 'administrator';
  const own = session.user.tenantId === t.id;

  const patch = async (input: Record<string, unknown>, done: string) => {
    setMsg(null);
    const ok = !!(await act.run(M.updateTenant, { id: t.id, input }, 'updateTenant'));
    if (ok) {
      setMsg(done);
      onChanged();
    }
    return ok;
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (retErr || hookErr || secretErr || !f.name.trim()) return;
    // Settings are replaced whole. The signing secret is write-only: absent
    // keeps the one set, empty removes it, a value replaces it.
    const settings: Record<string, unknown> = {
      logRetentionDays: Number(f.retention),
      logBodiesDefault: f.bodies,
      allowedProviders: f.allowed,
      alertWebhookUrl: f.hookURL.trim(),
    };
    if (f.hookSecret) settings.alertWebhookSecret = f.hookSecret;
    else if (f.dropSecret) settings.alertWebhookSecret = '';
    patch({ name: f.name.trim(), settings }, 'Settings saved.').then((ok) => ok && setF((x) => ({ ...x, hookSecret: '', dropSecret: false })));
  };
  return (
    <div className="manage">
      <form onSubmit={save} noValidate aria-label={`Settings of ${t.id}`}>
        <div className="form-grid">
          <Field label="Tenant name" error={f.name.trim() ? null : 'The name is required.'}>
            <input value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} maxLength={200} />
          </Field>
          <Field label="Log retention (days)" hint="1–3,650; older logs are deleted." error={retErr}>
            <input inputMode="numeric" value={f.retention} onChange={(e) => setF({ ...f, retention: e.target.value })} />
          </Field>
        </div>
        <Check label="New gateways store request and response bodies" checked={f.bodies} onChange={(b) => setF({ ...f, bodies: b })} />
        <fieldset>
          <legend>Allowed providers (none checked: all)</legend>
          <div className="checks">
            {(providers.data?.providers?.data ?? []).map((p) => (
              <Check
                key={p.id}
                label={p.name}
                checked={f.allowed.includes(p.id)}
                onChange={(b) => setF({ ...f, allowed: b ? [...f.allowed, p.id] : f.allowed.filter((x) => x !== p.id) })}
              />
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Budget alerts</legend>
          <p className="hint">
            Sluice POSTs a signed alert (HMAC-SHA256 in <code>x-sluice-signature</code>) when any budget of this tenant reaches 50 %, 80 % and 100 % of its amount, once per
            threshold and period.
          </p>
          <div className="form-grid">
            <Field label="Alert webhook URL" hint="Empty: no alerts are sent." error={hookErr}>
              <input type="url" value={f.hookURL} onChange={(e) => setF({ ...f, hookURL: e.target.value })} autoComplete="off" spellCheck={false} />
            </Field>
            <Field
              label="Webhook signing secret"
              hint={secretSet ? 'A secret is set (never shown). Type a new one to replace it; leave empty to keep it.' : 'Write-only: 16 to 512 bytes, never shown again.'}
              error={secretErr}
            >
              <input type="password" value={f.hookSecret} onChange={(e) => setF({ ...f, hookSecret: e.target.value })} autoComplete="new-password" spellCheck={false} />
            </Field>
          </div>
          {t.settings.alertWebhookSecretSet && (
            <Check label="Remove the signing secret" checked={f.dropSecret} onChange={(b) => setF({ ...f, dropSecret: b })} />
          )}
        </fieldset>
        <div className="form-actions">
          <Submit busy={act.busy} disabled={!!retErr || !!hookErr || !!secretErr}>
            Save settings
          </Submit>
        </div>
      </form>
      <section aria-labelledby={`budget-${t.id}`}>
        <h3 id={`budget-${t.id}`}>Tenant budget</h3>
        <p className="hint">Caps every gateway of the tenant together; gateway, user and token budgets still apply inside it.</p>
        <BudgetForm
          key={JSON.stringify(t.budget ?? null)}
          label={`Budget of tenant ${t.id}`}
          budget={t.budget ?? null}
          set={(budget, a) => a.run(M.setTenantBudget, { id: t.id, budget }, 'updateTenant')}
          remove={(a) => a.run(M.setTenantBudget, { id: t.id, budget: null }, 'updateTenant')}
          onChanged={onChanged}
        />
      </section>
      <section aria-labelledby={`alerts-${t.id}`}>
        <h3 id={`alerts-${t.id}`}>Budget alerts sent</h3>
        <TenantAlerts tenantId={t.id} />
      </section>
      {isAdmin && !own && (
        <div className="danger-zone">
          <h3>Status</h3>
          <div className="row-actions">
            {t.status === 'active' ? (
              <ConfirmButton label="Suspend" confirm={`Suspend ${t.id}`} onConfirm={() => patch({ status: 'suspended' }, 'Tenant suspended: its users cannot sign in and its tokens stop working.')} />
            ) : t.status === 'suspended' ? (
              <Button onClick={() => patch({ status: 'active' }, 'Tenant active again.')}>Reactivate</Button>
            ) : null}
            {t.status !== 'deleted' && (
              <ConfirmButton
                label="Delete"
                confirm={`Mark ${t.id} deleted`}
                onConfirm={async () => {
                  if (await act.run(M.deleteTenant, { id: t.id, purge: false }, 'deleteTenant')) onGone();
                }}
              />
            )}
          </div>
          {allowed(role, 'tenant.purge') && (
            <form
              aria-label={`Purge ${t.id}`}
              onSubmit={async (e: FormEvent) => {
                e.preventDefault();
                if (purgeText !== t.id) return;
                if (await act.run(M.deleteTenant, { id: t.id, purge: true }, 'deleteTenant')) onGone();
              }}
            >
              <h3>Purge</h3>
              <p>
                Removes the tenant with all its gateways, keys, rules, tokens, users and analytics rows. This cannot be undone. Type <code>{t.id}</code> to confirm.
              </p>
              <div className="inline-form">
                <Field label="Tenant id to purge">
                  <input value={purgeText} onChange={(e) => setPurgeText(e.target.value)} autoComplete="off" spellCheck={false} />
                </Field>
                <Button type="submit" kind="danger" disabled={purgeText !== t.id} busy={act.busy}>
                  Purge {t.id}
                </Button>
              </div>
            </form>
          )}
        </div>
      )}
      {msg && <Saved>{msg}</Saved>}
      <InlineProblem problem={act.problem} />
    </div>
  );
}
