// The root: signed out it shows sign-in; signed in it builds the GraphQL
// client of the session and the app shell. A 401 from the server ends the
// session and comes back here.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Provider } from 'urql';
import { makeClient } from '../api/client';
import { restJSON } from '../api/http';
import { loadSession, saveSession, signOut as endSession, type Session } from '../api/session';
import { ClientErrorReporter } from '../lib/clientErrors';
import { reportsClientErrors } from '../lib/policy';
import { navigate } from '../lib/router';
import { Shell } from './Shell';
import { SignIn } from '../pages/SignIn';
import { AppContext, type AppState } from './context';

const TENANT_KEY = 'sluice.tenant';

export function Root() {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [notice, setNotice] = useState<string | null>(null);
  const [tenant, setTenantState] = useState<string>(() => sessionStorage.getItem(TENANT_KEY) ?? '');
  const current = useRef(session);
  current.current = session;

  // One reporter per page load: it dedupes across sessions of the tab.
  const reporter = useMemo(
    () =>
      new ClientErrorReporter({
        release: __APP_VERSION__,
        enabled: () => {
          const s = current.current;
          return !!s && s.kind !== 'demo' && reportsClientErrors(s.user.role);
        },
        send: (r) => restJSON('POST', '/admin/v1/client-errors', { token: current.current?.token, body: r }),
      }),
    [],
  );
  useEffect(() => reporter.install(window), [reporter]);

  const onUnauthorized = useCallback(() => {
    if (!current.current) return;
    saveSession(null);
    setSession(null);
    setNotice('Your session has ended or its token was revoked. Sign in again.');
  }, []);

  const signedIn = (s: Session) => {
    saveSession(s);
    setNotice(null);
    setTenantState(s.user.role === 'administrator' ? '' : s.user.tenantId);
    sessionStorage.removeItem(TENANT_KEY);
    setSession(s);
    if (!location.pathname.startsWith('/ui/') || location.pathname === '/ui/') navigate('/ui/', { replace: true });
  };

  const signOut = useCallback(async () => {
    const s = current.current;
    saveSession(null);
    sessionStorage.removeItem(TENANT_KEY);
    setSession(null);
    setNotice('You have signed out.');
    navigate('/ui/', { replace: true });
    await endSession(s);
  }, []);

  const client = useMemo(() => (session ? makeClient(session, onUnauthorized) : null), [session, onUnauthorized]);

  if (!session || !client) return <SignIn notice={notice} onSignedIn={signedIn} />;

  const role = session.user.role;
  const state: AppState = {
    session,
    role,
    readOnly: session.kind === 'demo' || role === 'demo_user',
    tenant: role === 'administrator' ? tenant : session.user.tenantId,
    setTenant: (id) => {
      sessionStorage.setItem(TENANT_KEY, id);
      setTenantState(id);
    },
    signOut,
  };
  return (
    <AppContext.Provider value={state}>
      <Provider value={client}>
        <Shell onRenderError={(e, info) => reporter.report(e, { source: 'react', componentStack: info.componentStack?.slice(0, 2000) })} />
      </Provider>
    </AppContext.Provider>
  );
}
