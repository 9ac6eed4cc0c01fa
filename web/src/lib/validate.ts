// Form validation helpers: each returns an error message, or null when the
// value is valid. The bounds are the server's (docs/admin-api.md); checking
// them here only saves a round trip — the server checks again.

export type Check = string | null;

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;
const ALIAS = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** slug checks a tenant id or gateway slug. */
export function slug(v: string, what = 'The id'): Check {
  if (!v) return `${what} is required.`;
  if (!SLUG.test(v)) return `${what} must be 2–63 characters: lower-case letters, digits and '-', starting with a letter or digit.`;
  return null;
}

/** keyAlias checks a provider key alias. */
export function keyAlias(v: string): Check {
  if (!v) return 'The alias is required.';
  if (!ALIAS.test(v)) return "The alias must be 1–63 characters: lower-case letters, digits, '_' and '-'.";
  return null;
}

/** email checks an email address loosely (the server has the last word). */
export function email(v: string): Check {
  const s = v.trim();
  if (!s) return 'The email is required.';
  if (s.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(s)) return 'Enter an email address such as dana@acme.example.';
  return null;
}

/** password checks a new password: 12+ characters, at most 256 bytes. Empty is allowed when optional. */
export function password(v: string, optional = false): Check {
  if (!v) return optional ? null : 'The password is required.';
  if ([...v].length < 12) return 'A password has at least 12 characters.';
  if (new TextEncoder().encode(v).length > 256) return 'A password has at most 256 bytes.';
  return null;
}

/** intIn checks an integer field within [lo, hi]; empty is allowed when optional. */
export function intIn(v: string, lo: number, hi: number, what: string, optional = false): Check {
  const s = v.trim();
  if (!s) return optional ? null : `${what} is required.`;
  if (!/^-?\d+$/.test(s)) return `${what} must be a whole number.`;
  const n = Number(s);
  if (n < lo || n > hi) return `${what} must be between ${lo.toLocaleString('en-US')} and ${hi.toLocaleString('en-US')}.`;
  return null;
}

/** amount checks a positive dollar amount. */
export function amount(v: string, what = 'The amount'): Check {
  const s = v.trim();
  if (!s) return `${what} is required.`;
  if (!/^\d+(\.\d+)?$/.test(s)) return `${what} must be a number of dollars, such as 100 or 12.50.`;
  if (Number(s) <= 0) return `${what} must be greater than 0.`;
  return null;
}

/** price checks a price per million tokens (0–10000). */
export function price(v: string, what: string): Check {
  const s = v.trim();
  if (!s) return null;
  if (!/^\d+(\.\d+)?$/.test(s)) return `${what} must be a number.`;
  if (Number(s) > 10000) return `${what} is at most 10,000 USD per million tokens.`;
  return null;
}

/** baseURL checks an upstream base URL: absolute http(s), no user info, query or fragment. */
export function baseURL(v: string, required: boolean): Check {
  const s = v.trim();
  if (!s) return required ? 'This provider needs a base URL.' : null;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return 'Enter an absolute URL such as https://api.example.com/v1.';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'The base URL must start with http:// or https://.';
  if (u.username || u.password) return 'The base URL may not contain a user name or password.';
  if (u.search || u.hash || s.includes('?') || s.includes('#')) return 'The base URL may not have a query or fragment.';
  return null;
}

/** webhookURL checks the alert webhook of a tenant: empty (none) or an absolute http(s) URL without user info. */
export function webhookURL(v: string): Check {
  const s = v.trim();
  if (!s) return null;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return 'Enter an absolute URL such as https://hooks.example.com/sluice.';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'The webhook URL must start with http:// or https://.';
  if (u.username || u.password) return 'The webhook URL may not contain a user name or password.';
  return null;
}

/**
 * webhookSecret checks a typed signing secret (16 to 512 bytes; empty keeps
 * the one set) and that a webhook URL has a secret, typed or already set.
 */
export function webhookSecret(v: string, url: string, alreadySet: boolean): Check {
  const n = new TextEncoder().encode(v).length;
  if (v && (n < 16 || n > 512)) return 'A signing secret has 16 to 512 bytes.';
  if (url.trim() && !v && !alreadySet) return 'A webhook needs a signing secret.';
  return null;
}

/** providerKey checks a provider secret: 12–4096 characters, no spaces. */
export function providerKey(v: string): Check {
  const s = v.trim();
  if (!s) return 'The key is required.';
  if (s.length < 12 || s.length > 4096) return 'A key has 12 to 4096 characters.';
  if (/\s/.test(s)) return 'A key has no spaces.';
  return null;
}

/** routeName checks a route name: 1–128 bytes, no '/' or spaces. */
export function routeName(v: string): Check {
  if (!v) return 'A route needs a name.';
  if (new TextEncoder().encode(v).length > 128) return 'A route name has at most 128 bytes.';
  if (/[\s/]/.test(v)) return "A route name has no '/' or spaces.";
  return null;
}

/** futureTime checks an optional datetime-local value that must lie in the future. */
export function futureTime(v: string, now: Date = new Date()): Check {
  if (!v) return null;
  const t = new Date(v);
  if (Number.isNaN(t.getTime())) return 'Enter a date and time.';
  if (t.getTime() <= now.getTime()) return 'The time must be in the future.';
  return null;
}

/** regexes checks that every pattern compiles (JavaScript's syntax is close to RE2's for common patterns). */
export function patterns(lines: string[], kind: string): Check {
  if (kind === 'pii') return null;
  if (lines.length === 0) return 'Give at least one pattern, one per line.';
  if (lines.length > 100) return 'At most 100 patterns.';
  for (const p of lines) {
    if (new TextEncoder().encode(p).length > 1024) return 'A pattern has at most 1024 bytes.';
    if (kind === 'regex') {
      try {
        new RegExp(p);
      } catch {
        return `The pattern ${p} is not a valid regular expression.`;
      }
    }
  }
  return null;
}

/** lines splits a textarea into trimmed non-empty lines. */
export function lines(v: string): string[] {
  return v
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** csvList splits "a, b ,c" into ["a","b","c"]. */
export function csvList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** metadataPairs parses "key=value" lines; it returns the map or an error. */
export function metadataPairs(v: string): { value: Record<string, string> } | { error: string } {
  const out: Record<string, string> = {};
  const ls = lines(v);
  if (ls.length > 8) return { error: 'At most 8 metadata filters.' };
  for (const l of ls) {
    const i = l.indexOf('=');
    if (i <= 0) return { error: `Write metadata filters as key=value (got "${l}").` };
    out[l.slice(0, i).trim()] = l.slice(i + 1).trim();
  }
  return { value: out };
}

/** firstError returns the first non-null check. */
export function firstError(...checks: Check[]): Check {
  return checks.find((c) => c != null) ?? null;
}
