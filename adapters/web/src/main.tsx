import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AuditView } from './audit-view.js';
import { ChildView } from './child-view.js';
import { LiveView } from './live-view.js';
import { SessionsView } from './sessions-view.js';
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

const App = () => {
  const [route, setRoute] = useState(parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const go = (hash: string) => {
    location.hash = hash;
  };
  return (
    <>
      <nav class="top" aria-label="Console">
        <a href="#/">steerlog console</a>
      </nav>
      {route.view === 'sessions' ? (
        <SessionsView go={go} />
      ) : route.view === 'child' ? (
        <ChildView key={`${route.parentSessionId}/${route.childSessionId}`} parentSessionId={route.parentSessionId} childSessionId={route.childSessionId} />
      ) : route.view === 'live' ? (
        <LiveView key={route.sessionId} sessionId={route.sessionId} />
      ) : (
        <AuditView key={route.sessionId} sessionId={route.sessionId} />
      )}
    </>
  );
};

render(<App />, document.getElementById('app')!);
