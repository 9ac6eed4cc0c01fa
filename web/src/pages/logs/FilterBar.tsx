// The log explorer's filter bar: the common filters in one row, the rest
// behind "More filters". Applying writes them to the URL (setQuery), so a
// filtered view can be bookmarked.

import { useMemo, useState, type FormEvent } from 'react';
import { Q } from '../../api/queries';
import type { Connection, Gateway, Token, User } from '../../api/types';
import { useGQL } from '../../components/data';
import { Field, FromToFields } from '../../components/ui';
import { LOG_KEYS, OPERATIONS, STATUS_CLASSES, type LogFilters } from '../../lib/logs';
import { setQuery } from '../../lib/router';

export type TokenRef = Pick<Token, 'id' | 'name' | 'gatewayId' | 'userId'>;

/** tokensQuery is one query for the tokens of every gateway (aliased g0, g1, …) and of a user (u). */
export function tokensQuery(gatewayIds: string[], userId: string): { query: string; variables: Record<string, string> } {
  const fields = 'data { id name gatewayId userId }';
  const vars: Record<string, string> = {};
  const params: string[] = [];
  const parts: string[] = [];
  gatewayIds.forEach((id, i) => {
    vars['g' + i] = id;
    params.push(`$g${i}: ID!`);
    parts.push(`g${i}: gatewayTokens(gatewayId: $g${i}, limit: 100) { ${fields} }`);
  });
  if (userId) {
    vars.u = userId;
    params.push('$u: ID!');
    parts.push(`u: userTokens(userId: $u, limit: 100) { ${fields} }`);
  }
  if (parts.length === 0) return { query: '', variables: vars };
  return { query: `query LogTokens(${params.join(', ')}) { ${parts.join(' ')} }`, variables: vars };
}

/** tokenOptions merges the tokens of the answer, each once, by name. */
export function tokenOptions(data: Record<string, Connection<TokenRef> | null> | undefined): TokenRef[] {
  const byId = new Map<string, TokenRef>();
  for (const c of Object.values(data ?? {})) for (const t of c?.data ?? []) byId.set(t.id, t);
  return [...byId.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** useLogNames loads the users and tokens a tenant's logs can name (none without a tenant): the pickers' options and the panel's names. */
export function useLogNames(tenantId: string, gateways: Gateway[], userId: string): { users: User[]; tokens: TokenRef[] } {
  const users = useGQL<{ users: Connection<User> }>(Q.users, { tenantId }, !tenantId);
  const tq = useMemo(() => tokensQuery(gateways.map((g) => g.id), userId), [gateways, userId]);
  const tokens = useGQL<Record<string, Connection<TokenRef> | null>>(tq.query || NO_TOKENS, tq.variables, !tq.query || !tenantId);
  return { users: tenantId ? (users.data?.users?.data ?? []) : [], tokens: tq.query && tenantId ? tokenOptions(tokens.data) : [] };
}

/** NO_TOKENS stands in for the tokens query while there is nothing to ask (the query is paused). */
const NO_TOKENS = 'query LogTokens { __typename }';

export function FilterBar({ applied, gateways, users, tokens, scoped }: { applied: LogFilters; gateways: Gateway[]; users: User[]; tokens: TokenRef[]; scoped: boolean }) {
  const [f, setF] = useState<LogFilters>(applied);
  const set = (k: keyof LogFilters) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const more = ['status', 'error_code', 'operation', 'metadata', 'min_cost', 'max_cost', 'from', 'to'] as const;
  const [open, setOpen] = useState(more.some((k) => applied[k]));
  const userList = users;
  const tokenList = tokens.filter((t) => (!f.gateway || !t.gatewayId || t.gatewayId === f.gateway) && (!f.user || t.userId === f.user));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setQuery(Object.fromEntries(LOG_KEYS.map((k) => [k, f[k]])));
  };
  return (
    <form className="panel filters log-filters" onSubmit={submit} aria-label="Filter logs">
      <div className="filter-bar">
        <Field label="Status class">
          <select value={f.status_class} onChange={set('status_class')}>
            <option value="">Any status</option>
            {STATUS_CLASSES.map(([c, label]) => (
              <option key={c} value={c}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Model">
          <input value={f.model} onChange={set('model')} placeholder="openai/gpt-4o-mini" />
        </Field>
        <Field label="Gateway">
          <select value={f.gateway} onChange={set('gateway')}>
            <option value="">Any</option>
            {!gateways.some((g) => g.id === f.gateway) && f.gateway && <option value={f.gateway}>{f.gateway}</option>}
            {gateways.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name || g.slug}
              </option>
            ))}
          </select>
        </Field>
        <Field label="User">
          <select value={f.user} onChange={set('user')} disabled={!scoped} title={scoped ? undefined : 'Pick a tenant to filter by user'}>
            <option value="">Any</option>
            {!userList.some((u) => u.id === f.user) && f.user && <option value={f.user}>{f.user}</option>}
            {userList.map((u) => (
              <option key={u.id} value={u.id}>
                {u.name ? `${u.name} (${u.email})` : u.email}
              </option>
            ))}
          </select>
        </Field>
        <Field label="API token">
          <select value={f.token} onChange={set('token')} disabled={!scoped} title={scoped ? undefined : 'Pick a tenant to filter by token'}>
            <option value="">Any</option>
            {!tokenList.some((t) => t.id === f.token) && f.token && <option value={f.token}>{f.token}</option>}
            {tokenList.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Latency from">
          <input inputMode="numeric" value={f.min_latency} onChange={set('min_latency')} placeholder="ms" />
        </Field>
        <Field label="Latency to">
          <input inputMode="numeric" value={f.max_latency} onChange={set('max_latency')} placeholder="ms" />
        </Field>
        <Field label="Search">
          <input type="search" value={f.search} onChange={set('search')} placeholder="metadata, request id" title="A metadata value or a request id, or a part of one" />
        </Field>
      </div>
      {open && (
        <div className="filter-bar" data-testid="more-filters">
          <Field label="Status">
            <input inputMode="numeric" value={f.status} onChange={set('status')} placeholder="429" />
          </Field>
          <Field label="Error code">
            <input value={f.error_code} onChange={set('error_code')} placeholder="upstream_error" />
          </Field>
          <Field label="Operation">
            <select value={f.operation} onChange={set('operation')}>
              <option value="">Any</option>
              {OPERATIONS.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Cost from">
            <input inputMode="decimal" value={f.min_cost} onChange={set('min_cost')} placeholder="USD" />
          </Field>
          <Field label="Cost to">
            <input inputMode="decimal" value={f.max_cost} onChange={set('max_cost')} placeholder="USD" />
          </Field>
          <Field label="Metadata" hint="key=value, one per line; all must match.">
            <textarea rows={1} value={f.metadata} onChange={set('metadata')} placeholder="team=search" />
          </Field>
          <FromToFields from={f.from} to={f.to} set={set} />
        </div>
      )}
      <div className="form-actions">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button type="button" onClick={() => setQuery({ sort: applied.sort, order: applied.order })}>
          Clear
        </button>
        <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Fewer filters' : 'More filters'}
        </button>
      </div>
    </form>
  );
}
