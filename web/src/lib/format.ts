// Formatting of the figures the dashboard shows. Pure functions, unit-tested.

/**
 * formatUSD is the one format of an amount of dollars across the dashboard
 * (docs/decisions.md, "One format for dollars"): cents from $1 ($1,234.50);
 * between 1¢ and $1 up to four decimals, at least two ($0.25, $0.0123); below
 * 1¢ four significant digits ($0.0001194), so that the cost of one request
 * never reads $0.00. Zero is $0.00. Chart axes use formatUSDAxis, the same
 * rule shortened; a cost that may leave out unpriced requests uses formatCost.
 */
export function formatUSD(v: number | null | undefined): string {
  if (v == null || !Number.isFinite(v)) return '—';
  const sign = v < 0 ? '-' : '';
  const a = Math.abs(v);
  if (a === 0) return '$0.00';
  if (a >= 1) {
    return sign + '$' + a.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
  if (a >= 0.01) return sign + '$' + a.toFixed(4).replace(/0{1,2}$/, '');
  // Four significant digits for sub-cent amounts: $0.0001194.
  return sign + '$' + trimZeros(a.toPrecision(4), a);
}

function trimZeros(s: string, a: number): string {
  if (s.includes('e')) s = a.toFixed(10);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/**
 * formatCost shows a cost that may leave out requests answered by a model
 * without a price (their cost counts as 0 for want of one): "unpriced" when
 * nothing was priced, "$1.20 + 3 unpriced" when some requests are left out,
 * formatUSD otherwise. unpriced is the number of such requests.
 */
export function formatCost(usd: number | null | undefined, unpriced?: number | null): string {
  if (!unpriced || unpriced <= 0) return formatUSD(usd);
  if (!usd) return 'unpriced';
  return `${formatUSD(usd)} + ${formatInt(unpriced)} unpriced`;
}

/** formatRateLimit shows the limits set: "600 requests/min · 100,000 tokens/min · 4 in flight", or "none". */
export function formatRateLimit(rl: { requestsPerMinute?: number | null; tokensPerMinute?: number | null; maxInFlight?: number | null } | null | undefined): string {
  const parts = [];
  if (rl?.requestsPerMinute != null) parts.push(`${formatInt(rl.requestsPerMinute)} requests/min`);
  if (rl?.tokensPerMinute != null) parts.push(`${formatInt(rl.tokensPerMinute)} tokens/min`);
  if (rl?.maxInFlight != null) parts.push(`${formatInt(rl.maxInFlight)} in flight`);
  return parts.length ? parts.join(' · ') : 'none';
}

/** formatDuration shows milliseconds: 340 ms, 1.25 s, 2 min 5 s. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 1) return ms === 0 ? '0 ms' : ms.toFixed(2) + ' ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60_000) {
    const s = ms / 1000;
    return (s < 10 ? s.toFixed(2) : s.toFixed(1)).replace(/\.?0+$/, '') + ' s';
  }
  const totalS = Math.round(ms / 1000);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  if (h > 0) return `${h} h ${m} min`;
  return s ? `${m} min ${s} s` : `${m} min`;
}

/** formatPercent shows a ratio (0.138 → 13.8%). */
export function formatPercent(ratio: number | null | undefined, digits = 1): string {
  if (ratio == null || !Number.isFinite(ratio)) return '—';
  const p = ratio * 100;
  if (p !== 0 && Math.abs(p) < Math.pow(10, -digits)) return (p < 0 ? '>-' : '<') + Math.pow(10, -digits).toFixed(digits) + '%';
  return p.toFixed(digits).replace(/\.0+$/, '') + '%';
}

/** formatInt shows a count with thousands separators. */
export function formatInt(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/** formatCompact shows a large count briefly: 845000 → 845K. */
export function formatCompact(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  if (a < 10_000) return formatInt(n);
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [d, u] of units) {
    if (a >= d) {
      const v = n / d;
      return (Math.abs(v) < 100 ? v.toFixed(1).replace(/\.0$/, '') : Math.round(v).toString()) + u;
    }
  }
  return formatInt(n);
}

/** formatTime shows an RFC 3339 time in the browser's zone, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** formatDate shows the day of an RFC 3339 time. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().slice(0, 10);
}

/** formatRelative says how long ago (or until) a time is, relative to now. */
export function formatRelative(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return 'never';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  const d = t - now.getTime();
  const a = Math.abs(d);
  if (a < 5000) return 'just now';
  const span =
    a < 60_000
      ? `${Math.round(a / 1000)} s`
      : a < 3_600_000
        ? `${Math.round(a / 60_000)} min`
        : a < 86_400_000
          ? `${Math.round(a / 3_600_000)} h`
          : `${Math.round(a / 86_400_000)} d`;
  return d < 0 ? `${span} ago` : `in ${span}`;
}

/** formatBytes shows a byte count (65536 → 64 KiB). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${+(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** prettyJSON indents a JSON text; anything else is returned unchanged. */
export function prettyJSON(s: string): string {
  if (!s) return s;
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

/** formatUSDAxis is a short dollar label for chart axes: $0, $0.000006, $0.25, $1.5K. */
export function formatUSDAxis(v: number): string {
  if (!Number.isFinite(v)) return '';
  if (v === 0) return '$0';
  const a = Math.abs(v);
  if (a >= 1000) return '$' + formatCompact(v);
  if (a >= 0.01) return '$' + +v.toFixed(2);
  return '$' + trimZeros(v.toPrecision(2), a);
}

/** fillDays lists every UTC day from from to to, with the given figures and zeros for the missing days. */
export function fillDays<T extends { day: string; requests: number; costUsd: number }>(days: T[], from: string, to: string): { day: string; requests: number; costUsd: number }[] {
  const by = new Map(days.map((d) => [d.day, d]));
  const out: { day: string; requests: number; costUsd: number }[] = [];
  const start = new Date(from.slice(0, 10) + 'T00:00:00Z').getTime();
  const end = new Date(to).getTime();
  for (let t = start; t < end && out.length < 1000; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    const d = by.get(day);
    out.push({ day, requests: d?.requests ?? 0, costUsd: d?.costUsd ?? 0 });
  }
  for (const d of days) if (!out.some((o) => o.day === d.day)) out.push({ day: d.day, requests: d.requests, costUsd: d.costUsd });
  return out.sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** splitJSONStream splits text made of JSON values written one after another ("{…}{…}", or one per line) — a streamed answer as logged — into the values' texts; null when it is not such a sequence. */
export function splitJSONStream(s: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let inStr = false;
  let esc = false;
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inStr) {
      if (esc) esc = false;
      else if (c === '\\') esc = true;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      if (depth === 0) return null;
      inStr = true;
    } else if (c === '{' || c === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth < 0) return null;
      if (depth === 0) out.push(s.slice(start, i + 1));
    } else if (depth === 0 && !/\s/.test(c)) {
      return null;
    }
  }
  if (depth !== 0 || inStr || out.length === 0) return null;
  for (const v of out) {
    try {
      JSON.parse(v);
    } catch {
      return null;
    }
  }
  return out;
}

/** prettyBody shows a logged body readably: one JSON value indented, a stream of them one per line, anything else as is. */
export function prettyBody(s: string): string {
  if (!s) return s;
  const one = prettyJSON(s);
  if (one !== s) return one;
  const many = splitJSONStream(s);
  return many && many.length > 1 ? many.map((v) => JSON.stringify(JSON.parse(v))).join('\n') : s;
}
