import type { UserMessage } from '../message.js';
import { SlotDeque } from './slot-deque.js';

/**
 * One inbox list as a persistent value: every change returns a new PendingList and the old one never changes
 * for its holders. Internally exactly one version of a family owns a mutable SlotDeque (the root); every other
 * version keeps a diff — the splice that turns its neighbour towards the root back into it (Baker's persistent
 * arrays). Working on the root costs what the SlotDeque costs. Reading another version moves the root to it
 * ("rerooting"), undoing the splices in between, each through the deque's cheap paths: O(k log n) per splice of
 * k items. Only when the way back is longer than the list itself does the reader take a copy instead (O(n)), so
 * a reader that alternates between two far-apart versions never pays more than a copy per switch.
 */
export interface PendingList {
  readonly [pendingListBrand]: true;
}
declare const pendingListBrand: unique symbol;

/** The splice that turns the neighbour version's items into this version's items. */
interface Diff {
  readonly start: number;
  readonly deleteCount: number;
  readonly inserted: readonly UserMessage[];
}

type Node = { kind: 'root'; deque: SlotDeque } | { kind: 'diff'; next: Version; diff: Diff };
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

/** Diffs on the way from `v` to its family's root, nearest first, and the root's version. */
const pathToRoot = (v: Version): { readonly path: Version[]; readonly root: Version & { node: { kind: 'root' } }; readonly work: number } => {
  const path: Version[] = [];
  let work = 0;
  let cursor = v;
  while (cursor.node.kind === 'diff') {
    path.push(cursor);
    work += cursor.node.diff.deleteCount + cursor.node.diff.inserted.length + 1;
    cursor = cursor.node.next;
  }
  return { path, root: cursor as Version & { node: { kind: 'root' } }, work };
};

/** The deque that holds this version's items: moves the root here, or copies when that is the cheaper way. */
const deque = (list: PendingList): SlotDeque => {
  const v = version(list);
  if (v.node.kind === 'root') return v.node.deque;
  const { path, root, work } = pathToRoot(v);
  const d = root.node.deque;
  if (work > d.size + 64) {
    // Far from the root: this version gets its own copy; the family keeps its root.
    const copy = d.copy();
    for (let i = path.length - 1; i >= 0; i--) {
      const { start, deleteCount, inserted } = (path[i]!.node as { diff: Diff }).diff;
      copy.splice(start, deleteCount, inserted);
    }
    v.node = { kind: 'root', deque: copy };
    return copy;
  }
  // Reroot: walk from the root towards v, applying each diff and leaving the inverse diff behind.
  let holder: Version = root;
  for (let i = path.length - 1; i >= 0; i--) {
    const target = path[i]!;
    const { start, deleteCount, inserted } = (target.node as { diff: Diff }).diff;
    const removed = d.splice(start, deleteCount, inserted);
    holder.node = { kind: 'diff', next: target, diff: { start, deleteCount: inserted.length, inserted: removed } };
    holder = target;
  }
  v.node = { kind: 'root', deque: d };
  return d;
};

/** The number of items in a pending list. */
export const size = (list: PendingList): number => deque(list).size;
/** Whether a pending list holds an item with this id. */
export const has = (list: PendingList, id: string): boolean => deque(list).has(id);
/** Rank of a pending id, or -1. O(log n). */
export const indexOf = (list: PendingList, id: string): number => deque(list).rankOf(id);
/** The item at an index of a pending list, or undefined. */
export const at = (list: PendingList, index: number): UserMessage | undefined => deque(list).at(index);
/** Every item, in order: O(n), as any full read is. */
export const toArray = (list: PendingList): readonly UserMessage[] => deque(list).toArray();
/** `count` items of a pending list from `start`. */
export const slice = (list: PendingList, start: number, count: number): readonly UserMessage[] => deque(list).slice(start, count);

/** A new version and the items the splice removed from the old one. */
export interface SplicedList {
  readonly list: PendingList;
  readonly removed: readonly UserMessage[];
}

const NONE: readonly UserMessage[] = Object.freeze([]);

/**
 * Splice with exact coordinates (already normalized and validated: 0 <= start <= size, start + deleteCount <= size).
 * Returns the new list and the removed items; `list` itself keeps its items. O(k) amortized for appends, prepends,
 * removals from either end; O(log n) for one item replaced or removed by rank; O(n + k) otherwise.
 *
 * `consume` (default false) is for a fold that never reads a version again once it has the next one and holds no
 * other version of the list's family: the splice is then made in `list` itself, which becomes the new version (the
 * returned `list` may be the same value), instead of leaving `list` a diff that points to a new version. A long
 * fold's old versions then form no chain from the oldest to the newest — a chain that, once one old version is in
 * the garbage collector's old generation, keeps every later version and every removed item alive through each
 * young-generation collection, to be copied and promoted.
 */
export const spliceRemoving = (list: PendingList, start: number, deleteCount: number, inserted: readonly UserMessage[], consume = false): SplicedList => {
  if (deleteCount === 0 && inserted.length === 0) return { list, removed: NONE };
  const d = deque(list);
  const n = d.size;
  if (deleteCount === n && start === 0) return { list: pendingListOf(inserted), removed: d.slice(0, n) };
  if (n === 0) return { list: pendingListOf(inserted), removed: NONE };
  const removed = d.splice(start, deleteCount, inserted);
  // consumed: `list` itself is the new version (no version object, no diff: see the doc above)
  if (consume) return { list, removed };
  // From here on the new version takes the deque as its root and the old one keeps the inverse diff.
  const next = make(d);
  version(list).node = { kind: 'diff', next: version(next), diff: { start, deleteCount: inserted.length, inserted: removed } };
  return { list: next, removed };
};

/** `spliceRemoving` without the removed items. */
export const spliceExact = (list: PendingList, start: number, deleteCount: number, inserted: readonly UserMessage[]): PendingList =>
  spliceRemoving(list, start, deleteCount, inserted).list;
