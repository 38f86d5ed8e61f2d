import type { LogEvent, SessionCreatedData } from '../events.js';
import { appendOne, emptyAppendList } from '../append-list.js';
import { emptyChildParts, type ChildEpoch, type ChildRecord, type ChildRecordParts } from './child-record.js';
import { ChildRecordMap } from './child-record-map.js';
import type { ChildStopReason, SubagentEndData, SubagentStartData } from './subagent-events.js';

export type { ChildEpoch, ChildMessage, ChildRecord } from './child-record.js';

/** The children of a session, in order of first appearance in its log; plus the session's own place in a tree. */
export interface ChildrenState {
  readonly children: ReadonlyMap<string, ChildRecord>;
  /** For a child session: its parent, origin and depth from its header. */
  readonly lineage: { readonly parentSession: string; readonly origin: string | null; readonly delegationDepth: number | null } | null;
}

/** The empty children state. */
export const initialChildrenState = (): ChildrenState => ({ children: ChildRecordMap.empty(), lineage: null });

/**
 * The children as a map of parts: setting one child is O(1), however many the session has (a copy would be
 * O(children)), and no record is built per event (a record is made when it is read).
 */
const partsMap = (children: ReadonlyMap<string, ChildRecord>): ChildRecordMap => ChildRecordMap.of(children);
const partsIn = (state: ChildrenState, id: string): ChildRecordParts => partsMap(state.children).partsOf(id) ?? emptyChildParts(id);
const withParts = (state: ChildrenState, parts: ChildRecordParts): ChildrenState => ({
  children: partsMap(state.children).withParts(parts),
  lineage: state.lineage,
});

/** The parts with the open epoch of `runId` closed at `seq`: O(1) unless earlier epochs are still open. */
const closeEpoch = (parts: ChildRecordParts, runId: string, seq: number, stopReason: ChildStopReason): ChildRecordParts => {
  const close = (e: ChildEpoch): ChildEpoch => (e.runId === runId && e.endSeq === null ? { ...e, endSeq: seq, stopReason } : e);
  const newest = parts.newest === null ? null : close(parts.newest);
  if (parts.openEarlier === 0) return newest === parts.newest ? parts : { ...parts, newest };
  // Earlier epochs still open (two runs open at once: not something the runtime writes): close this run's among
  // them by rebuilding the earlier list, O(epochs) for such an end.
  const items = parts.earlier.shared.slice(0, parts.earlier.length).map(close);
  const earlier = items.reduce((l, x) => appendOne(l, x), emptyAppendList<ChildEpoch>());
  return { ...parts, earlier, openEarlier: items.filter((e) => e.endSeq === null).length, newest };
};

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
      const parts = partsIn(state, d.childSessionId);
      const earlier = parts.newest === null ? parts.earlier : appendOne(parts.earlier, parts.newest);
      const openEarlier = parts.openEarlier + (parts.newest !== null && parts.newest.endSeq === null ? 1 : 0);
      return withParts(state, { ...parts, mode: d.mode, earlier, openEarlier, newest: { epoch: d.epoch, runId: d.runId, startSeq: event.seq, endSeq: null, stopReason: null } });
    }
    case 'subagent/end': {
      const d = event.data as SubagentEndData;
      return withParts(state, closeEpoch(partsIn(state, d.childSessionId), d.runId, event.seq, d.stopReason));
    }
    case 'agent/inbox/spliced': {
      let next = state;
      const inserted = (event.data as { inserted: readonly { id: string; source: { kind: string; senderSessionId?: unknown } }[] }).inserted;
      // (an indexed loop: no iterator per splice, and a splice is most events of a log)
      for (let i = 0; i < inserted.length; i++) {
        const m = inserted[i]!;
        const sender = m.source.senderSessionId;
        if (typeof sender !== 'string') continue;
        if (m.source.kind !== 'subagent-report' && m.source.kind !== 'subagent-settled') continue;
        const parts = partsIn(next, sender);
        const entry = { seq: event.seq, messageId: m.id };
        next = withParts(
          next,
          m.source.kind === 'subagent-report' ? { ...parts, reports: appendOne(parts.reports, entry) } : { ...parts, settlements: appendOne(parts.settlements, entry) },
        );
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
