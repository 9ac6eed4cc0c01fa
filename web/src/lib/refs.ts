// How the dashboard shows an object a record refers to (an ObjectRef the
// server named): its name, linked when the role may open its page; a
// deleted one as "(deleted) id"; one the server would not name as its id.

import type { ObjectRef } from '../api/types';
import { allowed, canSee, hasPermission, type PageId, type Role } from './policy';

/** PAGE_OF is the page an object of a kind opens on, for the kinds that have one. */
const PAGE_OF: Partial<Record<string, { page: PageId; path: (id: string) => string }>> = {
  gateway: { page: 'gateways', path: (id) => `/ui/gateways/${encodeURIComponent(id)}` },
  user: { page: 'users', path: (id) => `/ui/users/${encodeURIComponent(id)}` },
};

export interface RefView {
  /** What the cell says. */
  text: string;
  /** Where it links to, or null for plain text. */
  href: string | null;
  /** A tooltip that says why it is not named, when it is not. */
  title?: string;
  /** Whether the text is an id rather than a name (shown in monospace). */
  isId: boolean;
}

/**
 * refView says how role sees ref. fallback is what a record without a ref
 * shows (the id of a key that names no object, or "(none)"). A named object
 * links to its page only when role may open that page (policy.canSee).
 */
export function refView(ref: ObjectRef | null | undefined, role: Role, fallback: string): RefView {
  if (!ref) return { text: fallback, href: null, isId: false };
  switch (ref.state) {
    case 'named': {
      const p = PAGE_OF[ref.kind];
      return { text: ref.name, href: p && canSee(role, p.page) ? p.path(ref.id) : null, isId: false };
    }
    case 'deleted':
      return { text: `(deleted) ${ref.id}`, href: null, title: `This ${kindLabel(ref.kind)} no longer exists.`, isId: true };
    default:
      return {
        text: ref.id,
        href: null,
        title:
          ref.kind === 'user'
            ? 'Not named: a user of another tenant, or your role may not read users.'
            : `Not named: this ${kindLabel(ref.kind)} belongs to another tenant.`,
        isId: true,
      };
  }
}

/**
 * readsUserNames mirrors the server's rule (readsUserNames in
 * internal/admin/names.go): users are named, by email, for roles that may
 * list users or read cost breakdowns; others get their ids.
 */
export function readsUserNames(role: Role): boolean {
  return allowed(role, 'user.list') || hasPermission(role, 'View cost breakdowns');
}

/** refText is the text of refView, for CSV exports. */
export function refText(ref: ObjectRef | null | undefined, fallback: string): string {
  if (!ref) return fallback;
  if (ref.state === 'named') return ref.name;
  return ref.state === 'deleted' ? `(deleted) ${ref.id}` : ref.id;
}

function kindLabel(kind: string): string {
  return kind === 'provider_key' ? 'provider key' : kind === 'token' ? 'API token' : kind;
}
