import { describe, expect, it } from 'vitest';
import { ROLES } from './policy';
import { readsUserNames, refText, refView } from './refs';

const gw = { kind: 'gateway', id: 'gw_1', name: 'Production', state: 'named' };
const usr = { kind: 'user', id: 'usr_1', name: 'mia@acme.test', state: 'named' };

describe('refView', () => {
  it('links a named gateway or user for a role that may open its page, plain text otherwise', () => {
    expect(refView(gw, 'administrator', '')).toEqual({ text: 'Production', href: '/ui/gateways/gw_1', isId: false });
    expect(refView(usr, 'tenant_administrator', '')).toEqual({ text: 'mia@acme.test', href: '/ui/users/usr_1', isId: false });
    expect(refView(gw, 'ai_manager', '')).toEqual({ text: 'Production', href: null, isId: false });
    expect(refView({ kind: 'token', id: 'tok_1', name: 'ci', state: 'named' }, 'administrator', '').href).toBeNull();
  });
  it('says a deleted object is deleted, with its id', () => {
    const v = refView({ kind: 'gateway', id: 'gw_2', name: '', state: 'deleted' }, 'administrator', '');
    expect([v.text, v.href, v.isId]).toEqual(['(deleted) gw_2', null, true]);
  });
  it('shows the id of an object it may not name, and says why', () => {
    const v = refView({ kind: 'user', id: 'usr_2', name: '', state: 'hidden' }, 'ai_manager', '');
    expect([v.text, v.href, v.isId]).toEqual(['usr_2', null, true]);
    expect(v.title).toMatch(/may not read users/);
  });
  it('falls back without a ref', () => {
    expect(refView(null, 'administrator', '(none)')).toEqual({ text: '(none)', href: null, isId: false });
  });
});

describe('refText', () => {
  it('is the name, "(deleted) id", the id or the fallback', () => {
    expect(refText(gw, 'x')).toBe('Production');
    expect(refText({ ...gw, name: '', state: 'deleted' }, 'x')).toBe('(deleted) gw_1');
    expect(refText({ ...usr, name: '', state: 'hidden' }, 'x')).toBe('usr_1');
    expect(refText(undefined, 'x')).toBe('x');
  });
});

describe('readsUserNames', () => {
  it('names users for the roles that manage users or read cost breakdowns', () => {
    expect(ROLES.filter(readsUserNames)).toEqual(['administrator', 'tenant_administrator', 'finance']);
  });
});
