import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiClient } from './api/client';
import { SessionContext } from './api/use-api';
import { AccessTokensPage } from './pages/access-tokens.page';
import { AuditTrailPage } from './pages/audit-trail.page';
import { DebuggerPage } from './pages/debugger.page';
import { DestinationPage } from './pages/destination.page';
import { FunctionEditorPage } from './pages/function-editor.page';
import { FunctionsPage } from './pages/functions.page';
import { NewDestinationPage } from './pages/new-destination.page';
import { OAuthApplicationsPage } from './pages/oauth-applications.page';
import { RegulationsPage } from './pages/regulations.page';
import { SignInPage } from './pages/sign-in.page';
import { SourcePage } from './pages/source.page';
import { SourcesPage } from './pages/sources.page';
import { TrackingPlanPage, TrackingPlansPage } from './pages/tracking-plans.page';
import { WorkspacesPage } from './pages/workspaces.page';
import { Link, navigate, usePath } from './router';
import { forgetToken, mintedTokenName, storedToken, storeToken } from './session';

export function App() {
  const path = usePath();
  const [token, setToken] = useState<string | null>(storedToken);
  const [signedOutReason, setSignedOutReason] = useState<string>();

  const session = useMemo(() => {
    if (!token) return null;
    const client = new ApiClient({ kind: 'bearer', token }, () => {
      forgetToken();
      setToken(null);
      setSignedOutReason('The access token was refused (deleted or invalid). Sign in again.');
    });
    return {
      client,
      authorization: client.authorizationHeader(),
      signOut: () => {
        // A token minted by a password sign-in is of no use once signed out: it is revoked, so that
        // sign-ins do not pile up live all-workspace tokens. A token the user pasted is theirs to keep.
        const minted = mintedTokenName();
        if (minted) void client.delete(minted).catch(() => undefined);
        forgetToken();
        setToken(null);
        setSignedOutReason(undefined);
        navigate('/sign-in');
      },
    };
  }, [token]);

  useEffect(() => {
    if (!token && path !== '/sign-in') navigate('/sign-in', { replace: true });
    if (token && (path === '/sign-in' || path === '/')) navigate('/workspaces', { replace: true });
  }, [token, path]);

  useEffect(() => {
    document.title = `${titleOf(path)} · Tributary console`;
  }, [path]);

  // After following a link, keyboard and screen-reader users start at the new page, not the old link.
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    document.getElementById('main')?.focus({ preventScroll: false });
  }, [path]);

  if (!session) {
    return (
      <SignInPage
        notice={signedOutReason}
        onSignedIn={(newToken, mintedName) => {
          storeToken(newToken, mintedName);
          setToken(newToken);
          setSignedOutReason(undefined);
          navigate('/workspaces');
        }}
      />
    );
  }

  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  const workspace = segments[0] === 'workspaces' ? segments[1] : undefined;
  return (
    <SessionContext.Provider value={session}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/workspaces" className="brand">
          Tributary
        </Link>
        <nav aria-label="Main">
          <Link to="/workspaces">Workspaces</Link>
          {workspace && (
            <>
              <Link to={`/workspaces/${workspace}`}>Sources</Link>
              <Link to={`/workspaces/${workspace}/tracking-plans`}>Tracking plans</Link>
              <Link to={`/workspaces/${workspace}/audit-trail`}>Audit trail</Link>
              <Link to={`/workspaces/${workspace}/oauth-applications`}>OAuth apps</Link>
              <Link to={`/workspaces/${workspace}/regulations`}>Regulations</Link>
              <Link to={`/workspaces/${workspace}/functions`}>Functions</Link>
            </>
          )}
          <Link to="/access-tokens">Access tokens</Link>
        </nav>
        <button type="button" className="link-button" onClick={session.signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page segments={segments} />
      </main>
    </SessionContext.Provider>
  );
}

function Page({ segments }: { segments: string[] }) {
  const [root, ws, section, id, sub, subId] = segments;
  if (root === 'access-tokens') return <AccessTokensPage />;
  if (root !== 'workspaces') return <NotFound />;
  if (!ws) return <WorkspacesPage />;
  if (!section) return <SourcesPage workspace={ws} />;
  if (section === 'tracking-plans')
    return id ? <TrackingPlanPage workspace={ws} planId={id} /> : <TrackingPlansPage workspace={ws} />;
  if (section === 'audit-trail') return <AuditTrailPage workspace={ws} />;
  if (section === 'oauth-applications') return <OAuthApplicationsPage workspace={ws} />;
  if (section === 'regulations') return <RegulationsPage workspace={ws} />;
  if (section === 'functions')
    return id ? <FunctionEditorPage workspace={ws} functionId={id} /> : <FunctionsPage workspace={ws} />;
  if (section === 'sources' && id) {
    if (!sub) return <SourcePage workspace={ws} source={id} />;
    if (sub === 'debugger') return <DebuggerPage workspace={ws} source={id} />;
    if (sub === 'destinations' && subId === 'new') return <NewDestinationPage workspace={ws} source={id} />;
    if (sub === 'destinations' && subId)
      return <DestinationPage workspace={ws} source={id} destination={subId} />;
  }
  return <NotFound />;
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no console page at this address. <Link to="/workspaces">Go to the workspaces.</Link>
      </p>
    </section>
  );
}

function titleOf(path: string): string {
  if (path.endsWith('/debugger')) return 'Live debugger';
  if (path.startsWith('/sign-in')) return 'Sign in';
  const last = path.split('/').filter(Boolean).at(-1);
  return last ? decodeURIComponent(last) : 'Workspaces';
}
