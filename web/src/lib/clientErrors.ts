// Reporting of the dashboard's own errors to POST /admin/v1/client-errors
// (CONTRACT §9): window.onerror, unhandled promise rejections and the React
// error boundary. Each distinct message+stack is sent once per page load,
// and at most 10 reports leave a minute (the server allows 30 per user).

export interface ClientErrorReport {
  message: string;
  stack?: string;
  url?: string;
  release?: string;
  user_agent?: string;
  context?: Record<string, unknown>;
}

export interface ReporterOptions {
  /** send delivers one report; its failure is swallowed (reporting must not raise errors of its own). */
  send: (r: ClientErrorReport) => Promise<unknown>;
  /** enabled says whether reports are sent now (signed in with a role the server accepts them from). */
  enabled: () => boolean;
  now?: () => number;
  limitPerMinute?: number;
  release?: string;
}

const MAX_FIELD = 4000;

export class ClientErrorReporter {
  private seen = new Set<string>();
  private sent: number[] = [];
  private opts: Required<Omit<ReporterOptions, 'release'>> & { release: string };

  constructor(o: ReporterOptions) {
    this.opts = { now: () => Date.now(), limitPerMinute: 10, release: '', ...o } as typeof this.opts;
  }

  /** report sends err unless it was sent before or the minute's quota is spent; it says whether it sent. */
  report(err: unknown, context?: Record<string, unknown>): boolean {
    if (!this.opts.enabled()) return false;
    const { message, stack } = describe(err);
    const key = message + '\n' + stack;
    if (this.seen.has(key)) return false;
    const now = this.opts.now();
    this.sent = this.sent.filter((t) => now - t < 60_000);
    if (this.sent.length >= this.opts.limitPerMinute) return false;
    this.seen.add(key);
    this.sent.push(now);
    const r: ClientErrorReport = {
      message: message.slice(0, MAX_FIELD),
      stack: stack.slice(0, MAX_FIELD * 2),
      release: this.opts.release,
      context,
    };
    if (typeof location !== 'undefined') r.url = location.origin + location.pathname;
    if (typeof navigator !== 'undefined') r.user_agent = navigator.userAgent.slice(0, 500);
    this.opts.send(r).catch(() => {});
    return true;
  }

  /** install listens to window errors and unhandled rejections; it returns the uninstaller. */
  install(w: Window): () => void {
    const onError = (e: ErrorEvent) => this.report(e.error ?? e.message, { source: 'window.onerror' });
    const onRejection = (e: PromiseRejectionEvent) => this.report(e.reason, { source: 'unhandledrejection' });
    w.addEventListener('error', onError);
    w.addEventListener('unhandledrejection', onRejection);
    return () => {
      w.removeEventListener('error', onError);
      w.removeEventListener('unhandledrejection', onRejection);
    };
  }
}

/** describe turns anything thrown into a message and a stack. */
export function describe(err: unknown): { message: string; stack: string } {
  if (err instanceof Error) {
    return { message: `${err.name}: ${err.message}`, stack: err.stack ?? '' };
  }
  if (typeof err === 'string') return { message: err, stack: '' };
  try {
    return { message: JSON.stringify(err) ?? String(err), stack: '' };
  } catch {
    return { message: String(err), stack: '' };
  }
}
