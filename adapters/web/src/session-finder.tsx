import { useEffect, useState } from 'preact/hooks';
import type { LineageNode, SessionLineage } from '../../../audit/session-lineage.js';
import type { SearchResult } from '../../../audit/session-search.js';
import { findingClient } from './finding-api.js';
import './session-finder.css';

/** Where a lineage node branched from its parent, in words (as `steerlog lineage` prints it). */
const branchText = (n: LineageNode): string => {
  if (n.parentMissing) return `parent ${n.parent} not in the store`;
  const b = n.branch;
  if (b === null) return 'root';
  switch (b.how) {
    case 'fork':
      return `fork of ${n.parent} after its seq ${b.afterSeq}`;
    case 'child':
      return `child of ${n.parent}, started at its seq ${b.startedAtSeqs.join(', ')}`;
    case 'unknown':
      return `from ${n.parent}`;
  }
};

const LineageTree = ({ node, marked }: { node: LineageNode; marked: string }) => (
  <li data-lineage-session={node.session} aria-current={node.session === marked ? 'true' : undefined}>
    <a href={`#/audit/${encodeURIComponent(node.session)}`}>
      <code>{node.session}</code>
    </a>{' '}
    <span class="sub">
      {node.kind ?? '?'} · {branchText(node)}
    </span>
    {node.children.length > 0 ? (
      <ul>
        {node.children.map((c) => (
          <LineageTree key={c.session} node={c} marked={marked} />
        ))}
      </ul>
    ) : null}
  </li>
);

/** The tree of forks and children `sessionId` belongs to (`steerlog lineage --json`), or why it could not be read. */
export const LineagePanel = ({ sessionId, close }: { sessionId: string; close: () => void }) => {
  const [lineage, setLineage] = useState<SessionLineage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    setLineage(null);
    setError(null);
    findingClient.lineage(sessionId).then(
      (l) => current && setLineage(l),
      (e: unknown) => current && setError((e as Error).message),
    );
    return () => {
      current = false;
    };
  }, [sessionId]);
  return (
    <section class="card lineage" aria-label={`Lineage of ${sessionId}`}>
      <div class="view-head">
        <h2>Lineage of {sessionId}</h2>
        <button type="button" onClick={close}>
          Close
        </button>
      </div>
      {error ? <p role="alert">{error}</p> : lineage === null ? <p role="status">Loading…</p> : <ul class="lineage-tree">{<LineageTree node={lineage.root} marked={sessionId} />}</ul>}
    </section>
  );
};

/**
 * Full-text search over every session's events (`steerlog search --json` on the host's store): the hits with their
 * session, seq, type and snippet, each session's audit and lineage one click away.
 */
export const SessionFinder = ({ showLineage }: { showLineage: (sessionId: string) => void }) => {
  const [text, setText] = useState('');
  const [type, setType] = useState('');
  const [result, setResult] = useState<SearchResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const search = async (e: Event) => {
    e.preventDefault();
    if (text.trim() === '') return;
    setBusy(true);
    setError(null);
    try {
      setResult(await findingClient.search({ text, ...(type ? { type } : {}), limit: 50 }));
    } catch (err) {
      setError((err as Error).message);
      setResult(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="finder" aria-label="Full-text search">
      <form class="session-tools" role="search" onSubmit={(e) => void search(e)}>
        <label for="finder-text">Search events</label>
        <input id="finder-text" type="search" placeholder="words in messages, answers, tool calls" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
        <label for="finder-type">Type</label>
        <select id="finder-type" value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">text events</option>
          <option value="user/message">user messages</option>
          <option value="assistant/message">answers</option>
          <option value="tool/call,tool/result">tool calls and results</option>
          <option value="agent/inbox/spliced">admissions</option>
        </select>
        <button type="submit" disabled={busy}>
          Search
        </button>
      </form>
      {error ? <p role="alert">{error}</p> : null}
      {result ? (
        <div class="card finder-results" data-search-total={result.total}>
          <p role="status">
            {result.total} hit{result.total === 1 ? '' : 's'}
            {result.total > result.hits.length ? ` (${result.hits.length} shown)` : ''} in {result.sessions.length} session{result.sessions.length === 1 ? '' : 's'}; {result.scanned} events scanned
            {result.sealedUnsearched > 0 ? `; ${result.sealedUnsearched} sealed without a key, not searched` : ''}
          </p>
          <ul class="finder-hits">
            {result.hits.map((h) => (
              <li key={`${h.session}:${h.seq}`} data-hit={`${h.session}:${h.seq}`}>
                <a href={`#/audit/${encodeURIComponent(h.session)}`}>
                  <code>{h.session}</code>
                </a>{' '}
                <span class="sub">
                  seq {h.seq} · {h.type} · {new Date(h.time).toISOString().replace('T', ' ').slice(0, 19)}
                  {h.actor ? ` · ${h.actor}` : ''}
                </span>{' '}
                <button type="button" class="link" onClick={() => showLineage(h.session)} aria-label={`Lineage of ${h.session}`}>
                  Lineage
                </button>
                <div class="snippet">{h.snippet}</div>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
};
