import { useEffect, useState } from 'preact/hooks';
import type { SessionOverview } from '../../http/console-overview.js';
import { call, consoleClient } from './api.js';
import { sessionRows, type SessionListRow, type SessionSort } from './session-rows.js';
import { loadSessionPages, SESSIONS_PAGE } from './session-pages.js';
import type { SessionSummaryRow } from './session-tree.js';
import { LineagePanel, SessionFinder } from './session-finder.js';

const ago = (t: number | null, now: number): string => {
  if (t === null) return 'never';
  const s = Math.max(0, Math.round((now - t) / 1000));
  return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.round(s / 60)} min ago` : s < 86_400 ? `${Math.round(s / 3600)} h ago` : new Date(t).toISOString().slice(0, 10);
};

/**
 * The sessions a page at a time, newest first (`loadSessionPages`: `session.list` with a limit, the catalog's
 * paging, never every row in one answer), and their overviews, read again every `everyMs` — the pages shown so far,
 * from the first (the overview folds only what was written since). `more` asks for the next (older) page; null when
 * the last page is shown.
 */
const useSessions = (everyMs = 2000) => {
  const [sessions, setSessions] = useState<readonly SessionSummaryRow[] | null>(null);
  const [overviews, setOverviews] = useState<ReadonlyMap<string, SessionOverview>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [pages, setPages] = useState(1);
  const [hasMore, setHasMore] = useState(false);
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const r = await loadSessionPages(call, pages);
      if (!current) return;
      if (!r.ok) setError(r.error);
      else {
        setError(null);
        setSessions(r.sessions);
        setHasMore(r.more);
        const ids = r.sessions.map((s) => s.sessionId);
        const got = new Map<string, SessionOverview>();
        for (let i = 0; i < ids.length; i += 100) {
          const o = await consoleClient.fetchOverview(ids.slice(i, i + 100)).catch(() => null);
          for (const x of o ?? []) got.set(x.sessionId, x);
        }
        if (current) setOverviews(got);
      }
      if (current) timer = setTimeout(() => void load(), everyMs);
    };
    void load();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [pages]);
  return { sessions, overviews, error, more: hasMore ? () => setPages((p) => p + 1) : null };
};

/** The button that shows the next page of sessions, and how many are shown. */
const More = ({ shown, more }: { shown: number; more: (() => void) | null }) =>
  more === null ? null : (
    <p class="more-sessions">
      {shown} sessions shown (the most recently created; search and sort apply to these).{' '}
      <button type="button" class="link" onClick={more}>
        Show {SESSIONS_PAGE} more
      </button>
    </p>
  );

const StatusChips = ({ row }: { row: SessionListRow }) => (
  <span class="chips">
    <span class={`chip ${row.status === 'running' ? 'chip-ok' : row.status === 'parked' ? 'chip-warn' : 'chip-muted'}`} data-status={row.status}>
      {row.status}
    </span>
    {row.brokenChain ? (
      <>
        {' '}
        <span class="chip chip-bad" data-broken-chain>
          broken chain
        </span>
      </>
    ) : null}
  </span>
);

const Links = ({ s }: { s: SessionSummaryRow }) => (
  <span class="links">
    <a href={`#/audit/${encodeURIComponent(s.sessionId)}`} aria-label={`Audit ${s.sessionId}`}>
      Audit
    </a>
    {s.parentSessionId !== undefined && s.kind !== 'ordinary' ? (
      <a href={`#/child/${encodeURIComponent(s.parentSessionId)}/${encodeURIComponent(s.sessionId)}`} aria-label={`Open child ${s.sessionId}`}>
        Open
      </a>
    ) : (
      <a href={`#/live/${encodeURIComponent(s.sessionId)}`} aria-label={`Live ${s.sessionId}`}>
        Live
      </a>
    )}
  </span>
);

const Tools = ({ query, setQuery, sort, setSort, id }: { query: string; setQuery: (q: string) => void; sort: SessionSort; setSort: (s: SessionSort) => void; id: string }) => (
  <div class="session-tools">
    <label class="visually-hidden" for={`${id}-search`}>
      Search sessions
    </label>
    <input id={`${id}-search`} type="search" placeholder="Search id, actor, text" value={query} onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
    <label for={`${id}-sort`}>Sort</label>
    <select id={`${id}-sort`} value={sort} onChange={(e) => setSort((e.currentTarget as HTMLSelectElement).value as SessionSort)}>
      <option value="activity">last activity</option>
      <option value="created">created</option>
      <option value="events">events</option>
      <option value="id">id</option>
    </select>
  </div>
);

