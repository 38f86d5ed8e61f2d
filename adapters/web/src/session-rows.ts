import type { SessionOverview } from '../../http/console-overview.js';
import { treeOrder, type SessionSummaryRow } from './session-tree.js';

/** A session's status chips: what it is doing, and a broken chain. */
export type SessionStatus = 'running' | 'idle' | 'parked' | 'ended';

/** running: a turn runs here; parked: inputs wait and nothing runs them; idle: live here, nothing waits; ended: stored, not live here. */
export const statusOf = (s: SessionSummaryRow, o: SessionOverview | undefined): SessionStatus => {
  if (s.running) return 'running';
  const pending = o ? o.pending.nextTurn + o.pending.nextStep : 0;
  if (pending > 0) return 'parked';
  return s.live ? 'idle' : 'ended';
};

/** How the list is sorted (roots only: children stay under their parent, oldest first). */
export type SessionSort = 'activity' | 'created' | 'events' | 'id';

/** One row of the sessions list. */
export interface SessionListRow {
  readonly session: SessionSummaryRow;
  readonly overview: SessionOverview | undefined;
  readonly depth: number;
  readonly status: SessionStatus;
  readonly brokenChain: boolean;
}

const keyOf = (sort: SessionSort, s: SessionSummaryRow, o: SessionOverview | undefined): number | string =>
  sort === 'activity' ? -(o?.lastActivity ?? s.createdAt) : sort === 'created' ? -s.createdAt : sort === 'events' ? -(o?.events ?? 0) : s.sessionId;

/**
 * The sessions list: matching `query` (case-insensitive, in the id, an actor or the message text; a child that
 * matches keeps its parents shown), roots sorted by `sort`, each followed by its children (the tree of
 * `treeOrder`).
 */
export const sessionRows = (sessions: readonly SessionSummaryRow[], overviews: ReadonlyMap<string, SessionOverview>, query: string, sort: SessionSort): SessionListRow[] => {
  const q = query.trim().toLowerCase();
  const byId = new Map(sessions.map((s) => [s.sessionId, s]));
  const keep = new Set<string>();
  for (const s of sessions) {
    const o = overviews.get(s.sessionId);
    const hit = q === '' || s.sessionId.toLowerCase().includes(q) || (o?.actors ?? []).some((a) => a.toLowerCase().includes(q)) || (o?.text ?? '').toLowerCase().includes(q);
    if (!hit) continue;
    for (let cur: SessionSummaryRow | undefined = s; cur && !keep.has(cur.sessionId); cur = cur.parentSessionId !== undefined ? byId.get(cur.parentSessionId) : undefined) keep.add(cur.sessionId);
  }
  const tree = treeOrder(sessions.filter((s) => keep.has(s.sessionId)));
  // sort the roots' blocks (a root and its subtree) by the root's key
  const blocks: { session: SessionSummaryRow; depth: number }[][] = [];
  for (const r of tree) (r.depth === 0 ? blocks.push([r]) : blocks.at(-1)!.push(r));
  const k = (b: { session: SessionSummaryRow }[]) => keyOf(sort, b[0]!.session, overviews.get(b[0]!.session.sessionId));
  blocks.sort((a, b) => {
    const x = k(a);
    const y = k(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return blocks.flat().map(({ session, depth }) => {
    const o = overviews.get(session.sessionId);
    return { session, overview: o, depth, status: statusOf(session, o), brokenChain: o?.chain === 'broken' || o?.chain === 'unreadable' };
  });
};
