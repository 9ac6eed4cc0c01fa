// A tab list after the WAI-ARIA tabs pattern: role=tablist/tab/tabpanel,
// aria-selected and aria-controls, one tab in the Tab order (roving
// tabindex), Left/Right/Home/End move between tabs and select the one they
// reach. A tab with an href is a link (the gateway tabs keep their URLs);
// one without is a button.

import type { KeyboardEvent, ReactNode } from 'react';
import { Link, navigate } from '../lib/router';

export interface TabItem {
  id: string;
  label: string;
  /** The URL of the tab; without it the tab is a button and onSelect is called. */
  href?: string;
}

/** tabAfter is the tab a key moves to from current, or null for a key the tab list does not handle. */
export function tabAfter(ids: readonly string[], current: string, key: string): string | null {
  const i = Math.max(0, ids.indexOf(current));
  switch (key) {
    case 'ArrowRight':
      return ids[(i + 1) % ids.length];
    case 'ArrowLeft':
      return ids[(i - 1 + ids.length) % ids.length];
    case 'Home':
      return ids[0];
    case 'End':
      return ids[ids.length - 1];
  }
  return null;
}

/** The ids a tab list of prefix gives its tabs and its one panel. */
export const tabId = (prefix: string, id: string) => `${prefix}-tab-${id}`;
export const panelId = (prefix: string) => `${prefix}-panel`;

export function TabList({
  prefix,
  label,
  tabs,
  current,
  onSelect,
}: {
  prefix: string;
  label: string;
  tabs: readonly TabItem[];
  current: string;
  onSelect?: (id: string) => void;
}) {
  const select = (t: TabItem) => {
    if (t.href) navigate(t.href);
    else onSelect?.(t.id);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    const next = tabAfter(
      tabs.map((t) => t.id),
      current,
      e.key,
    );
    const t = tabs.find((x) => x.id === next);
    if (!t) return;
    e.preventDefault();
    document.getElementById(tabId(prefix, t.id))?.focus();
    select(t);
  };
  return (
    <div className="tabs" role="tablist" aria-label={label} onKeyDown={onKeyDown}>
      {tabs.map((t) => {
        const props = {
          id: tabId(prefix, t.id),
          role: 'tab',
          'aria-selected': t.id === current,
          'aria-controls': panelId(prefix),
          tabIndex: t.id === current ? 0 : -1,
        };
        return t.href ? (
          <Link key={t.id} to={t.href} {...props}>
            {t.label}
          </Link>
        ) : (
          <button key={t.id} type="button" onClick={() => select(t)} {...props}>
            {t.label}
          </button>
        );
      })}
    </div>
  );
}

/**
 * TabPanel is the panel of the selected tab of the tab list of prefix, named
 * by that tab unless unnamed (the sign-in form, whose tab "Email and password"
 * would otherwise also label the panel as "Email").
 */
export function TabPanel({ prefix, current, unnamed, children }: { prefix: string; current: string; unnamed?: boolean; children: ReactNode }) {
  return (
    <div className="tab-body" role="tabpanel" id={panelId(prefix)} aria-labelledby={unnamed ? undefined : tabId(prefix, current)}>
      {children}
    </div>
  );
}
