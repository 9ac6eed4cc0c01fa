// The range of a figures page: a preset or a custom from/to, kept in the
// URL (lib/range.ts). The custom bounds are datetime-local inputs in the
// browser's zone, checked before they apply.

import { useMemo, useState, type FormEvent } from 'react';
import { checkCustomRange, isoToLocalInput, parseRangeQuery, RANGES, rangeQuery, resolveRange, type RangeChoice, type RangeId, type TimeRange } from '../lib/range';
import { setQuery, useLocation } from '../lib/router';

/** useRangeParam reads the page's range from the URL; tick (a refresh counter) moves a preset's end to now again. */
export function useRangeParam(fallback: RangeId, tick = 0): { choice: RangeChoice; range: TimeRange; setChoice: (c: RangeChoice) => void } {
  const { query } = useLocation();
  const choice = parseRangeQuery(query, fallback);
  const key = JSON.stringify(choice);
  const range = useMemo(() => resolveRange(choice), [key, tick]); // eslint-disable-line react-hooks/exhaustive-deps
  const setChoice = (c: RangeChoice) => {
    const params: Record<string, string | undefined> = Object.fromEntries(new URLSearchParams(location.search));
    setQuery({ ...params, ...rangeQuery(c) });
  };
  return { choice, range, setChoice };
}

export function RangeControl({ choice, onChange }: { choice: RangeChoice; onChange: (c: RangeChoice) => void }) {
  const [custom, setCustom] = useState(choice.id === 'custom');
  const [from, setFrom] = useState(choice.id === 'custom' ? isoToLocalInput(choice.from) : '');
  const [to, setTo] = useState(choice.id === 'custom' ? isoToLocalInput(choice.to) : '');
  const [error, setError] = useState('');
  const pick = (v: string) => {
    if (v === 'custom') {
      // Start from the range shown, so that only one bound needs changing.
      const r = resolveRange(choice);
      setFrom((f) => f || isoToLocalInput(r.from));
      setTo((t) => t || isoToLocalInput(r.to));
      setCustom(true);
      return;
    }
    setCustom(false);
    setError('');
    onChange({ id: v as RangeId });
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const r = checkCustomRange(from, to);
    if ('error' in r) {
      setError(r.error);
      return;
    }
    setError('');
    onChange({ id: 'custom', from: r.range.from, to: r.range.to });
  };
  return (
    <form className="range-control" onSubmit={apply} aria-label="Period" noValidate>
      <div className="inline-field">
        <label htmlFor="range-picker">Range</label>
        <select id="range-picker" value={custom ? 'custom' : choice.id} onChange={(e) => pick(e.target.value)}>
          {RANGES.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
          <option value="custom">Custom range…</option>
        </select>
      </div>
      {custom && (
        <>
          <div className="inline-field">
            <label htmlFor="range-from">From</label>
            <input id="range-from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby={error ? 'range-error' : undefined} />
          </div>
          <div className="inline-field">
            <label htmlFor="range-to">To</label>
            <input id="range-to" type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby={error ? 'range-error' : undefined} />
          </div>
          <button type="submit" className="small">
            Apply range
          </button>
          {error && (
            <p id="range-error" className="range-error" role="alert">
              {error}
            </p>
          )}
        </>
      )}
    </form>
  );
}
