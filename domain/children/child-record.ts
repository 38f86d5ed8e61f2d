import { appendListItems, appendOne, emptyAppendList, type AppendList } from '../append-list.js';
import type { ChildMode, ChildStopReason } from './subagent-events.js';

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


/**
 * What a child record is made of while the log is folded: its epochs, reports and settlements as persistent
 * append-only lists, so an event that starts an epoch, ends the open one or adds a report costs O(1) however long
 * the child's history is (a copy of its arrays per event would make a log with one busy child quadratic).
 */
export interface ChildRecordParts {
  readonly childSessionId: string;
  readonly mode: ChildMode | null;
  /** Every epoch but the newest, in order (some may still be open in an unusual log). */
  readonly earlier: AppendList<ChildEpoch>;
  /** How many of `earlier` are still open (0 in any log the runtime writes: one run at a time). */
  readonly openEarlier: number;
  /** The newest epoch, or null before the first `subagent/start`. */
  readonly newest: ChildEpoch | null;
  readonly reports: AppendList<ChildMessage>;
  readonly settlements: AppendList<ChildMessage>;
}

const partsOf = new WeakMap<ChildRecord, ChildRecordParts>();

/** The empty parts of a child first named by the log. */
export const emptyChildParts = (childSessionId: string): ChildRecordParts => ({
  childSessionId,
  mode: null,
  earlier: emptyAppendList(),
  openEarlier: 0,
  newest: null,
  reports: emptyAppendList(),
  settlements: emptyAppendList(),
});

/** The parts a record was made from (every record of the children fold is made by {@link childRecordOf}). */
export const childRecordParts = (record: ChildRecord): ChildRecordParts =>
  partsOf.get(record) ?? {
    childSessionId: record.childSessionId,
    mode: record.mode,
    earlier: record.epochs.slice(0, -1).reduce((l, e) => appendOne(l, e), emptyAppendList<ChildEpoch>()),
    openEarlier: record.epochs.slice(0, -1).filter((e) => e.endSeq === null).length,
    newest: record.epochs.at(-1) ?? null,
    reports: record.reports.reduce((l, m) => appendOne(l, m), emptyAppendList<ChildMessage>()),
    settlements: record.settlements.reduce((l, m) => appendOne(l, m), emptyAppendList<ChildMessage>()),
  };

/**
 * A child record over its parts: a plain read-only record whose arrays are built the first time they are read
 * (O(length) once, then cached), so making one per event costs O(1). It reads, compares and serialises as the
 * plain record it stands for.
 */
export const childRecordOf = (parts: ChildRecordParts): ChildRecord => {
  let epochs: readonly ChildEpoch[] | null = null;
  let reports: readonly ChildMessage[] | null = null;
  let settlements: readonly ChildMessage[] | null = null;
  const record = Object.defineProperties({} as ChildRecord, {
    childSessionId: { value: parts.childSessionId, enumerable: true },
    mode: { value: parts.mode, enumerable: true },
    epochs: {
      enumerable: true,
      get: () => (epochs ??= Object.freeze(parts.newest === null ? [...appendListItems(parts.earlier)] : [...appendListItems(parts.earlier), parts.newest])),
    },
    reports: { enumerable: true, get: () => (reports ??= Object.freeze([...appendListItems(parts.reports)])) },
    settlements: { enumerable: true, get: () => (settlements ??= Object.freeze([...appendListItems(parts.settlements)])) },
  });
  partsOf.set(record, parts);
  return record;
};
