import type { HostResult } from '../../../host/schemas.js';

/** A session as `session.list` reports it. */
export type SessionSummaryRow = HostResult<'session.list'>['sessions'][number];

/** Oldest first: by `createdAt`, then id (the session catalog's order), whatever order the rows came in. */
const oldestFirst = (a: SessionSummaryRow, b: SessionSummaryRow): number => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0);

/**
 * Sessions as a tree: roots newest first, each followed by its children (oldest first, recursively, indented by
 * depth); sessions created in the same millisecond in the catalog's order (by id), reversed for roots, so the tree
 * does not depend on the order the pages listed them in. A child whose parent is not listed is shown as a root.
 */
export const treeOrder = (sessions: readonly SessionSummaryRow[]): { session: SessionSummaryRow; depth: number }[] => {
  const ids = new Set(sessions.map((s) => s.sessionId));
  const children = new Map<string, SessionSummaryRow[]>();
  for (const s of sessions) {
    if (s.parentSessionId === undefined || !ids.has(s.parentSessionId)) continue;
    children.set(s.parentSessionId, [...(children.get(s.parentSessionId) ?? []), s]);
  }
  const out: { session: SessionSummaryRow; depth: number }[] = [];
  const visit = (s: SessionSummaryRow, depth: number) => {
    out.push({ session: s, depth });
    for (const c of [...(children.get(s.sessionId) ?? [])].sort(oldestFirst)) visit(c, depth + 1);
  };
  const roots = sessions.filter((s) => s.parentSessionId === undefined || !ids.has(s.parentSessionId));
  for (const r of [...roots].sort((a, b) => oldestFirst(b, a))) visit(r, 0);
  return out;
};

