import type { SessionCreatedData, SessionKind } from '../domain/events.js';
import type { EventStore, RecordedEvent } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';

/** How a session came from its parent, and where in the parent's log. */
export type LineageBranch =
  /**
   * A fork: it inherited the parent's events up to `afterSeq` (inclusive; `seedLength` events), and its own events
   * start at `ownFromSeq` of its log (after its `session/created`, the seed copy and `session/end-seed`).
   */
  | { readonly how: 'fork'; readonly afterSeq: number; readonly seedLength: number; readonly ownFromSeq: number }
  /** A child session: the parent's `subagent/start` seqs that started (or restarted) it, one per epoch. */
  | { readonly how: 'child'; readonly startedAtSeqs: readonly number[] }
  /** A parent is named, but the log says nothing about how (no seed length, no `subagent/start` in the parent). */
  | { readonly how: 'unknown' };

/** One session in a lineage tree. */
export interface LineageNode {
  readonly session: string;
  readonly kind: SessionKind | null;
  readonly origin: 'user' | 'fork' | 'subagent' | null;
  readonly createdAt: number | null;
  /** Its parent as its `session/created` names it (null for a root). */
  readonly parent: string | null;
  /** Null for a root; else how it branched from `parent`. */
  readonly branch: LineageBranch | null;
  /** True when the parent it names is not in the store (archived, deleted): it is shown as a root. */
  readonly parentMissing: boolean;
  /** Its forks and children, oldest first. */
  readonly children: readonly LineageNode[];
}

/** The tree a session belongs to, from its root, and the session asked about. */
export interface SessionLineage {
  readonly format: 'steerlog-lineage';
  readonly version: 1;
  readonly session: string;
  /** Root first: the path from the root down to `session`. */
  readonly path: readonly string[];
  readonly root: LineageNode;
}

/** What one pass over a store's global order keeps of each session: its header and the children it started. */
interface SessionHeader {
  readonly session: string;
  readonly created: SessionCreatedData | null;
  readonly createdAt: number | null;
  /** childSessionId → seqs of this session's `subagent/start` events for it. */
  readonly starts: Map<string, number[]>;
}

/** The headers of every session of a store (one pass over its global order: O(events), O(sessions) kept). */
export const readSessionHeaders = async (store: EventStore): Promise<ReadonlyMap<string, SessionHeader>> => {
  const headers = new Map<string, SessionHeader>();
  const take = (e: RecordedEvent): void => {
    let h = headers.get(e.stream);
    if (h === undefined) {
      const created = e.revision === 0n && e.type === 'session/created' ? (e.data as SessionCreatedData) : null;
      h = { session: e.stream, created, createdAt: created?.createdAt ?? null, starts: new Map() };
      headers.set(e.stream, h);
    }
    if (e.type === 'subagent/start') {
      const child = (e.data as { childSessionId?: unknown }).childSessionId;
      if (typeof child === 'string') {
        const seqs = h.starts.get(child) ?? [];
        seqs.push(Number(e.revision));
        h.starts.set(child, seqs);
      }
    }
  };
  for await (const page of readAllPages(store)) for (const e of page) take(e);
  return headers;
};

/** The store holds no session by this id. */
export class LineageSessionNotFoundError extends Error {
  readonly code = 'session-not-found' as const;
  constructor(readonly session: string) {
    super(`no session ${session} in the store`);
    this.name = 'LineageSessionNotFoundError';
  }
}
/** Is this a {@link LineageSessionNotFoundError}? */
export const isLineageSessionNotFoundError = (e: unknown): e is LineageSessionNotFoundError => e instanceof LineageSessionNotFoundError;

/**
 * The lineage of `session` from the headers of a store's sessions: up its parents (as each `session/created` names
 * them) to the root, then down every fork and child of that root, each with where it branched — a fork after the
 * parent's seq `seedLength - 1`, a child at the parent's `subagent/start` seqs. A parent missing from the store makes
 * its child a root (`parentMissing`); a cycle of parents (only a hand-made store can hold one) stops at the session
 * met twice. Pure over the headers.
 */
export const lineageOf = (headers: ReadonlyMap<string, SessionHeader>, session: string): SessionLineage => {
  if (!headers.has(session)) throw new LineageSessionNotFoundError(session);
  const parentOf = (id: string): string | null => headers.get(id)?.created?.parentSession ?? null;
  const up: string[] = [session];
  const onPath = new Set(up);
  for (let p = parentOf(session); p !== null && headers.has(p) && !onPath.has(p); p = parentOf(p)) {
    up.push(p);
    onPath.add(p);
  }
  const path = up.reverse();
  const kids = new Map<string, string[]>();
  for (const h of headers.values()) {
    const p = h.created?.parentSession;
    if (p === undefined || !headers.has(p)) continue;
    const list = kids.get(p) ?? [];
    list.push(h.session);
    kids.set(p, list);
  }
  const seen = new Set<string>();
  const node = (id: string, isRoot: boolean): LineageNode => {
    seen.add(id);
    const h = headers.get(id)!;
    const parent = h.created?.parentSession ?? null;
    const parentMissing = parent !== null && !headers.has(parent);
    const children = (kids.get(id) ?? [])
      .filter((c) => !seen.has(c))
      .sort((a, b) => (headers.get(a)!.createdAt ?? 0) - (headers.get(b)!.createdAt ?? 0) || (a < b ? -1 : a > b ? 1 : 0))
      .map((c) => node(c, false));
    return {
      session: id,
      kind: h.created?.kind ?? null,
      origin: h.created?.origin ?? null,
      createdAt: h.createdAt,
      parent,
      branch: isRoot && (parent === null || parentMissing) ? null : branchOf(h, parent === null ? undefined : headers.get(parent)),
      parentMissing,
      children,
    };
  };
  return { format: 'steerlog-lineage', version: 1, session, path, root: node(path[0]!, true) };
};

const branchOf = (h: SessionHeader, parent: SessionHeader | undefined): LineageBranch | null => {
  if (parent === undefined) return null;
  const seedLength = h.created?.seedLength;
  if (seedLength !== undefined && h.created?.origin !== 'subagent') {
    return { how: 'fork', afterSeq: seedLength - 1, seedLength, ownFromSeq: seedLength + 2 };
  }
  const starts = parent.starts.get(h.session);
  if (starts !== undefined) return { how: 'child', startedAtSeqs: starts };
  return { how: 'unknown' };
};

/** The lineage use case over a store: one pass over its global order, then {@link lineageOf}. */
export const sessionLineage = async (store: EventStore, session: string): Promise<SessionLineage> => lineageOf(await readSessionHeaders(store), session);
