// The tenant a page works on. An Administrator chooses among all tenants
// (figures may also cover all of them); everyone else is held to their own.

import { useApp } from '../app/context';
import { Q } from '../api/queries';
import type { Connection, Tenant } from '../api/types';
import { useGQL } from './data';

/** useTenantId is the tenant of a page that needs one: the chosen one, else the user's own. */
export function useTenantId(): string {
  const { tenant, session } = useApp();
  return tenant || session.user.tenantId;
}

export function TenantPicker({ allowAll = false }: { allowAll?: boolean }) {
  const { role, tenant, setTenant, session } = useApp();
  const isAdmin = role === 'administrator';
  const q = useGQL<{ tenants: Connection<Tenant> }>(Q.tenants, {}, !isAdmin);
  if (!isAdmin) {
    return (
      <span className="tenant-fixed">
        Tenant <strong>{session.user.tenantId}</strong>
      </span>
    );
  }
  const list = q.data?.tenants?.data ?? [];
  const value = allowAll ? tenant : tenant || session.user.tenantId;
  return (
    <div className="inline-field">
      <label htmlFor="tenant-picker">Tenant</label>
      <select id="tenant-picker" value={value} onChange={(e) => setTenant(e.target.value)}>
        {allowAll && <option value="">All tenants</option>}
        {!list.some((t) => t.id === value) && value && <option value={value}>{value}</option>}
        {list.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name === t.id ? t.id : `${t.name} (${t.id})`}
            {t.status !== 'active' ? ` — ${t.status}` : ''}
          </option>
        ))}
      </select>
    </div>
  );
}

export function RangePicker<T extends string>({ value, onChange, options }: { value: T; onChange: (v: T) => void; options: { id: T; label: string }[] }) {
  return (
    <div className="inline-field">
      <label htmlFor="range-picker">Range</label>
      <select id="range-picker" value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
