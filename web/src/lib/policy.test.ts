import { describe, expect, it } from 'vitest';
// The server's policy, read as text by Vite (?raw).
import policy from '../../../internal/auth/policy.go?raw';
import roles from '../../../internal/auth/roles.go?raw';
import { allowed, canHoldTokens, grantableRoles, homeFor, navFor, seesTenantFigures, pageFor, reportsClientErrors, ROLES, type Op, type Role } from './policy';

const ids = (r: Role) => navFor(r).map((n) => n.id);

describe('navFor', () => {
  const want: Record<Role, string[]> = {
    administrator: ['overview', 'gateways', 'users', 'tenants', 'logs', 'spend', 'analytics', 'prices', 'playground', 'audit', 'client-errors', 'account'],
    tenant_administrator: ['overview', 'gateways', 'users', 'tenants', 'logs', 'spend', 'analytics', 'prices', 'playground', 'account'],
    ai_manager: ['overview', 'analytics', 'account'],
    finance: ['overview', 'spend', 'prices', 'account'],
    member: ['overview', 'playground', 'account'],
    viewer: ['overview', 'account'],
    // The Demo User may use no admin endpoint: it gets the read-only demo on sample data.
    demo_user: ['overview', 'gateways', 'logs', 'spend', 'analytics', 'prices'],
  };
  for (const r of ROLES) {
    it(`gives ${r} its pages`, () => expect(ids(r)).toEqual(want[r]));
  }
  it('links every page under /ui/', () => {
    for (const r of ROLES) for (const n of navFor(r)) expect(n.path).toMatch(/^\/ui\/[a-z-]+$/);
  });
});

describe('homeFor', () => {
  it('lands Finance on Spend, the AI Manager on Analytics and every other role on its first page', () => {
    expect(homeFor('finance')).toBe('/ui/spend');
    expect(homeFor('ai_manager')).toBe('/ui/analytics');
    expect(homeFor('viewer')).toBe('/ui/overview');
    expect(homeFor('tenant_administrator')).toBe('/ui/overview');
    expect(homeFor('administrator')).toBe('/ui/overview');
    expect(homeFor('member')).toBe('/ui/overview');
    expect(homeFor('demo_user')).toBe('/ui/overview');
  });
});

describe('seesTenantFigures', () => {
  it('gives the tenant-wide Overview to the roles that read cost or analytics', () => {
    expect(ROLES.filter(seesTenantFigures)).toEqual(['administrator', 'tenant_administrator', 'ai_manager', 'finance']);
  });
});

describe('pageFor', () => {
  it.each([
    ['/ui/gateways', 'gateways'],
    ['/ui/gateways/gw_1/keys', 'gateways'],
    ['/ui/logs/0193-abc', 'logs'],
    ['/ui/client-errors', 'client-errors'],
    ['/ui/nope', null],
    ['/ui/gatewaysx', null],
  ])('%s → %s', (p, want) => expect(pageFor(p)).toBe(want));
});

describe('grants', () => {
  it('lets an Administrator grant every role and a Tenant Administrator all but Administrator', () => {
    expect(grantableRoles('administrator')).toEqual(ROLES);
    expect(grantableRoles('tenant_administrator')).toEqual(ROLES.filter((r) => r !== 'administrator'));
    expect(grantableRoles('finance')).toEqual(['finance', 'member', 'viewer', 'demo_user']);
  });
  it('knows who holds tokens and who may report client errors', () => {
    expect(ROLES.filter(canHoldTokens)).toEqual(['administrator', 'tenant_administrator', 'ai_manager', 'member']);
    expect(ROLES.filter(reportsClientErrors)).toEqual(['administrator', 'tenant_administrator', 'finance', 'member', 'viewer']);
  });
});

// The mirror must not drift from the server's policy: read internal/auth/roles.go
// and internal/auth/policy.go and compare every role × operation the dashboard uses.
describe('mirrors internal/auth/policy.go', () => {
  const roleConst = Object.fromEntries([...roles.matchAll(/^\s+(\w+)\s+Role = "(\w+)"/gm)].map((m) => [m[1], m[2]]));
  const permConst = Object.fromEntries([...roles.matchAll(/^\s+(\w+)\s+Permission = "([^"]+)"/gm)].map((m) => [m[1], m[2]]));
  const grantsBlock = roles.slice(roles.indexOf('var grants'), roles.indexOf('}\n', roles.indexOf('var grants')));
  const grants: Record<string, string[]> = {};
  for (const m of grantsBlock.matchAll(/(\w+):\s*\{([^}]*)\}/g)) {
    grants[roleConst[m[1]]] = m[2].split(',').map((x: string) => permConst[x.trim()]).filter(Boolean);
  }
  const groups = Object.fromEntries(
    [...policy.matchAll(/^\s+(\w+)\s+= \[\]Role\{([^}]*)\}/gm)].map((m) => [m[1], m[2].split(',').map((x: string) => roleConst[x.trim()])]),
  );
  const opNames = Object.fromEntries([...policy.matchAll(/^\s+(Op\w+)\s+Op = "([^"]+)"/gm)].map((m) => [m[1], m[2]]));
  const rules: Record<string, { perm?: string; roles?: string[] }> = {};
  for (const line of policy.split('\n')) {
    const m = /^\s+(Op\w+):\s+\{(.*)\},$/.exec(line);
    if (!m) continue;
    const body = m[2];
    const perm = /perm: (\w+)/.exec(body)?.[1];
    const rg = /roles: (\w+)/.exec(body)?.[1];
    const inline = /roles: \[\]Role\{([^}]*)/.exec(body)?.[1];
    rules[opNames[m[1]]] = {
      perm: perm ? permConst[perm] : undefined,
      roles: inline ? inline.split(',').map((x) => roleConst[x.trim()]) : rg ? groups[rg] : undefined,
    };
  }
  const goAllowed = (r: Role, op: string) => {
    const ru = rules[op];
    if (!ru) return false;
    if (ru.roles && !ru.roles.includes(r)) return false;
    if (ru.perm && !(grants[r] ?? []).includes(ru.perm)) return false;
    return true;
  };
  const ops: Op[] = [
    'tenant.list', 'tenant.create', 'tenant.update', 'tenant.delete', 'tenant.purge', 'gateway.list', 'gateway.create', 'key.create', 'rule.create',
    'gateway_token.list', 'gateway_token.create', 'user.list', 'user.create', 'user.update', 'stats.read', 'stats.timeseries', 'stats.analytics',
    'gateway.spend', 'tenant.spend', 'tenant.analytics', 'log.list', 'log.read', 'trace.read', 'playground.token', 'playground.search',
    'model_price.list', 'model_price.put', 'provider.list', 'guardrail.stats', 'circuit_breaker.read', 'audit_log.read', 'client_error.create',
    'client_error.list', 'me.read', 'me.token.create',
  ];
  it('parses the Go tables', () => {
    expect(Object.keys(rules).length).toBeGreaterThan(60);
    expect(Object.keys(grants)).toContain('administrator');
  });
  for (const op of ops) {
    it(op, () => {
      expect(rules[op], `internal/auth/policy.go has no ${op}`).toBeDefined();
      for (const r of ROLES) expect([r, allowed(r, op)]).toEqual([r, goAllowed(r, op)]);
    });
  }
});
