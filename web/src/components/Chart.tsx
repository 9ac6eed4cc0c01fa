// A time-series chart on uPlot: canvas-drawn, a few tens of kilobytes,
// resized with its container. Colours come from CSS custom properties
// (styles.css), read again when the colour scheme changes, so that the
// charts follow a dark theme. Every chart has a title, a unit on its value
// axis, a legend with the values under the cursor, a tooltip, and a
// visually-hidden table of its values for screen readers.

import { useEffect, useId, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatTime } from '../lib/format';

export interface SeriesDef {
  label: string;
  /** color is a CSS custom property name (--chart-1) or a CSS colour. */
  color: string;
  /** values per time; null is a gap (no data in the bucket). */
  values: (number | null)[];
  /** format of the values in the legend, tooltip, table and axis. */
  fmt?: (v: number) => string;
  fill?: boolean;
  /** dash draws the line dashed (a running total beside per-bucket bars, say). */
  dash?: boolean;
}

/** cssColor resolves a custom property name (--chart-1) on the document, or returns a colour as is. */
/** isolated returns the indices of the values whose neighbours are both missing. */
export function isolated(values: (number | null | undefined)[]): number[] {
  const out: number[] = [];
  values.forEach((v, i) => {
    if (v != null && values[i - 1] == null && values[i + 1] == null) out.push(i);
  });
  return out;
}

export function cssColor(c: string, el?: Element): string {
  if (!c.startsWith('--')) return c;
  return getComputedStyle(el ?? document.documentElement).getPropertyValue(c).trim() || 'gray';
}

/** withAlpha returns a #rgb / #rrggbb / rgb() colour with the given opacity (other forms unchanged). */
export function withAlpha(color: string, alpha: number): string {
  let m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(color);
  if (m) color = `#${m[1]}${m[1]}${m[2]}${m[2]}${m[3]}${m[3]}`;
  m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (m) return `rgba(${parseInt(m[1], 16)}, ${parseInt(m[2], 16)}, ${parseInt(m[3], 16)}, ${alpha})`;
  m = /^rgba?\((\d+)[ ,]+(\d+)[ ,]+(\d+)/i.exec(color);
  if (m) return `rgba(${m[1]}, ${m[2]}, ${m[3]}, ${alpha})`;
  return color;
}

/** useColorScheme changes when the browser's colour scheme does, so that charts read their colours again. */
function useColorScheme(): string {
  const query = () => (typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null);
  const [dark, setDark] = useState(() => query()?.matches ?? false);
  useEffect(() => {
    const q = query();
    if (!q) return;
    const on = () => setDark(q.matches);
    q.addEventListener('change', on);
    return () => q.removeEventListener('change', on);
  }, []);
  return dark ? 'dark' : 'light';
}

/** tooltip is a uPlot plugin showing the time and the values under the cursor next to it. */
function tooltip(fmtX: (ts: number) => string, values: (number | null)[][], fmts: ((v: number) => string)[]): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = document.createElement('div');
        tip.className = 'chart-tip';
        tip.setAttribute('aria-hidden', 'true');
        u.over.appendChild(tip);
      },
      setCursor: (u) => {
        const i = u.cursor.idx;
        if (i == null || u.cursor.left == null || u.cursor.left < 0) {
          tip.style.display = 'none';
          return;
        }
        // Built node by node: the strict CSP refuses style attributes in
        // markup, but not styles set through the DOM.
        const time = document.createElement('div');
        time.className = 'chart-tip-time';
        time.textContent = fmtX(u.data[0][i]);
        const rows = u.series.slice(1).map((s, k) => {
          const v = values[k][i];
          const row = document.createElement('div');
          const sw = document.createElement('span');
          sw.className = 'chart-tip-swatch';
          sw.style.background = String(typeof s.stroke === 'function' ? s.stroke(u, k + 1) : s.stroke);
          const b = document.createElement('b');
          b.textContent = v == null ? '—' : fmts[k](v);
          row.append(sw, `${s.label}: `, b);
          return row;
        });
        tip.replaceChildren(time, ...rows);
        tip.style.display = 'block';
        const left = u.cursor.left + 12;
        tip.style.left = (left + tip.offsetWidth > u.over.clientWidth ? u.cursor.left - tip.offsetWidth - 12 : left) + 'px';
        tip.style.top = Math.max(0, (u.cursor.top ?? 0) - 10) + 'px';
      },
    },
  };
}

