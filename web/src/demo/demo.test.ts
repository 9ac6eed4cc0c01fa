import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeClient } from '../api/client';
import { demoSession } from '../api/session';
import { M, Q, operationName } from '../api/queries';
import { demoOperationNames } from './exchange';
import { DEMO_VARS } from './vars';

// The Demo User's interface runs on bundled fixtures and must call no admin
// endpoint: every query of the demo pages is answered, every mutation
// refused, and fetch is never called. (web/e2e/run.mjs checks the same in a
// real browser by counting requests.)
describe('the demo client', () => {
  const fetchSpy = vi.fn(() => Promise.reject(new Error('the demo must not fetch')));
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchSpy);
    fetchSpy.mockClear();
  });
  afterEach(() => vi.unstubAllGlobals());

  const client = makeClient(demoSession(), () => {
    throw new Error('no 401 in the demo');
  });
  const vars = DEMO_VARS;
  const demoQueries = Object.values(Q).filter((doc) => demoOperationNames.includes(operationName(doc)!));

  it('answers every query of the demo pages from the fixtures', async () => {
    expect(demoQueries.length).toBeGreaterThanOrEqual(16);
    for (const doc of demoQueries) {
      const name = operationName(doc)!;
      const res = await client.query(doc, vars[name] ?? {}).toPromise();
      expect(res.error, name).toBeUndefined();
      // One log and its trace are asked for by id below.
      if (name !== 'LogDetail' && name !== 'TraceDetail') expect(Object.values(res.data ?? {}).every((v) => v != null), name).toBe(true);
    }
    const logs = await client.query(Q.logs, {}).toPromise();
    const id = logs.data.logs.data[0].id;
    const log = await client.query(Q.log, { id }).toPromise();
    const trace = await client.query(Q.trace, { id: log.data.log.traceId }).toPromise();
    expect(trace.data.trace.root.children.length).toBeGreaterThan(0);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('refuses every mutation as read-only, without fetching', async () => {
    for (const doc of Object.values(M)) {
      const res = await client.mutation(doc, {}).toPromise();
      expect(res.error?.graphQLErrors[0]?.extensions?.code, operationName(doc)!).toBe('DEMO_READ_ONLY');
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('answers a page outside the demo as not available, without fetching', async () => {
    const res = await client.query(Q.audit, {}).toPromise();
    expect(res.error?.graphQLErrors[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('gives the figures a plausible shape', async () => {
    const res = await client.query(Q.overview, vars.Overview).toPromise();
    const { stats, timeseries } = res.data;
    expect(timeseries.points).toHaveLength(24);
    expect(stats.requests).toBe(timeseries.points.reduce((n: number, p: { requests: number }) => n + p.requests, 0));
    expect(stats.errors).toBeLessThan(stats.requests);
  });
});

describe('the signed-in client', () => {
  afterEach(() => vi.unstubAllGlobals());
  it('POSTs to /admin/graphql with the bearer token, and reports a 401', async () => {
    const calls: { url: string; init: RequestInit }[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, init });
        return new Response(JSON.stringify({ error: { type: 'authentication_error', code: 'token_expired', message: 'expired' } }), {
          status: 401,
          headers: { 'content-type': 'application/json' },
        });
      }),
    );
    let unauthorized = 0;
    const client = makeClient(
      { token: 'sk-sl-abc', kind: 'session', user: { id: 'usr_1', email: 'a@b.c', name: '', role: 'administrator', tenantId: 'platform' } },
      () => unauthorized++,
    );
    const res = await client.query(Q.tenants, {}).toPromise();
    expect(res.error).toBeDefined();
    expect(unauthorized).toBe(1);
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe('/admin/graphql');
    expect(calls[0].init.method).toBe('POST');
    expect(new Headers(calls[0].init.headers).get('authorization')).toBe('Bearer sk-sl-abc');
    expect(JSON.parse(String(calls[0].init.body))).toMatchObject({ operationName: 'TenantList' });
  });
});
