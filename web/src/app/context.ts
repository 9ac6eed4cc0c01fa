// The signed-in state every page reads: the session (user and role), the
// tenant the pages work on, and whether writes are possible (not in the demo).

import { createContext, useContext } from 'react';
import type { Session } from '../api/session';
import type { Role } from '../lib/policy';

export interface AppState {
  session: Session;
  role: Role;
  /** readOnly is true in the demo: forms are shown, nothing is sent. */
  readOnly: boolean;
  /** tenant is the tenant the tenant-scoped pages show; '' means all (Administrator figures). */
  tenant: string;
  setTenant: (id: string) => void;
  signOut: () => void;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(AppContext);
  if (!s) throw new Error('useApp outside the signed-in app');
  return s;
}
