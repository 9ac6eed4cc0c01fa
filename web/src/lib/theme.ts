// Colours live in CSS custom properties (src/styles.css), one set for the
// light and one for the dark scheme. Canvas charts cannot use var(), so they
// read the values here and redraw when the scheme changes.

import { useEffect, useState } from 'react';

/**
 * cssColor resolves a colour written as var(--name) (or --name) to the value
 * of that custom property on the root element; any other colour is returned
 * as it is.
 */
export function cssColor(c: string, root: Element = document.documentElement): string {
  const m = /^(?:var\()?(--[\w-]+)\)?$/.exec(c.trim());
  if (!m) return c;
  return getComputedStyle(root).getPropertyValue(m[1]).trim() || c;
}

const DARK = '(prefers-color-scheme: dark)';

/** useColorScheme is the scheme the page is shown in, and changes with it. */
export function useColorScheme(): 'light' | 'dark' {
  const query = typeof matchMedia === 'function' ? matchMedia(DARK) : null;
  const [dark, setDark] = useState(() => query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const on = () => setDark(query.matches);
    query.addEventListener('change', on);
    return () => query.removeEventListener('change', on);
  }, [query]);
  return dark ? 'dark' : 'light';
}