/** The sessions page: every session of the store with its activity, counts and status; search, sort, children under parents. */
export const SessionsView = ({ go }: { go: (hash: string) => void }) => {
  const { sessions, overviews, error, more } = useSessions();
  const [failure, setFailure] = useState<string | null>(null);
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<SessionSort>('activity');
  const [lineageOf, setLineageOf] = useState<string | null>(null);
  const now = Date.now();
  const create = async () => {
    const r = await call('session.create', {});
    if (r.ok) go(`#/live/${encodeURIComponent(r.value.sessionId)}`);
    else setFailure(r.error.message);
  };
  const rows = sessions ? sessionRows(sessions, overviews, query, sort) : [];
  return (
    <main class="sessions" aria-label="Sessions">
      <div class="view-head">
        <h1>Sessions</h1>
        <button type="button" class="primary" onClick={() => void create()}>
          New session
        </button>
      </div>
      {error || failure ? <p role="alert">{error ?? failure}</p> : null}
      <SessionFinder showLineage={setLineageOf} />
      {lineageOf !== null ? <LineagePanel sessionId={lineageOf} close={() => setLineageOf(null)} /> : null}
      <Tools query={query} setQuery={setQuery} sort={sort} setSort={setSort} id="sessions" />
      {sessions === null ? (
        <p role="status">Loading…</p>
      ) : sessions.length === 0 ? (
        <p>No sessions yet.</p>
      ) : (
        <div class="card table-wrap">
          <table>
            <caption class="visually-hidden">Sessions in this store</caption>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Status</th>
                <th scope="col">Last activity</th>
                <th scope="col">Events</th>
                <th scope="col">Turns</th>
                <th scope="col">Pending</th>
                <th scope="col">Actors</th>
                <th scope="col">Open</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const { session: s, overview: o, depth } = row;
                return (
                  <tr key={s.sessionId} data-session={s.sessionId} data-parent={s.parentSessionId ?? ''} data-depth={depth}>
                    <td style={{ paddingLeft: `${0.5 + depth * 1.5}rem` }}>
                      {depth > 0 ? <span aria-label={`child of ${s.parentSessionId}`}>↳ </span> : null}
                      <code>{s.sessionId}</code>
                      <div class="sub">{s.kind} · created {new Date(s.createdAt).toISOString().replace('T', ' ').slice(0, 19)}</div>
                    </td>
                    <td>
                      <StatusChips row={row} />
                    </td>
                    <td>{o ? ago(o.lastActivity, now) : '…'}</td>
                    <td>{o?.events ?? '…'}</td>
                    <td>{o?.turns ?? '…'}</td>
                    <td data-pending>{o ? o.pending.nextTurn + o.pending.nextStep : '…'}</td>
                    <td>{o?.actors.join(', ') || '—'}</td>
                    <td>
                      <Links s={s} />{' '}
                      <button type="button" class="link" onClick={() => setLineageOf(s.sessionId)} aria-label={`Lineage of ${s.sessionId}`}>
                        Lineage
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {rows.length === 0 ? <p class="empty">No session matches “{query}”.</p> : null}
          <More shown={sessions.length} more={more} />
        </div>
      )}
    </main>
  );
};

/** The sessions list beside a session: compact rows, the current one marked; search and sort as on the sessions page. */
export const SessionsSidebar = ({ current }: { current: string }) => {
  const { sessions, overviews, more } = useSessions(3000);
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<SessionSort>('activity');
  const now = Date.now();
  const rows = sessions ? sessionRows(sessions, overviews, query, sort) : [];
  return (
    <aside class="sidebar" aria-label="Sessions list">
      <h2>
        <a href="#/">Sessions</a>
      </h2>
      <Tools query={query} setQuery={setQuery} sort={sort} setSort={setSort} id="sidebar" />
      <ul class="session-list">
        {rows.map((row) => {
          const { session: s, overview: o, depth } = row;
          return (
            <li key={s.sessionId} class={`session-item${s.sessionId === current ? ' current' : ''}`} data-sidebar-session={s.sessionId} style={{ marginLeft: `${depth}rem` }} aria-current={s.sessionId === current ? 'page' : undefined}>
              <div class="row">
                <code class="text" title={s.sessionId}>
                  {s.sessionId}
                </code>
                <StatusChips row={row} />
              </div>
              <div class="stats">
                {o ? `${ago(o.lastActivity, now)} · ${o.events} events · ${o.turns} turns · ${o.pending.nextTurn + o.pending.nextStep} pending` : '…'}
              </div>
              <Links s={s} />
            </li>
          );
        })}
      </ul>
      <More shown={sessions?.length ?? 0} more={more} />
    </aside>
  );
};
