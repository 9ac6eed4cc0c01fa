// The roles, permissions and operation policy of the admin API, mirrored
// from internal/auth/roles.go and internal/auth/policy.go (CONTRACT §5). The server decides;
// this copy only decides what the dashboard offers, so that nobody is shown
// a page whose every call would answer FORBIDDEN. policy.test.ts pins the
// navigation of every role.

export type Role =
  | 'administrator'
  | 'tenant_administrator'
  | 'ai_manager'
  | 'finance'
  | 'member'
  | 'viewer'
  | 'demo_user';

/** Every role, highest first (auth.Roles). */
export const ROLES: Role[] = [
  'administrator',
  'tenant_administrator',
  'ai_manager',
  'finance',
  'member',
  'viewer',
  'demo_user',
];

export const ROLE_LABELS: Record<Role, string> = {
  administrator: 'Administrator',
  tenant_administrator: 'Tenant Administrator',
  ai_manager: 'AI Manager',
  finance: 'Finance',
  member: 'Member',
  viewer: 'Viewer',
  demo_user: 'Demo User',
};

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as string[]).includes(v);
}

export type Permission =
  | 'Create tenants'
  | 'Manage tenant settings'
  | 'Purge tenants'
  | 'Manage gateways and routing'
  | 'Manage gateway API tokens'
  | 'Manage tenant users'
  | 'View analytics dashboards'
  | 'View cost breakdowns'
  | 'View request logs and traces'
  | 'View model prices'
  | 'Manage model prices and deprecations'
  | 'View the platform audit log'
  | 'Triage feedback, reports, and client errors';

const GRANTS: Partial<Record<Role, Permission[]>> = {
  administrator: [
    'Create tenants',
    'Manage tenant settings',
    'Purge tenants',
    'Manage gateways and routing',
    'Manage gateway API tokens',
    'Manage tenant users',
    'View analytics dashboards',
    'View cost breakdowns',
    'View request logs and traces',
    'View model prices',
    'Manage model prices and deprecations',
    'View the platform audit log',
    'Triage feedback, reports, and client errors',
  ],
  tenant_administrator: [
    'Manage tenant settings',
    'Manage gateways and routing',
    'Manage gateway API tokens',
    'Manage tenant users',
    'View analytics dashboards',
    'View cost breakdowns',
    'View request logs and traces',
    'View model prices',
  ],
  ai_manager: ['View analytics dashboards'],
  finance: ['View cost breakdowns', 'View model prices'],
};

export function hasPermission(role: Role, p: Permission): boolean {
  return GRANTS[role]?.includes(p) ?? false;
}

const adminTA: Role[] = ['administrator', 'tenant_administrator'];
const allButDemo: Role[] = ['administrator', 'tenant_administrator', 'ai_manager', 'finance', 'member', 'viewer'];
const playground: Role[] = ['administrator', 'tenant_administrator', 'member'];
const accountable: Role[] = ['administrator', 'tenant_administrator', 'ai_manager', 'member'];
const reporters: Role[] = ['administrator', 'tenant_administrator', 'finance', 'member', 'viewer'];

interface Rule {
  perm?: Permission;
  roles?: Role[];
}

/** The operations the dashboard uses, as in internal/auth/policy.go. */
const POLICY = {
  'tenant.list': { roles: adminTA },
  'tenant.read': { roles: adminTA },
  'tenant.create': { perm: 'Create tenants' },
  'tenant.update': { perm: 'Manage tenant settings' },
  'tenant.delete': { perm: 'Manage tenant settings', roles: ['administrator'] },
  'tenant.purge': { perm: 'Purge tenants' },
  'gateway.list': { perm: 'Manage gateways and routing' },
  'gateway.create': { perm: 'Manage gateways and routing' },
  'gateway.update': { perm: 'Manage gateways and routing' },
  'gateway.delete': { perm: 'Manage gateways and routing' },
  'key.create': { perm: 'Manage gateways and routing' },
  'rule.create': { perm: 'Manage gateways and routing' },
  'gateway_token.list': { perm: 'Manage gateway API tokens' },
  'gateway_token.create': { perm: 'Manage gateway API tokens' },
  'user.list': { perm: 'Manage tenant users' },
  'user.create': { perm: 'Manage tenant users' },
  'user.update': { perm: 'Manage tenant users' },
  'stats.read': { roles: allButDemo },
  'stats.timeseries': { roles: allButDemo },
  'stats.analytics': { perm: 'View analytics dashboards' },
  'gateway.spend': { perm: 'View cost breakdowns' },
  'tenant.spend': { perm: 'View cost breakdowns' },
  'tenant.analytics': { perm: 'Manage tenant settings' },
  'log.list': { perm: 'View request logs and traces' },
  'log.read': { perm: 'View request logs and traces' },
  'trace.read': { perm: 'View request logs and traces' },
  'playground.token': { roles: playground },
  'playground.search': { roles: playground },
  'model_price.list': { perm: 'View model prices' },
  'model_price.put': { perm: 'Manage model prices and deprecations' },
  'provider.list': { roles: allButDemo },
  'guardrail.stats': { roles: adminTA },
  'circuit_breaker.read': { roles: adminTA },
  'audit_log.read': { perm: 'View the platform audit log' },
  'client_error.create': { roles: reporters },
  'client_error.list': { perm: 'Triage feedback, reports, and client errors' },
  'me.read': { roles: accountable },
  'me.token.create': { roles: accountable },
  'me.password.change': { roles: allButDemo },
} satisfies Record<string, Rule>;

