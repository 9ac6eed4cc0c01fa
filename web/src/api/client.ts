// The GraphQL client: urql over POST /admin/graphql with the bearer token
// of the session, or — for the Demo User — over the bundled fixtures, with
// no network exchange at all.

import { Client, fetchExchange, type Exchange } from '@urql/core';
import { demoExchange } from '../demo/exchange';
import type { Session } from './session';

/**
 * makeClient returns the client of a session. onUnauthorized runs when the
 * server answers 401 (an expired or revoked credential): the app goes back
 * to sign-in.
 */
export function makeClient(s: Session, onUnauthorized: () => void): Client {
  if (s.kind === 'demo' || s.user.role === 'demo_user') {
    return new Client({ url: '/admin/graphql', exchanges: [demoExchange], requestPolicy: 'network-only' });
  }
  const authFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 401) onUnauthorized();
    return res;
  };
  return new Client({
    url: '/admin/graphql',
    exchanges: [fetchExchange] as Exchange[],
    fetch: authFetch,
    // The admin API takes POST only (graph/handler.go): never GET.
    preferGetMethod: false,
    // Every view shows the server's current state; mutations refetch what they change.
    requestPolicy: 'network-only',
    fetchOptions: () => ({
      headers: { Authorization: `Bearer ${s.token}` },
      credentials: 'omit',
      cache: 'no-store',
    }),
  });
}
