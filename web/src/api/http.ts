// Plain JSON calls to the admin REST paths the dashboard needs outside
// GraphQL: sign-in, sign-out and client-error reports.

/** APIError is an answer in the contract's error shape (CONTRACT §3). */
export class APIError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'APIError';
  }
}

/** restJSON calls method path with an optional JSON body and bearer token; a non-2xx answer throws an APIError. */
export async function restJSON<T>(method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<T | null> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new APIError(0, 'network', 'Sluice could not be reached. Check that the server is running.');
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const e = body?.error;
    throw new APIError(res.status, e?.code ?? 'http_' + res.status, e?.message ?? `The server answered ${res.status}.`, e?.param ?? null);
  }
  return body as T;
}
