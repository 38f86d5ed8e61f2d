import type { UserMessage } from '../message.js';
import { SlotDeque } from './slot-deque.js';

/**
 * One inbox list as a persistent value: every change returns a new PendingList and the old one never changes
 * for its holders. Internally the newest version owns a mutable SlotDeque; an older version keeps an undo
 * record pointing at its successor (Baker's persistent-array technique), so working on the newest version costs
 * what the SlotDeque costs, and reading an older version rebuilds it once, in O(n + versions since).
 */
export interface PendingList {
  readonly [pendingListBrand]: true;
}
declare const pendingListBrand: unique symbol;

interface Undo {
  readonly start: number;
  readonly insertedCount: number;
  readonly removed: readonly UserMessage[];
}

type Node = { kind: 'root'; deque: SlotDeque } | { kind: 'diff'; next: Version; undo: Undo };
interface Version {
  node: Node;
}

const version = (list: PendingList): Version => list as unknown as Version;
const make = (deque: SlotDeque): PendingList => ({ node: { kind: 'root', deque } }) as unknown as PendingList;

const EMPTY_DEQUE = new SlotDeque();
/** The empty list (shared; never mutated because every change to an empty list starts from a fresh deque). */
export const emptyPendingList: PendingList = make(EMPTY_DEQUE);

/** A pending list holding these items, in order. */
export const pendingListOf = (items: readonly UserMessage[]): PendingList =>
  items.length === 0 ? emptyPendingList : make(new SlotDeque(items));

/** The deque that holds this version's items, rebuilding it if a later version owns the mutable copy. */
const deque = (list: PendingList): SlotDeque => {
  const v = version(list);
  if (v.node.kind === 'root') return v.node.deque;
  const undos: Undo[] = [];
  let cursor: Version = v;
  while (cursor.node.kind === 'diff') {
    undos.push(cursor.node.undo);
    cursor = cursor.node.next;
  }
  const rebuilt = cursor.node.deque.copy();
  for (let i = undos.length - 1; i >= 0; i--) {
    const u = undos[i]!;
    rebuilt.spliceGeneral(u.start, u.insertedCount, u.removed);
  }
  v.node = { kind: 'root', deque: rebuilt };
  return rebuilt;
};

/** The number of items in a pending list. */
export const size = (list: PendingList): number => deque(list).size;
/** Whether a pending list holds an item with this id. */
export const has = (list: PendingList, id: string): boolean => deque(list).has(id);
/** Rank of a pending id, or -1. O(log n). */
export const indexOf = (list: PendingList, id: string): number => deque(list).rankOf(id);
/** The item at an index of a pending list, or undefined. */
export const at = (list: PendingList, index: number): UserMessage | undefined => deque(list).at(index);
/** A pending list's items as an array, in order. */
export const toArray = (list: PendingList): readonly UserMessage[] => deque(list).toArray();
/** `count` items of a pending list from `start`. */
export const slice = (list: PendingList, start: number, count: number): readonly UserMessage[] => deque(list).slice(start, count);

/**
 * Splice with exact coordinates (already normalized and validated: 0 <= start <= size, start + deleteCount <= size).
 * Returns the new list; `list` itself keeps its items.
 */
export const spliceExact = (
  list: PendingList,
  start: number,
  deleteCount: number,
  inserted: readonly UserMessage[],
): PendingList => {
  const d = deque(list);
  const n = d.size;
  if (deleteCount === 0 && inserted.length === 0) return list;
  if (deleteCount === n && start === 0) return pendingListOf(inserted);
  if (n === 0) return pendingListOf(inserted);

  // From here on the newest version mutates the shared deque and the old one keeps an undo record.
  const removed: UserMessage[] = [];
  if (deleteCount === 0 && start === n) {
    for (const m of inserted) d.push(m);
  } else if (deleteCount === 0 && start === 0) {
    for (let i = inserted.length - 1; i >= 0; i--) d.prepend(inserted[i]!);
  } else if (start === 0 && inserted.length === 0) {
    for (let i = 0; i < deleteCount; i++) removed.push(d.popFront());
  } else if (deleteCount === 1 && inserted.length === 1) {
    removed.push(d.replaceAt(start, inserted[0]!));
  } else if (deleteCount === 1 && inserted.length === 0) {
    removed.push(d.removeAt(start));
  } else {
    removed.push(...d.spliceGeneral(start, deleteCount, inserted));
  }
  const next = make(d);
  version(list).node = { kind: 'diff', next: version(next), undo: { start, insertedCount: inserted.length, removed } };
  return next;
};
