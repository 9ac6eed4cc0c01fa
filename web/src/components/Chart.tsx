// A time-series chart on uPlot: canvas-drawn, a few tens of kilobytes,
// resized with its container.

import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { cssColor, useColorScheme } from '../lib/theme';

export interface SeriesDef {
  label: string;
  /** color is a custom property of styles.css, var(--chart-…), so that it follows the colour scheme. */
  color: string;
  values: number[];
  /** format of the values in the legend and axis. */
  fmt?: (v: number) => string;
  fill?: boolean;
}

export function TimeChart({
  title,
  ts,
  series,
  height = 220,
  bars = false,
  range,
  integer = false,
}: {
  title: string;
  /** ts are RFC 3339 times. */
  ts: string[];
  series: SeriesDef[];
  height?: number;
  bars?: boolean;
  /** range fixes the time axis to the range asked for (RFC 3339), so that a single point does not span years. */
  range?: [string, string];
  /** integer puts ticks on whole numbers only (counts). */
  integer?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColorScheme();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = ts.map((t) => new Date(t).getTime() / 1000);
    const fmt = series[0]?.fmt ?? ((v: number) => String(v));
    const xr = range ? range.map((t) => new Date(t).getTime() / 1000) : null;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: xr ? { time: true, range: () => [xr[0], xr[1]] } : { time: true },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { stroke: cssColor('var(--chart-axis)'), grid: { stroke: cssColor('var(--chart-grid)') } },
        {
          stroke: cssColor('var(--chart-axis)'),
          grid: { stroke: cssColor('var(--chart-grid)') },
          // Wide enough for the longest tick label.
          size: (_u, values) => 16 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
          incrs: integer ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9] : undefined,
          values: (_u, vals) => vals.map((v) => (v == null ? '' : fmt(v))),
        },
      ],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: cssColor(s.color),
          width: 2,
          fill: s.fill ? cssColor(s.color) + '22' : undefined,
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : (s.fmt ?? String)(v)),
          paths: bars ? uPlot.paths.bars!({ size: [0.7, 40] }) : undefined,
          points: { show: xs.length < 60 },
        })),
      ],
    };
    const plot = new uPlot(opts, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [ts, series, height, bars, range?.[0], range?.[1], integer, scheme]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {ts.length === 0 ? <div className="state empty">No data in this range yet.</div> : <div ref={box} className="chart-box" role="img" aria-label={title} />}
    </figure>
  );
}
