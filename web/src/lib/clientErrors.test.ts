import { describe, expect, it } from 'vitest';
import { ClientErrorReporter, describe as describeErr, type ClientErrorReport } from './clientErrors';

function reporter(enabled = true) {
  const sent: ClientErrorReport[] = [];
  let now = 0;
  const r = new ClientErrorReporter({
    send: async (x) => {
      sent.push(x);
    },
    enabled: () => enabled,
    now: () => now,
    release: '0.1.0',
  });
  return { r, sent, tick: (ms: number) => (now += ms) };
}

describe('ClientErrorReporter', () => {
  it('sends each message+stack once', () => {
    const { r, sent } = reporter();
    const e = new TypeError('x is undefined');
    expect(r.report(e)).toBe(true);
    expect(r.report(e)).toBe(false);
    const same = new TypeError('x is undefined');
    same.stack = e.stack;
    expect(r.report(same)).toBe(false);
    const elsewhere = new TypeError('x is undefined');
    elsewhere.stack = 'TypeError: x is undefined\n    at other (app.js:1:1)';
    expect(r.report(elsewhere)).toBe(true);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ message: 'TypeError: x is undefined', release: '0.1.0' });
  });

  it('sends at most 10 a minute', () => {
    const { r, sent, tick } = reporter();
    for (let i = 0; i < 25; i++) r.report(`error ${i}`);
    expect(sent).toHaveLength(10);
    tick(30_000);
    expect(r.report('later')).toBe(false);
    tick(31_000);
    expect(r.report('after a minute')).toBe(true);
    expect(sent).toHaveLength(11);
    // A report refused for the quota was not marked as seen.
    expect(r.report('error 12')).toBe(true);
  });

  it('sends nothing while disabled (signed out, Demo User, AI Manager)', () => {
    const { r, sent } = reporter(false);
    expect(r.report(new Error('boom'))).toBe(false);
    expect(sent).toHaveLength(0);
  });

  it('swallows a failing send', async () => {
    const r = new ClientErrorReporter({ send: () => Promise.reject(new Error('offline')), enabled: () => true });
    expect(r.report('x')).toBe(true);
    await new Promise((res) => setTimeout(res, 0));
  });

  it('describes anything thrown', () => {
    expect(describeErr('plain')).toEqual({ message: 'plain', stack: '' });
    expect(describeErr({ code: 1 })).toEqual({ message: '{"code":1}', stack: '' });
    expect(describeErr(new RangeError('r')).message).toBe('RangeError: r');
  });
});
