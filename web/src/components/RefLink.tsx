// RefLink shows an object a record refers to by name, as a link where the
// role may open it (lib/refs.ts decides).

import type { ObjectRef } from '../api/types';
import { useApp } from '../app/context';
import { refView } from '../lib/refs';
import { Link } from '../lib/router';

export function RefLink({ r, fallback = '—' }: { r: ObjectRef | null | undefined; fallback?: string }) {
  const { role } = useApp();
  const v = refView(r, role, fallback);
  const body = v.isId ? <code>{v.text}</code> : v.text;
  if (v.href) return <Link to={v.href}>{body}</Link>;
  return v.title ? <span title={v.title}>{body}</span> : <>{body}</>;
}
