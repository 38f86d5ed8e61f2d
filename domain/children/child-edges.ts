import type { LogEvent, SessionCreatedData } from '../events.js';
import { PersistentMap } from '../persistent-map.js';
import type { ChildMode, ChildStopReason, SubagentEndData, SubagentStartData } from './subagent-events.js';

/** One activation epoch of a child, as the parent's log records it. */
export interface ChildEpoch {
  readonly epoch: number;
  readonly runId: string;
  readonly startSeq: number;
  /** seq of its `subagent/end`, or null while the epoch is open (or in a log written before ends were recorded for a parent that was gone). */
  readonly endSeq: number | null;
  readonly stopReason: ChildStopReason | null;
}

/** A message a child sent to this session: an explicit report or a settlement account, at the seq it was admitted. */
export interface ChildMessage {
  readonly seq: number;
  readonly messageId: string;
}

/** Everything the parent's log says about one child. */
export interface ChildRecord {
  readonly childSessionId: string;
  /** null when the log holds messages from the child but no `subagent/start` (e.g. a log cut before it). */
  readonly mode: ChildMode | null;
  readonly epochs: readonly ChildEpoch[];
  readonly reports: readonly ChildMessage[];
  readonly settlements: readonly ChildMessage[];
}

/** The children of a session, in order of first appearance in its log; plus the session's own place in a tree. */
export interface ChildrenState {
  readonly children: ReadonlyMap<string, ChildRecord>;
  /** For a child session: its parent, origin and depth from its header. */
  readonly lineage: { readonly parentSession: string; readonly origin: string | null; readonly delegationDepth: number | null } | null;
}

/** The empty children state. */
export const initialChildrenState = (): ChildrenState => ({ children: PersistentMap.empty(), lineage: null });

const recordOf = (state: ChildrenState, id: string): ChildRecord => state.children.get(id) ?? { childSessionId: id, mode: null, epochs: [], reports: [], settlements: [] };
/** The children as a persistent map: setting one child is O(1), however many the session has (a copy would be O(children)). */
const persistent = (children: ReadonlyMap<string, ChildRecord>): PersistentMap<string, ChildRecord> => {
  if (children instanceof PersistentMap) return children as PersistentMap<string, ChildRecord>;
  let map = PersistentMap.empty<string, ChildRecord>();
  for (const [id, record] of children) map = map.with(id, record);
  return map;
};
const withRecord = (state: ChildrenState, record: ChildRecord): ChildrenState => ({ children: persistent(state.children).with(record.childSessionId, record), lineage: state.lineage });

/**
 * One event into the children state: `subagent/start` opens an epoch, `subagent/end` closes it, and every insertion
 * of a message whose source is a child's report or settlement is recorded under that child. Events of other types
 * (and unrelated insertions) return the same state. Only the edges and sources are read: O(1) per event apart from
 * the inserted messages themselves.
 */
export const evolveChildren = (state: ChildrenState, event: LogEvent): ChildrenState => {
  switch (event.type) {
    case 'session/created': {
      const d = event.data as SessionCreatedData;
      if (d.parentSession === undefined) return state;
      return { ...state, lineage: { parentSession: d.parentSession, origin: d.origin ?? null, delegationDepth: d.delegationDepth ?? null } };
    }
    case 'subagent/start': {
      const d = event.data as SubagentStartData;
      const record = recordOf(state, d.childSessionId);
      return withRecord(state, { ...record, mode: d.mode, epochs: [...record.epochs, { epoch: d.epoch, runId: d.runId, startSeq: event.seq, endSeq: null, stopReason: null }] });
    }
    case 'subagent/end': {
      const d = event.data as SubagentEndData;
      const record = recordOf(state, d.childSessionId);
      const epochs = record.epochs.map((e) => (e.runId === d.runId && e.endSeq === null ? { ...e, endSeq: event.seq, stopReason: d.stopReason } : e));
      return withRecord(state, { ...record, epochs });
    }
    case 'agent/inbox/spliced': {
      let next = state;
      for (const m of (event.data as { inserted: readonly { id: string; source: { kind: string; senderSessionId?: unknown } }[] }).inserted) {
        const sender = m.source.senderSessionId;
        if (typeof sender !== 'string') continue;
        if (m.source.kind !== 'subagent-report' && m.source.kind !== 'subagent-settled') continue;
        const record = recordOf(next, sender);
        const entry = { seq: event.seq, messageId: m.id };
        next = withRecord(next, m.source.kind === 'subagent-report' ? { ...record, reports: [...record.reports, entry] } : { ...record, settlements: [...record.settlements, entry] });
      }
      return next;
    }
    default:
      return state;
  }
};

/** `evolveChildren` over a whole log. */
export const foldChildren = (events: Iterable<LogEvent>): ChildrenState => {
  let state = initialChildrenState();
  for (const e of events) state = evolveChildren(state, e);
  return state;
};
