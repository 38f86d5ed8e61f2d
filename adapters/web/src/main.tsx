import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { consoleClient } from './api.js';
import { AuditView } from './audit-view.js';
import { consoleAuth } from './auth.js';
import { ChildView } from './child-view.js';
import { LiveView } from './live-view.js';
import { SessionsSidebar, SessionsView } from './sessions-view.js';
import { SignIn } from './sign-in.js';
import './styles.css';

type Route =
  | { readonly view: 'sessions' }
  | { readonly view: 'live' | 'audit'; readonly sessionId: string }
  | { readonly view: 'child'; readonly parentSessionId: string; readonly childSessionId: string };

/** `#/`, `#/live/<id>`, `#/audit/<id>`, `#/child/<parent id>/<child id>`. */
const parseRoute = (hash: string): Route => {
  const c = /^#\/child\/([^/]+)\/([^/]+)$/.exec(hash);
  if (c) return { view: 'child', parentSessionId: decodeURIComponent(c[1]!), childSessionId: decodeURIComponent(c[2]!) };
  const m = /^#\/(live|audit)\/(.+)$/.exec(hash);
  return m ? { view: m[1] as 'live' | 'audit', sessionId: decodeURIComponent(m[2]!) } : { view: 'sessions' };
};

/** Who the held token authenticates (asked once per token), shown beside Sign out. */
const usePrincipal = (token: string | null): string | null => {
  const [principal, setPrincipal] = useState<{ token: string; id: string } | null>(null);
  useEffect(() => {
    if (token === null || principal?.token === token) return;
    let current = true;
    void consoleClient.whoami(token).then((r) => {
      if (!current) return;
      if (r.ok) setPrincipal({ token, id: r.principal });
      else if (r.reason === 'rejected') consoleAuth.unauthorized(token);
    });
    return () => {
      current = false;
    };
  }, [token]);
  return token !== null && principal?.token === token ? principal.id : null;
};

const App = () => {
  const [route, setRoute] = useState(parseRoute(location.hash));
  const [auth, setAuth] = useState(consoleAuth.state());
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    setAuth(consoleAuth.state());
    return consoleAuth.subscribe(setAuth);
  }, []);
  const principal = usePrincipal(auth.kind === 'open' ? auth.token : null);
  const go = (hash: string) => {
    location.hash = hash;
  };
  return (
    <>
      <nav class="top" aria-label="Console">
        <a href="#/">steerlog console</a>
        {auth.kind === 'open' && auth.token !== null ? (
          <span class="signed-in">
            {principal !== null ? <>Signed in as <strong data-principal={principal}>{principal}</strong> </> : null}
            <button type="button" onClick={() => consoleAuth.signOut()}>
              Sign out
            </button>
          </span>
        ) : null}
      </nav>
      {auth.kind === 'sign-in' ? (
        <SignIn reason={auth.reason} check={(token) => consoleClient.whoami(token)} onAccepted={(token) => consoleAuth.signIn(token)} />
      ) : route.view === 'sessions' ? (
        <div class="layout single">
          <div class="content">
            <SessionsView go={go} />
          </div>
        </div>
      ) : (
        <div class="layout">
          <SessionsSidebar current={route.view === 'child' ? route.childSessionId : route.sessionId} />
          <div class="content">
            {route.view === 'child' ? (
              <ChildView key={`${route.parentSessionId}/${route.childSessionId}`} parentSessionId={route.parentSessionId} childSessionId={route.childSessionId} />
            ) : route.view === 'live' ? (
              <LiveView key={route.sessionId} sessionId={route.sessionId} />
            ) : (
              <AuditView key={route.sessionId} sessionId={route.sessionId} />
            )}
          </div>
        </div>
      )}
    </>
  );
};

render(<App />, document.getElementById('app')!);