export type Op = keyof typeof POLICY;

/** allowed mirrors auth.Allowed: the role must be listed (when the rule lists roles) and hold the permission (when it names one). */
export function allowed(role: Role, op: Op): boolean {
  const r: Rule = POLICY[op];
  if (!r || !isRole(role)) return false;
  if (r.roles && !r.roles.includes(role)) return false;
  if (r.perm && !hasPermission(role, r.perm)) return false;
  return true;
}

function rank(r: Role): number {
  switch (r) {
    case 'administrator':
      return 6;
    case 'tenant_administrator':
      return 5;
    case 'ai_manager':
      return 4;
    case 'finance':
    case 'member':
      return 3;
    case 'viewer':
      return 2;
    case 'demo_user':
      return 1;
  }
}

/** grantableRoles lists the roles a caller of role r may give (auth.Role.CanGrant). */
export function grantableRoles(r: Role): Role[] {
  return ROLES.filter((t) => rank(r) >= rank(t));
}

/**
 * seesTenantFigures mirrors the server's stats scope rule (seesTenantFigures
 * in internal/admin/figures.go): below the Administrator, the Tenant
 * Administrator and the roles that read cost breakdowns or analytics see
 * their whole tenant; the others only the requests of their own tokens.
 */
export function seesTenantFigures(r: Role): boolean {
  return r === 'tenant_administrator' || hasPermission(r, 'View cost breakdowns') || hasPermission(r, 'View analytics dashboards');
}

/** canHoldTokens mirrors auth.Role.CanHoldTokens: Finance, Viewer and Demo User hold none. */
export function canHoldTokens(r: Role): boolean {
  return r !== 'finance' && r !== 'viewer' && r !== 'demo_user';
}

/** The pages of the dashboard. */
export type PageId =
  | 'overview'
  | 'gateways'
  | 'users'
  | 'tenants'
  | 'logs'
  | 'spend'
  | 'analytics'
  | 'prices'
  | 'playground'
  | 'audit'
  | 'client-errors'
  | 'account';

export interface NavItem {
  id: PageId;
  label: string;
  path: string;
}

interface PageDef extends NavItem {
  /** The operation a role must be allowed to see the page. */
  op: Op;
  /** Whether the read-only demo shows the page (on sample data). */
  demo: boolean;
}

const PAGES: PageDef[] = [
  { id: 'overview', label: 'Overview', path: '/ui/overview', op: 'stats.read', demo: true },
  { id: 'gateways', label: 'Gateways', path: '/ui/gateways', op: 'gateway.list', demo: true },
  { id: 'users', label: 'Users', path: '/ui/users', op: 'user.list', demo: false },
  { id: 'tenants', label: 'Tenants', path: '/ui/tenants', op: 'tenant.list', demo: false },
  { id: 'logs', label: 'Logs', path: '/ui/logs', op: 'log.list', demo: true },
  { id: 'spend', label: 'Spend', path: '/ui/spend', op: 'tenant.spend', demo: true },
  { id: 'analytics', label: 'Analytics', path: '/ui/analytics', op: 'stats.analytics', demo: true },
  { id: 'prices', label: 'Model prices', path: '/ui/prices', op: 'model_price.list', demo: true },
  { id: 'playground', label: 'Playground', path: '/ui/playground', op: 'playground.token', demo: false },
  { id: 'audit', label: 'Audit log', path: '/ui/audit', op: 'audit_log.read', demo: false },
  { id: 'client-errors', label: 'Client errors', path: '/ui/client-errors', op: 'client_error.list', demo: false },
  // Every role that signs in with a password may change it here; the roles that may read /me also see their tokens.
  { id: 'account', label: 'My account', path: '/ui/account', op: 'me.password.change', demo: false },
];

/**
 * navFor is the navigation of a role: the pages whose operation the role
 * may perform. A Demo User may perform none; it gets the read-only demo
 * pages, which run on bundled sample data.
 */
export function navFor(role: Role): NavItem[] {
  const pick = role === 'demo_user' ? PAGES.filter((p) => p.demo) : PAGES.filter((p) => allowed(role, p.op));
  return pick.map(({ id, label, path }) => ({ id, label, path }));
}

/**
 * LANDING is the page a role starts on when it may open it: Finance, whose
 * job is the money, lands on Spend; the AI Manager, whose job is how the
 * models are used, on Analytics; every other role on the first page of its
 * navigation (Overview).
 */
const LANDING: Partial<Record<Role, PageId>> = { finance: 'spend', ai_manager: 'analytics' };

/** homeFor is the path a role lands on after signing in (undefined: no page at all). */
export function homeFor(role: Role): string | undefined {
  const nav = navFor(role);
  const want = LANDING[role];
  return (nav.find((n) => n.id === want) ?? nav[0])?.path;
}

/** pageFor finds the page a path belongs to (/ui/gateways/gw_1 → gateways). */
export function pageFor(path: string): PageId | null {
  const p = PAGES.find((x) => path === x.path || path.startsWith(x.path + '/'));
  return p ? p.id : null;
}

/** canSee reports whether role may open page id. */
export function canSee(role: Role, id: PageId): boolean {
  return navFor(role).some((n) => n.id === id);
}

/** reportsClientErrors: the roles POST /admin/v1/client-errors accepts (not AI Manager, not Demo User). */
export function reportsClientErrors(role: Role): boolean {
  return allowed(role, 'client_error.create');
}
