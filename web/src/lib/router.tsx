// A tiny history router: the dashboard's pages live under /ui/, which the
// server answers with index.html (web/handler.go), so paths are real URLs
// that can be bookmarked and reloaded.

import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const EVENT = 'sluice:navigate';

/** navigate moves to path (with an optional query) without reloading. */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(EVENT));
  window.scrollTo?.(0, 0);
}

/** useLocation re-renders on every navigation and returns the path and query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [loc, setLoc] = useState(() => ({ path: location.pathname, search: location.search }));
  useEffect(() => {
    const on = () => setLoc({ path: location.pathname, search: location.search });
    window.addEventListener('popstate', on);
    window.addEventListener(EVENT, on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener(EVENT, on);
    };
  }, []);
  return { path: loc.path, query: new URLSearchParams(loc.search) };
}

/** setQuery replaces the query string, keeping the path (for filters and paging). */
export function setQuery(params: Record<string, string | undefined | null>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  navigate(location.pathname + (s ? '?' + s : ''), { replace: true });
}

/** match matches a path against a pattern such as /ui/gateways/:id/:tab; optional trailing params end in ?. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const ps = pattern.split('/').filter(Boolean);
  const xs = path.split('/').filter(Boolean);
  const out: Record<string, string> = {};
  if (xs.length > ps.length) return null;
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i];
    const optional = p.endsWith('?');
    const name = p.replace(/^:/, '').replace(/\?$/, '');
    if (i >= xs.length) {
      if (optional) continue;
      return null;
    }
    if (p.startsWith(':')) out[name] = decodeURIComponent(xs[i]);
    else if (p !== xs[i]) return null;
  }
  return out;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** Link is an anchor that navigates in-app on a plain left click (new tabs still work). */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={click} {...rest} />;
}
