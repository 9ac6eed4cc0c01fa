// The dashboard's credential: a session token from POST /admin/v1/session
// or a pasted user token, kept in sessionStorage — it lives as long as the
// browser tab and is never written to localStorage or a cookie.

import { isRole, type Role } from '../lib/policy';
import { APIError, restJSON } from './http';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
}

export interface Session {
  token: string;
  /** session: from a sign-in (signed out with DELETE /admin/v1/session); token: a pasted API token; demo: the bundled demo, no credential. */
  kind: 'session' | 'token' | 'demo';
  expiresAt?: string;
  user: SessionUser;
}

const KEY = 'sluice.session';

export function loadSession(storage: Storage = sessionStorage): Session | null {
  try {
    const s = JSON.parse(storage.getItem(KEY) ?? 'null');
    if (!s || typeof s !== 'object' || !isRole(s.user?.role)) return null;
    if (s.kind !== 'demo' && typeof s.token !== 'string') return null;
    if (s.expiresAt && new Date(s.expiresAt).getTime() <= Date.now()) {
      storage.removeItem(KEY);
      return null;
    }
    return s as Session;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null, storage: Storage = sessionStorage): void {
  if (s) storage.setItem(KEY, JSON.stringify(s));
  else storage.removeItem(KEY);
}

/** signInWithPassword signs in with POST /admin/v1/session. */
export async function signInWithPassword(email: string, password: string): Promise<Session> {
  let res: any;
  try {
    res = await restJSON<any>('POST', '/admin/v1/session', { body: { email: email.trim(), password } });
  } catch (e) {
    if (e instanceof APIError && e.status === 401) throw new Error('The email or password is incorrect.');
    if (e instanceof APIError && e.status === 429) throw new Error('Too many sign-in attempts. Wait a minute and try again.');
    throw e;
  }
  const u = res?.user;
  if (!res?.token || !u || !isRole(u.role)) throw new Error('The server answered the sign-in in an unexpected shape.');
  return {
    token: res.token,
    kind: 'session',
    expiresAt: res.expires_at,
    user: { id: u.id, email: u.email, name: u.name ?? '', role: u.role, tenantId: u.tenant_id },
  };
}

/** TokenRoleError: the pasted token works but its role has no My Account (Finance, Viewer, Demo User), so its role cannot be read. */
export class TokenRoleError extends Error {
  constructor() {
    super(
      'This credential belongs to a role without My Account (Finance, Viewer or Demo User), so the dashboard cannot tell its role. Sign in with your email and password instead.',
    );
    this.name = 'TokenRoleError';
  }
}

/** signInWithToken validates a pasted token with { me { id role } } and reads its user. */
export async function signInWithToken(token: string): Promise<Session> {
  const t = token.trim();
  if (!t) throw new Error('Paste a token.');
  let res: Response;
  try {
    res = await fetch('/admin/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${t}` },
      body: JSON.stringify({ operationName: 'Me', query: 'query Me { me { id email name role tenantId } }' }),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new APIError(0, 'network', 'Sluice could not be reached. Check that the server is running.');
  }
  const body: any = await res.json().catch(() => null);
  if (res.status === 401) {
    const code = body?.error?.code;
    if (code === 'token_expired') throw new Error('This token has expired.');
    throw new Error(body?.error?.message ? `The token was refused: ${body.error.message}.` : 'The token was refused.');
  }
  if (!res.ok) throw new Error(body?.error?.message ?? `The server answered ${res.status}.`);
  const err = body?.errors?.[0];
  if (err?.extensions?.code === 'FORBIDDEN') throw new TokenRoleError();
  if (err) throw new Error(err.message);
  const me = body?.data?.me;
  if (!me || !isRole(me.role)) throw new Error('The server did not say who this token belongs to.');
  return { token: t, kind: 'token', user: { id: me.id, email: me.email, name: me.name, role: me.role, tenantId: me.tenantId } };
}

/** signOut ends a sign-in session on the server (an API token is only forgotten: it stays valid). */
export async function signOut(s: Session | null): Promise<void> {
  if (s?.kind === 'session') {
    await restJSON('DELETE', '/admin/v1/session', { token: s.token }).catch(() => {});
  }
}

/** demoSession is the bundled read-only demo: no credential, no server calls. */
export function demoSession(): Session {
  return {
    token: '',
    kind: 'demo',
    user: { id: 'usr_demo', email: 'demo@sluice.example', name: 'Demo visitor', role: 'demo_user', tenantId: 'acme' },
  };
}
