// Sign-in: email and password (a 12-hour session), or a pasted user token
// checked with { me { id role } }. Finance, Viewer and Demo User tokens get
// FORBIDDEN on `me`, so for those the form offers the password instead.

import { useState, type FormEvent } from 'react';
import { demoSession, signInWithPassword, signInWithToken, TokenRoleError, type Session } from '../api/session';
import * as v from '../lib/validate';
import { TabList, TabPanel } from '../components/Tabs';

const SIGN_IN_TABS = [
  { id: 'password', label: 'Email and password' },
  { id: 'token', label: 'Paste a token' },
];

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (s: Session) => void }) {
  const [mode, setMode] = useState<'password' | 'token'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(notice);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (mode === 'password') {
      const bad = v.email(email) ?? (password ? null : 'Enter your password.');
      if (bad) return setError(bad);
    }
    setBusy(true);
    try {
      onSignedIn(mode === 'password' ? await signInWithPassword(email, password) : await signInWithToken(token));
    } catch (err) {
      if (err instanceof TokenRoleError) {
        setMode('password');
        setToken('');
        setInfo(null);
      }
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="signin-page">
      <main className="signin" id="main">
        <h1>
          <span className="logo" aria-hidden="true" /> Sluice
        </h1>
        <p className="subtitle">Sign in to manage your AI gateways.</p>
        {info && (
          <p className="notice-line" role="status">
            {info}
          </p>
        )}
        <TabList
          prefix="signin"
          label="How to sign in"
          current={mode}
          tabs={SIGN_IN_TABS}
          onSelect={(m) => {
            setMode(m as typeof mode);
            setError(null);
          }}
        />
        <TabPanel prefix="signin" current={mode} unnamed>
          <form onSubmit={submit} noValidate aria-label="Sign in">
            {mode === 'password' ? (
              <>
                <div className="field">
                  <label htmlFor="signin-email">Email</label>
                  <input id="signin-email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} autoFocus required />
                </div>
                <div className="field">
                  <label htmlFor="signin-password">Password</label>
                  <input id="signin-password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
                </div>
              </>
            ) : (
              <div className="field">
                <label htmlFor="signin-token">User token</label>
                <input
                  id="signin-token"
                  type="password"
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="sk-sl-…"
                  value={token}
                  onChange={(e) => setToken(e.target.value)}
                  autoFocus
                  required
                />
                <small className="hint">A user token (the bootstrap token, or one from My Account). Gateway tokens are refused.</small>
              </div>
            )}
            {error && (
              <p className="form-error" role="alert">
                {error}
              </p>
            )}
            <button type="submit" className="primary wide" disabled={busy} aria-busy={busy || undefined}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
        </TabPanel>
        <p className="fineprint">
          The credential is kept in this tab only (sessionStorage) and is forgotten when the tab closes.
        </p>
        <hr />
        <p>
          <button type="button" className="link" onClick={() => onSignedIn(demoSession())}>
            Explore the read-only demo
          </button>{' '}
          — sample data, no account needed.
        </p>
      </main>
    </div>
  );
}
