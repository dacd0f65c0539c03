import { useState, type FormEvent } from 'react';
import type { AccessTokenResource, ListResponses } from '@tributary/contracts';
import { ApiClient } from '../api/client';
import { ErrorMessage } from '../components/common';

/** How long a token minted by a password sign-in works: a working day, then the console asks again. */
export const SIGN_IN_TOKEN_LIFETIME_MS = 12 * 3_600_000;

/**
 * Sign in with an access token, or with the admin's email and password: those mint a token
 * (`POST /v1beta/access-tokens` with Basic auth) for every workspace, and only the token is kept.
 */
export function SignInPage({
  onSignedIn,
  notice,
}: {
  /** `mintedName`: the token was minted by this sign-in (revoked at sign-out). */
  onSignedIn(token: string, mintedName?: string): void;
  notice?: string;
}) {
  const [token, setToken] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const signInWithToken = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const candidate = token.trim();
    if (!candidate) return setError('Enter an access token.');
    setBusy(true);
    try {
      // Checks the token before keeping it: it must reach at least the workspaces list.
      await new ApiClient({ kind: 'bearer', token: candidate }).get<ListResponses['workspaces']>(
        'workspaces',
      );
      onSignedIn(candidate);
    } catch (failure) {
      setError(`Sign-in failed. ${(failure as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const signInWithPassword = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    if (!email || !password) return setError('Enter the email and the password.');
    setBusy(true);
    try {
      const basic = new ApiClient({ kind: 'basic', email, password });
      const { workspaces } = await basic.get<ListResponses['workspaces']>('workspaces');
      const created = await basic.post<AccessTokenResource>('access-tokens', {
        access_token: {
          description: `console sign-in ${new Date().toISOString()}`,
          scopes: 'workspace',
          workspace_names: workspaces.map((workspace) => workspace.name),
          // A tab left open (or a token copied out of it) stops working on its own; sign-out deletes it sooner.
          expire_time: new Date(Date.now() + SIGN_IN_TOKEN_LIFETIME_MS).toISOString(),
        },
      });
      if (!created.token) throw new Error('the server did not return the new token');
      onSignedIn(created.token, created.name);
    } catch (failure) {
      setError(`Sign-in failed. ${(failure as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Tributary console</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorMessage error={error} />
      <form onSubmit={signInWithToken} className="card">
        <h2>Sign in with an access token</h2>
        <label htmlFor="access-token">Access token</label>
        <input
          id="access-token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(event) => setToken(event.target.value)}
        />
        <p className="hint">Kept in this tab only (session storage); it is forgotten when the tab closes.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <form onSubmit={signInWithPassword} className="card">
        <h2>Or with the admin's email and password</h2>
        <label htmlFor="email">Email</label>
        <input
          id="email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <p className="hint">
          Creates an access token for every workspace, shown under Access tokens, and keeps only that token.
        </p>
        <button type="submit" disabled={busy}>
          Sign in with password
        </button>
      </form>
    </main>
  );
}