export function TimeChart({
  title,
  ts,
  series,
  unit,
  summary,
  height = 220,
  bars = false,
  range,
  integer = false,
  id,
}: {
  title: string;
  /** ts are RFC 3339 times. */
  ts: string[];
  series: SeriesDef[];
  /** unit labels the value axis: ms, USD, requests, hits. */
  unit: string;
  /** summary is a sentence under the title (a total, say). */
  summary?: string;
  height?: number;
  /** bars draws the first series as solid bars (the others as lines). */
  bars?: boolean;
  /** range fixes the time axis to the range asked for (RFC 3339), so that a single point does not span years. */
  range?: [string, string];
  /** integer puts ticks on whole numbers only (counts). */
  integer?: boolean;
  /** id names the chart for tests (data-chart). */
  id?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColorScheme();
  const titleId = useId();
  const withData = series.some((s) => s.values.some((v) => v != null && v > 0));
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = ts.map((t) => new Date(t).getTime() / 1000);
    const fmt = series[0]?.fmt ?? ((v: number) => String(v));
    const xr = range ? range.map((t) => new Date(t).getTime() / 1000) : null;
    const axis = cssColor('--chart-axis', el);
    const grid = cssColor('--chart-grid', el);
    const fmts = series.map((s) => s.fmt ?? String);
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      plugins: [tooltip((x) => formatTime(new Date(x * 1000).toISOString()), series.map((s) => s.values), fmts)],
      scales: {
        x: xr ? { time: true, range: () => [xr[0], xr[1]] } : { time: true },
        y: { range: (_u, _min, max) => [0, max != null && max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid } },
        {
          stroke: axis,
          grid: { stroke: grid },
          ticks: { stroke: grid },
          label: unit,
          labelSize: 18,
          // Wide enough for the longest tick label.
          size: (_u, values) => 16 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
          incrs: integer ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9] : undefined,
          values: (_u, vals) => vals.map((v) => (v == null ? '' : fmt(v))),
        },
      ],
      series: [
        {},
        ...series.map((s, i) => {
          const color = cssColor(s.color, el);
          const asBar = bars && i === 0;
          return {
            label: s.label,
            stroke: color,
            width: asBar ? 1 : 2,
            dash: s.dash ? [6, 4] : undefined,
            // Bars are filled solid: an outline alone reads as an empty bar.
            fill: asBar ? color : s.fill ? withAlpha(color, 0.15) : undefined,
            // The values as given (a bar of 0 is drawn as none, below).
            value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) => {
              const v = idx == null ? null : s.values[idx];
              return v == null ? '—' : fmts[i](v);
            },
            paths: asBar ? uPlot.paths.bars!({ size: [0.7, 40] }) : undefined,
            // Every point of a short series; of a long one only the values with no neighbour,
            // which a line cannot draw (a single busy hour in a week would show nothing).
            points: { show: !asBar, fill: color, filter: xs.length < 60 ? null : () => isolated(s.values) },
          };
        }),
      ],
    };
    // A bar of 0 is not drawn: its outline would draw a broken line along the axis.
    const drawn = series.map((s, i) => (bars && i === 0 ? s.values.map((v) => (v === 0 ? null : v)) : s.values));
    const plot = new uPlot(opts, [xs, ...drawn] as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [ts, series, height, bars, range?.[0], range?.[1], integer, unit, scheme]);
  return (
    <figure className="chart" data-chart={id} data-has-data={withData ? 'true' : 'false'} aria-labelledby={titleId}>
      <figcaption id={titleId}>
        <span className="chart-title">
          {title} <span className="chart-unit">({unit})</span>
        </span>
        {summary && <span className="chart-summary">{summary}</span>}
      </figcaption>
      {ts.length === 0 || !withData ? (
        <div className="state empty">No data in this range yet.</div>
      ) : (
        <>
          <div ref={box} className="chart-box" aria-hidden="true" />
          <ChartTable title={title} unit={unit} ts={ts} series={series} />
        </>
      )}
    </figure>
  );
}

/** ChartTable is the text alternative of a chart: its values per time, visually hidden. */
function ChartTable({ title, unit, ts, series }: { title: string; unit: string; ts: string[]; series: SeriesDef[] }) {
  return (
    <table className="sr-only">
      <caption>
        {title} ({unit}), per time
      </caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          {series.map((s) => (
            <th scope="col" key={s.label}>
              {s.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {ts.map((t, i) => (
          <tr key={t}>
            <th scope="row">{formatTime(t)}</th>
            {series.map((s) => {
              const v = s.values[i];
              return <td key={s.label}>{v == null ? '—' : (s.fmt ?? String)(v)}</td>;
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
