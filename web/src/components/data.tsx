// Data hooks over urql: a query with a refetch that always goes to the
// server, an action runner for mutations with classified errors, and a view
// that renders the loading, denied, missing and failed states of a query.

import { useCallback, useState, type ReactNode } from 'react';
import { useClient, useQuery, type AnyVariables } from 'urql';
import { problemOf, type Problem } from '../api/errors';
import { Loading, ProblemView } from './ui';

export interface QueryState<T> {
  data: T | undefined;
  fetching: boolean;
  problem: Problem | null;
  /** problemFor is the error of one top-level field (a partial answer). */
  problemFor: (field: string) => Problem | null;
  refetch: () => void;
}

/** useGQL runs a named query; pause skips it (for example until a tenant is chosen). */
export function useGQL<T = any>(query: string, variables?: AnyVariables, pause = false): QueryState<T> {
  const [res, reexecute] = useQuery<T>({ query, variables: variables as any, pause });
  const refetch = useCallback(() => reexecute({ requestPolicy: 'network-only' }), [reexecute]);
  return {
    data: res.data ?? undefined,
    fetching: res.fetching,
    problem: problemOf(res.error),
    problemFor: (field: string) => problemOf(res.error, field),
    refetch,
  };
}

/** useAction runs mutations, remembering whether one is running and the last problem. */
export function useAction() {
  const client = useClient();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = useCallback(
    async <R = any,>(doc: string, variables: Record<string, unknown>, field: string): Promise<R | null> => {
      setBusy(true);
      setProblem(null);
      try {
        const res = await client.mutation(doc, variables).toPromise();
        const p = problemOf(res.error, field) ?? problemOf(res.error);
        if (p) {
          setProblem(p);
          return null;
        }
        return (res.data as any)?.[field] ?? null;
      } finally {
        setBusy(false);
      }
    },
    [client],
  );
  return { run, busy, problem, setProblem };
}

/** QueryView renders the states of one field of a query, and the field's data when there is some. */
export function QueryView<T>({
  q,
  field,
  what,
  children,
}: {
  q: QueryState<any>;
  field: string;
  what: string;
  children: (data: T) => ReactNode;
}) {
  const p = q.problemFor(field);
  const data = q.data?.[field] as T | undefined | null;
  if (p) return <ProblemView problem={p} what={what} retry={q.refetch} />;
  if (data == null) {
    if (q.fetching || q.data === undefined) return <Loading what={what} />;
    return <ProblemView problem={{ kind: 'not_found', message: '' }} what={what} />;
  }
  return <>{children(data)}</>;
}
