import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AuditView } from './audit-view.js';
import { LiveView } from './live-view.js';
import { SessionsView } from './sessions-view.js';
import './styles.css';

type Route = { readonly view: 'sessions' } | { readonly view: 'live' | 'audit'; readonly sessionId: string };

/** `#/`, `#/live/<id>`, `#/audit/<id>`. */
const parseRoute = (hash: string): Route => {
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
      ) : route.view === 'live' ? (
        <LiveView key={route.sessionId} sessionId={route.sessionId} />
      ) : (
        <AuditView key={route.sessionId} sessionId={route.sessionId} />
      )}
    </>
  );
};

render(<App />, document.getElementById('app')!);
