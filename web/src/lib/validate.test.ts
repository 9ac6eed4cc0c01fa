import { describe, expect, it } from 'vitest';
import * as v from './validate';

describe('validate', () => {
  it('checks slugs', () => {
    expect(v.slug('acme')).toBeNull();
    expect(v.slug('a1-b2')).toBeNull();
    expect(v.slug('')).toMatch(/required/);
    for (const bad of ['a', 'Acme', '-acme', 'ac me', 'a_b', 'x'.repeat(64)]) expect(v.slug(bad), bad).not.toBeNull();
  });
  it('checks key aliases', () => {
    expect(v.keyAlias('main')).toBeNull();
    expect(v.keyAlias('m')).toBeNull();
    expect(v.keyAlias('eu_west-1')).toBeNull();
    expect(v.keyAlias('Main')).not.toBeNull();
    expect(v.keyAlias('')).not.toBeNull();
  });
  it('checks emails and passwords', () => {
    expect(v.email('dana@acme.example')).toBeNull();
    expect(v.email('dana')).not.toBeNull();
    expect(v.email(' ')).toMatch(/required/);
    expect(v.password('correct horse battery')).toBeNull();
    expect(v.password('short')).toMatch(/12 characters/);
    expect(v.password('', true)).toBeNull();
    expect(v.password('')).toMatch(/required/);
    expect(v.password('é'.repeat(129))).toMatch(/256 bytes/);
  });
  it('checks bounded integers', () => {
    expect(v.intIn('3', 1, 10, 'Max attempts')).toBeNull();
    expect(v.intIn('11', 1, 10, 'Max attempts')).toBe('Max attempts must be between 1 and 10.');
    expect(v.intIn('1.5', 1, 10, 'X')).toMatch(/whole number/);
    expect(v.intIn('', 1, 10, 'X', true)).toBeNull();
    expect(v.intIn('', 1, 10, 'X')).toMatch(/required/);
  });
  it('checks money', () => {
    expect(v.webhookURL('')).toBeNull();
    expect(v.webhookURL('https://hooks.example.com/sluice')).toBeNull();
    expect(v.webhookURL('ftp://x')).toMatch(/http/);
    expect(v.webhookURL('https://u:p@x.example')).toMatch(/user name/);
    expect(v.webhookSecret('', '', false)).toBeNull();
    expect(v.webhookSecret('', 'https://h.example', true)).toBeNull();
    expect(v.webhookSecret('', 'https://h.example', false)).toMatch(/needs a signing secret/);
    expect(v.webhookSecret('short', 'https://h.example', false)).toMatch(/16 to 512/);
    expect(v.webhookSecret('0123456789abcdef', 'https://h.example', false)).toBeNull();
    expect(v.amount('100')).toBeNull();
    expect(v.amount('12.50')).toBeNull();
    expect(v.amount('0')).toMatch(/greater than 0/);
    expect(v.amount('-1')).not.toBeNull();
    expect(v.amount('ten')).not.toBeNull();
    expect(v.price('', 'P')).toBeNull();
    expect(v.price('10001', 'P')).toMatch(/10,000/);
  });
  it('checks base URLs', () => {
    expect(v.baseURL('', false)).toBeNull();
    expect(v.baseURL('', true)).toMatch(/needs a base URL/);
    expect(v.baseURL('http://127.0.0.1:9999/v1', false)).toBeNull();
    expect(v.baseURL('ftp://x', false)).toMatch(/http/);
    expect(v.baseURL('https://u:p@x.example', false)).toMatch(/user name/);
    expect(v.baseURL('https://x.example/v1?a=1', false)).toMatch(/query/);
    expect(v.baseURL('not a url', false)).toMatch(/absolute/);
  });
  it('checks provider keys, routes and patterns', () => {
    expect(v.providerKey('sk-mock-upstream-key-0001')).toBeNull();
    expect(v.providerKey('short')).not.toBeNull();
    expect(v.providerKey('has a space in it')).not.toBeNull();
    expect(v.routeName('smart')).toBeNull();
    expect(v.routeName('a/b')).not.toBeNull();
    expect(v.patterns([], 'keyword')).toMatch(/at least one/);
    expect(v.patterns(['(unclosed'], 'regex')).toMatch(/not a valid/);
    expect(v.patterns(['(unclosed'], 'keyword')).toBeNull();
    expect(v.patterns([], 'pii')).toBeNull();
  });
  it('checks times and parses lists', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(v.futureTime('', now)).toBeNull();
    expect(v.futureTime('2026-01-01T00:00', now)).toMatch(/future/);
    expect(v.futureTime('2030-01-01T00:00', now)).toBeNull();
    expect(v.lines(' a \n\n b\n')).toEqual(['a', 'b']);
    expect(v.csvList('gpt-4o, gpt-4o-mini ,')).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(v.metadataPairs('team=search\nenv = prod')).toEqual({ value: { team: 'search', env: 'prod' } });
    expect(v.metadataPairs('oops')).toHaveProperty('error');
    expect(v.firstError(null, 'b', 'c')).toBe('b');
  });
});
