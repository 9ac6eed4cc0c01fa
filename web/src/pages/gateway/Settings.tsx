// A gateway's settings: logging, timeouts, retries, cache, rate limits and
// the circuit breaker thresholds. Nested objects are sent whole (PATCH
// replaces them), and deleting the gateway sits at the bottom.

import { useState, type FormEvent } from 'react';
import { M } from '../../api/queries';
import type { Gateway } from '../../api/types';
import { useAction } from '../../components/data';
import { Check, ConfirmButton, Field, InlineProblem, Submit } from '../../components/ui';
import { navigate } from '../../lib/router';
import * as v from '../../lib/validate';
import { RateLimitFields, rateLimitErrors } from '../../components/RateLimitFields';

const num = (s: string) => Number(s.trim());
const optNum = (s: string) => (s.trim() ? Number(s.trim()) : null);
const str = (n: number | null | undefined) => (n == null ? '' : String(n));

export function Settings({ gateway: g, onSaved }: { gateway: Gateway; onSaved: () => void }) {
  const [f, setF] = useState(() => ({
    name: g.name,
    logBodies: g.logBodies,
    bodyLogLimitBytes: str(g.bodyLogLimitBytes),
    cacheEnabled: g.cache.enabled,
    cacheTtl: str(g.cache.ttlSeconds),
    rpm: str(g.rateLimit.requestsPerMinute),
    tpm: str(g.rateLimit.tokensPerMinute),
    timeout: str(g.requestTimeoutMs),
    maxAttempts: str(g.retry.maxAttempts),
    backoff: str(g.retry.backoffMs),
    failureThreshold: str(g.circuitBreaker.failureThreshold),
    cooldown: str(g.circuitBreaker.cooldownSeconds),
  }));
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const del = useAction();
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => {
    setSaved(false);
    setF({ ...f, [k]: e.target.value });
  };
  const errs = {
    name: f.name.trim() ? null : 'The name is required.',
    bodyLogLimitBytes: v.intIn(f.bodyLogLimitBytes, 0, 1048576, 'The body log limit'),
    cacheTtl: v.intIn(f.cacheTtl, 1, 604800, 'The cache TTL'),
    ...rateLimitErrors(f.rpm, f.tpm),
    timeout: v.intIn(f.timeout, 1000, 600000, 'The request timeout'),
    maxAttempts: v.intIn(f.maxAttempts, 1, 10, 'Max attempts'),
    backoff: v.intIn(f.backoff, 0, 60000, 'The backoff'),
    failureThreshold: v.intIn(f.failureThreshold, 1, 1000, 'The failure threshold'),
    cooldown: v.intIn(f.cooldown, 1, 600, 'The cooldown'),
  };
  const invalid = Object.values(errs).some(Boolean);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (invalid) return;
    const input = {
      name: f.name.trim(),
      logBodies: f.logBodies,
      bodyLogLimitBytes: num(f.bodyLogLimitBytes),
      cache: { enabled: f.cacheEnabled, ttlSeconds: num(f.cacheTtl) },
      rateLimit: { requestsPerMinute: optNum(f.rpm), tokensPerMinute: optNum(f.tpm) },
      requestTimeoutMs: num(f.timeout),
      retry: { maxAttempts: num(f.maxAttempts), backoffMs: num(f.backoff) },
      circuitBreaker: { failureThreshold: num(f.failureThreshold), cooldownSeconds: num(f.cooldown) },
    };
    if (await act.run(M.updateGateway, { id: g.id, input }, 'updateGateway')) {
      setSaved(true);
      onSaved();
    }
  };

  return (
    <>
      <form className="panel" onSubmit={submit} noValidate aria-label="Gateway settings">
        <h2>Settings</h2>
        <div className="form-grid">
          <Field label="Name" error={errs.name}>
            <input value={f.name} onChange={set('name')} maxLength={200} />
          </Field>
          <Field label="Request timeout (ms)" hint="1,000–600,000" error={errs.timeout}>
            <input inputMode="numeric" value={f.timeout} onChange={set('timeout')} />
          </Field>
        </div>
        <fieldset>
          <legend>Logging</legend>
          <Check label="Store request and response bodies with the logs" checked={f.logBodies} onChange={(b) => setF({ ...f, logBodies: b })} />
          <Field label="Body log limit (bytes)" hint="Bodies are truncated at this size after redaction (0–1,048,576)." error={errs.bodyLogLimitBytes}>
            <input inputMode="numeric" value={f.bodyLogLimitBytes} onChange={set('bodyLogLimitBytes')} />
          </Field>
        </fieldset>
        <fieldset>
          <legend>Retries</legend>
          <div className="form-grid">
            <Field label="Max attempts" hint="In total, across fallback targets (1–10)." error={errs.maxAttempts}>
              <input inputMode="numeric" value={f.maxAttempts} onChange={set('maxAttempts')} />
            </Field>
            <Field label="Backoff (ms)" hint="Exponential, with jitter (0–60,000)." error={errs.backoff}>
              <input inputMode="numeric" value={f.backoff} onChange={set('backoff')} />
            </Field>
          </div>
        </fieldset>
        <fieldset>
          <legend>Cache</legend>
          <Check label="Answer identical requests from the cache" checked={f.cacheEnabled} onChange={(b) => setF({ ...f, cacheEnabled: b })} />
          <Field label="Cache TTL (seconds)" hint="1–604,800 (7 days)" error={errs.cacheTtl}>
            <input inputMode="numeric" value={f.cacheTtl} onChange={set('cacheTtl')} />
          </Field>
        </fieldset>
        <fieldset>
          <legend>Rate limits</legend>
          <div className="form-grid">
            <RateLimitFields f={f} errs={errs} set={set} />
          </div>
        </fieldset>
        <fieldset>
          <legend>Circuit breaker</legend>
          <div className="form-grid">
            <Field label="Failure threshold" hint="Consecutive retryable failures that open a target's breaker (1–1,000)." error={errs.failureThreshold}>
              <input inputMode="numeric" value={f.failureThreshold} onChange={set('failureThreshold')} />
            </Field>
            <Field label="Cooldown (seconds)" hint="Open time before a probe; doubles while probes fail (1–600)." error={errs.cooldown}>
              <input inputMode="numeric" value={f.cooldown} onChange={set('cooldown')} />
            </Field>
          </div>
        </fieldset>
        <div className="form-actions">
          <Submit busy={act.busy} disabled={invalid}>
            Save settings
          </Submit>
          {saved && (
            <span className="saved" role="status">
              Saved.
            </span>
          )}
        </div>
        <InlineProblem problem={act.problem} />
      </form>
      <section className="panel danger-zone">
        <h2>Delete this gateway</h2>
        <p>Deletes the gateway with its keys, rules, tokens and assignments. Its inference paths stop answering within seconds.</p>
        <ConfirmButton
          label="Delete gateway"
          confirm={`Delete ${g.slug} for good`}
          busy={del.busy}
          onConfirm={async () => {
            if (await del.run(M.deleteGateway, { id: g.id }, 'deleteGateway')) navigate('/ui/gateways');
          }}
        />
        <InlineProblem problem={del.problem} />
      </section>
    </>
  );
}
