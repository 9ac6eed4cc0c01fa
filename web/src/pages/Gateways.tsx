// Gateways of a tenant: the list, and a form to create one.

import { useState, type FormEvent } from 'react';
import { useApp } from '../app/context';
import { M, Q } from '../api/queries';
import type { Connection, Gateway } from '../api/types';
import { QueryView, useAction, useGQL } from '../components/data';
import { TenantPicker, useTenantId } from '../components/TenantPicker';
import { BudgetBar, Empty, Field, InlineProblem, PageHeader, Pager, Submit, usePager } from '../components/ui';
import { formatTime } from '../lib/format';
import { allowed } from '../lib/policy';
import { Link, navigate } from '../lib/router';
import * as v from '../lib/validate';

export function Gateways() {
  const { role } = useApp();
  const tenantId = useTenantId();
  const pager = usePager();
  const q = useGQL<{ gateways: Connection<Gateway> }>(Q.gateways, { tenantId, cursor: pager.cursor });
  return (
    <>
      <PageHeader title="Gateways" subtitle="Each gateway has its own providers, routes, rules, tokens and budget.">
        <TenantPicker />
      </PageHeader>
      <QueryView<Connection<Gateway>> q={q} field="gateways" what="gateways">
        {(c) =>
          c.data.length === 0 ? (
            <Empty>This tenant has no gateway yet. Create the first one below.</Empty>
          ) : (
            <>
              <table className="table">
                <caption className="sr-only">Gateways of {tenantId}</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Slug</th>
                    <th scope="col">Routes</th>
                    <th scope="col">Budget</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((g) => (
                    <tr key={g.id}>
                      <td>
                        <Link to={`/ui/gateways/${g.id}`}>{g.name}</Link>
                      </td>
                      <td>
                        <code>{g.slug}</code>
                      </td>
                      <td>{g.routes.length ? g.routes.map((r) => r.name).join(', ') : '—'}</td>
                      <td className="budget-cell">{g.budget ? <BudgetBar budget={g.budget} /> : 'none'}</td>
                      <td>{formatTime(g.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager pager={pager} nextCursor={c.nextCursor} />
            </>
          )
        }
      </QueryView>
      {allowed(role, 'gateway.create') && !q.problemFor('gateways') && <CreateGateway tenantId={tenantId} />}
    </>
  );
}

function CreateGateway({ tenantId }: { tenantId: string }) {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const slugErr = touched ? v.slug(slug, 'The slug') : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (v.slug(slug, 'The slug')) return;
    const g = await act.run<{ id: string }>(M.createGateway, { tenantId, input: { slug, name: name.trim() || undefined } }, 'createGateway');
    if (g) navigate(`/ui/gateways/${g.id}`);
  };
  return (
    <section className="panel">
      <h2>New gateway</h2>
      <form onSubmit={submit} noValidate className="form-grid" aria-label="New gateway">
        <Field label="Slug" hint={`Used in inference paths: /v1/${tenantId}/${slug || '{slug}'}/…`} error={slugErr}>
          <input value={slug} onChange={(e) => setSlug(e.target.value.toLowerCase())} required autoComplete="off" />
        </Field>
        <Field label="Name" hint="Optional; defaults to the slug.">
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
        </Field>
        <div className="form-actions">
          <Submit busy={act.busy}>Create gateway</Submit>
        </div>
        <InlineProblem problem={act.problem} />
      </form>
    </section>
  );
}
