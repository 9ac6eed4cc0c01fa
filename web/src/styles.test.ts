// The colours of styles.css: every one is a custom property of :root (light)
// with a value for prefers-color-scheme: dark, and text meets WCAG's 4.5:1
// on every background it is drawn on, in both schemes.

import { describe, expect, it } from 'vitest';

import css from './styles.css?raw';

const SOURCES = import.meta.glob<string>(['./**/*.ts', './**/*.tsx', '!./**/*.test.ts'], { query: '?raw', import: 'default', eager: true });

/** rootVars reads the custom properties of the first `:root { … }` at or after from. */
function rootVars(from: number): Record<string, string> {
  const start = css.indexOf(':root {', from);
  const body = css.slice(start, css.indexOf('}', start));
  return Object.fromEntries([...body.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1], m[2].trim()]));
}

const DARK_AT = css.indexOf('@media (prefers-color-scheme: dark)');
const LIGHT = rootVars(0);
const DARK = { ...LIGHT, ...rootVars(DARK_AT) };

function rgb(hex: string): [number, number, number] {
  let h = hex.replace('#', '');
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  expect(h, `${hex} is a #rgb or #rrggbb colour`).toMatch(/^[0-9a-f]{6}$/i);
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

function luminance(hex: string): number {
  const [r, g, b] = rgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** contrast is WCAG 2's contrast ratio of two colours. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * TEXT lists each text colour with the backgrounds styles.css draws it on
 * (a panel, the page, hovered rows and buttons, notices, selected items).
 */
const TEXT: Record<string, string[]> = {
  '--ink': ['--bg', '--panel', '--subtle', '--hover', '--field-bg', '--notice-bg', '--brand-soft', '--bad-bg', '--good-bg', '--warn-bg'],
  '--muted': ['--bg', '--panel', '--subtle', '--hover', '--field-bg', '--notice-bg', '--badge-bg'],
  '--brand': ['--bg', '--panel', '--subtle', '--hover', '--notice-bg', '--brand-soft'],
  '--brand-ink': ['--brand', '--brand-hover'],
  '--good': ['--panel', '--good-bg', '--subtle'],
  '--warn': ['--panel', '--warn-bg'],
  '--bad': ['--panel', '--bad-bg', '--hover', '--subtle'],
  '--badge-ink': ['--badge-bg'],
  '--top-ink': ['--top-bg', '--top-hover'],
  '--code-ink': ['--code-bg'],
  '--chart-axis': ['--panel'],
};

describe('styles.css colours', () => {
  for (const [scheme, vars] of [
    ['light', LIGHT],
    ['dark', DARK],
  ] as const) {
    for (const [fg, bgs] of Object.entries(TEXT)) {
      for (const bg of bgs) {
        it(`${fg} on ${bg} is at least 4.5:1 (${scheme})`, () => {
          const ratio = contrast(vars[fg], vars[bg]);
          expect(ratio, `${fg} ${vars[fg]} on ${bg} ${vars[bg]}: ${ratio.toFixed(2)}:1`).toBeGreaterThanOrEqual(4.5);
        });
      }
    }
  }

  // Chart lines and bars are graphics: 3:1 against the panel (WCAG 1.4.11).
  const GRAPHICS = ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5', '--chart-6', '--chart-7', '--chart-8', '--chart-other', '--chart-errors', '--chart-cost', '--chart-savings', '--chart-hits'];
  for (const [scheme, vars] of [
    ['light', LIGHT],
    ['dark', DARK],
  ] as const) {
    it(`draws chart series at 3:1 or more against the panel (${scheme})`, () => {
      const weak = GRAPHICS.map((k) => [k, contrast(vars[k], vars['--panel'])] as const).filter(([, r]) => r < 3);
      expect(weak.map(([k, r]) => `${k} ${vars[k]}: ${r.toFixed(2)}:1`)).toEqual([]);
    });
  }

  it('finds the dark scheme', () => {
    expect(DARK_AT).toBeGreaterThan(0);
    expect(Object.keys(rootVars(DARK_AT)).length).toBeGreaterThan(20);
  });

  it('defines every colour of the light scheme for the dark one too', () => {
    const colours = Object.entries(LIGHT)
      .filter(([, v]) => /^#|^rgb/.test(v))
      .map(([k]) => k);
    expect(colours.filter((k) => !(k in rootVars(DARK_AT)))).toEqual([]);
  });

  it('defines every custom property it uses', () => {
    const used = new Set([...css.matchAll(/var\((--[\w-]+)\)/g)].map((m) => m[1]));
    expect([...used].filter((k) => !(k in LIGHT))).toEqual([]);
  });

  it('writes colours only as custom properties of :root', () => {
    const outside = css
      .replace(/:root \{[^}]*\}/g, '')
      .split('\n')
      .filter((l) => /#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(/i.test(l));
    expect(outside).toEqual([]);
  });

  it('leaves no colour in the components (charts take var(--chart-…))', () => {
    expect(Object.keys(SOURCES).length).toBeGreaterThan(20);
    const hits = Object.entries(SOURCES).flatMap(([p, text]) =>
      text
        .split('\n')
        .filter((l) => /['"`]#[0-9a-f]{3,8}['"`]|['"`]rgba?\(\d/i.test(l))
        .map((l) => `${p}: ${l.trim()}`),
    );
    expect(hits).toEqual([]);
  });
});
