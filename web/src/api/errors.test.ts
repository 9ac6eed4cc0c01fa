import { CombinedError } from '@urql/core';
import { describe, expect, it } from 'vitest';
import { problemOf } from './errors';

const gql = (errors: { message: string; path?: string[]; extensions?: Record<string, unknown> }[]) => new CombinedError({ graphQLErrors: errors as any });

describe('problemOf', () => {
  it('classifies by extensions.code and keeps the param', () => {
    expect(problemOf(gql([{ message: 'the member role may not perform log.list', path: ['logs'], extensions: { code: 'FORBIDDEN' } }]))).toEqual({
      kind: 'forbidden',
      message: 'The member role may not perform log.list.',
      param: undefined,
    });
    expect(problemOf(gql([{ message: 'request_timeout_ms must be between 1000 and 600000', extensions: { code: 'BAD_USER_INPUT', param: 'request_timeout_ms' } }]))).toMatchObject({
      kind: 'invalid',
      param: 'request_timeout_ms',
    });
    expect(problemOf(gql([{ message: 'slug taken', extensions: { code: 'CONFLICT' } }]))?.kind).toBe('conflict');
    expect(problemOf(gql([{ message: 'internal error', extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'r-1' } }]))?.message).toBe('Internal error (request id r-1).');
  });
  it('picks the error of one field in a partial answer', () => {
    const err = gql([{ message: 'no', path: ['auditLog'], extensions: { code: 'FORBIDDEN' } }]);
    expect(problemOf(err, 'providers')).toBeNull();
    expect(problemOf(err, 'auditLog')?.kind).toBe('forbidden');
  });
  it('reports transport failures', () => {
    expect(problemOf(new CombinedError({ networkError: new Error('Failed to fetch') }))?.kind).toBe('network');
    expect(problemOf(undefined)).toBeNull();
  });
});
