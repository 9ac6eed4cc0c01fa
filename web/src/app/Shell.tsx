// The signed-in layout: top bar, navigation computed from the role, and the
// page of the current path. A path the role may not use shows the "no
// access" panel rather than a blank page.

import type { ErrorInfo, ReactNode } from 'react';
import { ErrorBoundary } from '../components/ErrorBoundary';
import { NoAccess } from '../components/ui';
import { canSee, homeFor, navFor, pageFor, ROLE_LABELS, type PageId } from '../lib/policy';
import { Link, match, navigate, useLocation } from '../lib/router';
import { useApp } from './context';
import { Overview } from '../pages/Overview';
import { Gateways } from '../pages/Gateways';
import { GatewayDetail } from '../pages/GatewayDetail';
import { Users } from '../pages/Users';
import { UserDetail } from '../pages/UserDetail';
import { Tenants } from '../pages/Tenants';
import { Logs } from '../pages/Logs';
import { LogDetail } from '../pages/LogDetail';
import { Spend } from '../pages/Spend';
import { Analytics } from '../pages/Analytics';
import { Prices } from '../pages/Prices';
import { Playground } from '../pages/Playground';
import { Audit } from '../pages/Audit';
import { ClientErrors } from '../pages/ClientErrors';
import { Account } from '../pages/Account';
import { useEffect } from 'react';

const WHAT: Record<PageId, string> = {
  overview: 'the usage overview',
  gateways: 'gateways',
  users: 'users',
  tenants: 'tenants',
  logs: 'request logs and traces',
  spend: 'cost breakdowns',
  analytics: 'analytics',
  prices: 'model prices',
  playground: 'the playground',
  audit: 'the audit log',
  'client-errors': 'client errors',
  account: 'My Account',
};

function route(path: string): ReactNode {
  let m: Record<string, string> | null;
  if ((m = match('/ui/gateways/:id/:tab?', path))) return <GatewayDetail id={m.id} tab={m.tab ?? 'activity'} />;
  if ((m = match('/ui/users/:id', path))) return <UserDetail id={m.id} />;
  if ((m = match('/ui/logs/:id', path))) return <LogDetail id={m.id} />;
  switch (path) {
    case '/ui/overview':
      return <Overview />;
    case '/ui/gateways':
      return <Gateways />;
    case '/ui/users':
      return <Users />;
    case '/ui/tenants':
      return <Tenants />;
    case '/ui/logs':
      return <Logs />;
    case '/ui/spend':
      return <Spend />;
    case '/ui/analytics':
      return <Analytics />;
    case '/ui/prices':
      return <Prices />;
    case '/ui/playground':
      return <Playground />;
    case '/ui/audit':
      return <Audit />;
    case '/ui/client-errors':
      return <ClientErrors />;
    case '/ui/account':
      return <Account />;
  }
  return (
    <section className="panel notice" role="alert">
      <h2>Page not found</h2>
      <p>
        There is no page at {path}. <Link to="/ui/">Go to the start page</Link>.
      </p>
    </section>
  );
}

export function Shell({ onRenderError }: { onRenderError: (e: unknown, info: ErrorInfo) => void }) {
  const { session, role, readOnly, signOut } = useApp();
  const { path } = useLocation();
  const nav = navFor(role);
  const home = homeFor(role);

  useEffect(() => {
    if ((path === '/' || path === '/ui' || path === '/ui/') && home) navigate(home, { replace: true });
  }, [path, home]);

  const page = pageFor(path);
  let body: ReactNode;
  if (!home) {
    body = <NoAccess what="any page of the dashboard" />;
  } else if (page && !canSee(role, page)) {
    body = <NoAccess what={WHAT[page]} />;
  } else {
    body = route(path);
  }

  return (
    <div className="app">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/ui/" className="brand" aria-label="Sluice home">
          <span className="logo" aria-hidden="true" /> Sluice
        </Link>
        {readOnly && <span className="demo-banner">Read-only demo on sample data</span>}
        <div className="whoami">
          <span className="user" data-testid="whoami">
            {session.user.email}
          </span>
          <span className="badge neutral" data-testid="role">
            {ROLE_LABELS[role]}
          </span>
          <button type="button" className="small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {nav.map((n) => (
            <li key={n.id}>
              <Link to={n.path} aria-current={page === n.id ? 'page' : undefined} data-nav={n.id}>
                {n.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <ErrorBoundary onError={onRenderError} resetKey={path}>
          {body}
        </ErrorBoundary>
      </main>
    </div>
  );
}
