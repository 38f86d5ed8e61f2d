/**
 * A persistent set of strings: `add` and `remove` return a new set and the old one never changes for its holders.
 * Like the pending lists, one version of a family owns a mutable Set (the root) and every other version keeps the
 * one-element change that leads from its neighbour back to it; reading a version moves the root to it, one O(1)
 * step per change in between, or copies the set when that way is longer than the set. Adding or removing on the
 * newest version is O(1).
 */
export interface PersistentSet {
  readonly [persistentSetBrand]: true;
}
declare const persistentSetBrand: unique symbol;

type Node = { kind: 'root'; set: Set<string> } | { kind: 'diff'; next: Version; id: string; present: boolean };
interface Version {
  node: Node;
}

const version = (s: PersistentSet): Version => s as unknown as Version;
const make = (set: Set<string>): PersistentSet => ({ node: { kind: 'root', set } }) as unknown as PersistentSet;

/** A new empty set (each call starts its own family). */
export const emptyPersistentSet = (): PersistentSet => make(new Set());

const setOf = (s: PersistentSet): Set<string> => {
  const v = version(s);
  if (v.node.kind === 'root') return v.node.set;
  const path: Version[] = [];
  let cursor = v;
  while (cursor.node.kind === 'diff') {
    path.push(cursor);
    cursor = cursor.node.next;
  }
  const root = cursor.node.set;
  const apply = (target: Set<string>, node: { id: string; present: boolean }): void => {
    if (node.present) target.add(node.id);
    else target.delete(node.id);
  };
  if (path.length > root.size + 64) {
    const copy = new Set(root);
    for (let i = path.length - 1; i >= 0; i--) apply(copy, path[i]!.node as { id: string; present: boolean });
    v.node = { kind: 'root', set: copy };
    return copy;
  }
  let holder: Version = cursor;
  for (let i = path.length - 1; i >= 0; i--) {
    const target = path[i]!;
    const diff = target.node as { id: string; present: boolean };
    const wasPresent = root.has(diff.id);
    apply(root, diff);
    holder.node = { kind: 'diff', next: target, id: diff.id, present: wasPresent };
    holder = target;
  }
  v.node = { kind: 'root', set: root };
  return root;
};

/** Whether the set holds this id. */
export const persistentSetHas = (s: PersistentSet, id: string): boolean => setOf(s).has(id);
/** The number of ids in the set. */
export const persistentSetSize = (s: PersistentSet): number => setOf(s).size;
/** The members, in insertion order: O(n). */
export const persistentSetValues = (s: PersistentSet): readonly string[] => [...setOf(s)];

const change = (s: PersistentSet, id: string, present: boolean): PersistentSet => {
  const set = setOf(s);
  if (set.has(id) === present) return s;
  if (present) set.add(id);
  else set.delete(id);
  const next = make(set);
  version(s).node = { kind: 'diff', next: version(next), id, present: !present };
  return next;
};

/**
 * `id` added to (`present`) or removed from the set itself, in place: for a fold that consumes each version (it never
 * reads an older version again, nor holds another version of this family). No version object, no diff: O(1).
 */
export const persistentSetChangeInPlace = (s: PersistentSet, id: string, present: boolean): void => {
  const set = setOf(s);
  if (present) set.add(id);
  else set.delete(id);
};

/** The set with `id` (the same value when it is already there). O(1) on the newest version. */
export const persistentSetAdd = (s: PersistentSet, id: string): PersistentSet => change(s, id, true);
/** The set without `id` (the same value when it is not there). O(1) on the newest version. */
export const persistentSetRemove = (s: PersistentSet, id: string): PersistentSet => change(s, id, false);
