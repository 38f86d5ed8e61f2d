import { useEffect, useState } from 'preact/hooks';
import type { HostResult } from '../../../host/schemas.js';

type Summary = HostResult<'session.list'>['sessions'][number];
import { call } from './api.js';
import { treeOrder } from './session-tree.js';


/** The sessions this host knows, with status, and a button that starts a new one; children sit under their parent. */
export const SessionsView = ({ go }: { go: (hash: string) => void }) => {
  const [sessions, setSessions] = useState<readonly Summary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void call('session.list', {}).then((r) => (r.ok ? setSessions(r.value.sessions) : setError(r.error.message)));
  }, []);
  const create = async () => {
    const r = await call('session.create', {});
    if (r.ok) go(`#/live/${encodeURIComponent(r.value.sessionId)}`);
    else setError(r.error.message);
  };
  return (
    <main class="sessions" aria-label="Sessions">
      <h1>Sessions</h1>
      <button type="button" class="primary" onClick={() => void create()}>
        New session
      </button>
      {error ? <p role="alert">{error}</p> : null}
      {sessions === null ? (
        <p role="status">Loading…</p>
      ) : sessions.length === 0 ? (
        <p>No sessions yet.</p>
      ) : (
        <table>
          <caption>Sessions in this store</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Kind</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">Open</th>
            </tr>
          </thead>
          <tbody>
            {treeOrder(sessions).map(({ session: s, depth }) => (
              <tr key={s.sessionId} data-session={s.sessionId} data-parent={s.parentSessionId ?? ''} data-depth={depth}>
                <td style={{ paddingLeft: `${0.3 + depth * 1.5}rem` }}>
                  {depth > 0 ? <span aria-label={`child of ${s.parentSessionId}`}>↳ </span> : null}
                  <code>{s.sessionId}</code>
                </td>
                <td>{s.kind}</td>
                <td>{new Date(s.createdAt).toISOString()}</td>
                <td>{s.running ? 'running' : s.live ? 'idle (live)' : 'stored'}</td>
                <td>
                  <a href={`#/audit/${encodeURIComponent(s.sessionId)}`} aria-label={`Audit ${s.sessionId}`}>Audit</a> ·{' '}
                  {s.parentSessionId !== undefined && s.kind !== 'ordinary' ? (
                    <a href={`#/child/${encodeURIComponent(s.parentSessionId)}/${encodeURIComponent(s.sessionId)}`} aria-label={`Open child ${s.sessionId}`}>Open</a>
                  ) : (
                    <a href={`#/live/${encodeURIComponent(s.sessionId)}`} aria-label={`Live ${s.sessionId}`}>Live</a>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
};
