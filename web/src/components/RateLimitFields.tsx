// The per-minute rate limit fields of a gateway's settings and of a user:
// requests and tokens per minute, empty for unlimited, within the bounds the
// server accepts (checkRateLimit in internal/admin/gateways.go).

import * as v from '../lib/validate';
import { Field } from './ui';

/** rateLimitErrors checks the two fields. */
export function rateLimitErrors(rpm: string, tpm: string) {
  return { rpm: v.intIn(rpm, 1, 10_000_000, 'Requests per minute', true), tpm: v.intIn(tpm, 1, 2_000_000_000, 'Tokens per minute', true) };
}

/** RateLimitFields are the two inputs; set(k) is the change handler of field k. */
export function RateLimitFields({
  f,
  errs,
  set,
}: {
  f: { rpm: string; tpm: string };
  errs: { rpm: string | null; tpm: string | null };
  set: (k: 'rpm' | 'tpm') => (e: { target: { value: string } }) => void;
}) {
  return (
    <>
      <Field label="Requests per minute" hint="Empty: unlimited." error={errs.rpm}>
        <input inputMode="numeric" value={f.rpm} onChange={set('rpm')} />
      </Field>
      <Field label="Tokens per minute" hint="Empty: unlimited." error={errs.tpm}>
        <input inputMode="numeric" value={f.tpm} onChange={set('tpm')} />
      </Field>
    </>
  );
}
