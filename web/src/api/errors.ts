// What went wrong with a GraphQL call, in terms the pages show: a denied
// field (FORBIDDEN, HTTP 200), a missing resource, invalid input (with the
// field it names), or a transport failure.

import type { CombinedError } from '@urql/core';

export type ErrorKind =
  | 'forbidden'
  | 'not_found'
  | 'invalid'
  | 'conflict'
  | 'rate_limited'
  | 'unauthenticated'
  | 'read_only'
  | 'network'
  | 'internal';

export interface Problem {
  kind: ErrorKind;
  message: string;
  param?: string;
}

const KINDS: Record<string, ErrorKind> = {
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  BAD_USER_INPUT: 'invalid',
  GRAPHQL_VALIDATION_FAILED: 'invalid',
  GRAPHQL_PARSE_FAILED: 'invalid',
  QUERY_TOO_COMPLEX: 'invalid',
  PAYLOAD_TOO_LARGE: 'invalid',
  CONFLICT: 'conflict',
  RATE_LIMITED: 'rate_limited',
  UNAUTHENTICATED: 'unauthenticated',
  DEMO_READ_ONLY: 'read_only',
};

interface GQLErrorLike {
  message: string;
  path?: readonly (string | number)[] | null;
  extensions?: Record<string, unknown>;
}

/** problemOf classifies the error of a result; with field, only an error of that top-level field (or a transport error) counts. */
export function problemOf(err: CombinedError | undefined | null, field?: string): Problem | null {
  if (!err) return null;
  if (err.networkError) {
    return { kind: 'network', message: 'Sluice could not be reached, or answered with an error. Try again in a moment.' };
  }
  const list = (err.graphQLErrors ?? []) as unknown as GQLErrorLike[];
  const e = field ? list.find((g) => !g.path || g.path[0] === field) : list[0];
  if (!e) return null;
  return problemFromGraphQL(e);
}

export function problemFromGraphQL(e: GQLErrorLike): Problem {
  const code = String(e.extensions?.code ?? '');
  const kind = KINDS[code] ?? 'internal';
  const param = typeof e.extensions?.param === 'string' ? (e.extensions.param as string) : undefined;
  let message = e.message.replace(/^\[GraphQL\]\s*/, '');
  if (kind === 'internal' && e.extensions?.requestId) message += ` (request id ${e.extensions.requestId})`;
  return { kind, message: sentence(message), param };
}

function sentence(s: string): string {
  if (!s) return s;
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : t + '.';
}
