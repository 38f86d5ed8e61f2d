/**
 * A persistent append-only list for fold states that grow by appending (the ids a turn claimed, the claims not yet
 * in a step, the messages that entered a step): every version of a family shares one array and sees its first
 * `length` items. Appending to the newest version pushes in place — O(1) amortized, where a copy per append would
 * make a fold quadratic in the length of a turn — and an older version never changes for its holders: appending to
 * it copies its own prefix first (a branch, O(n) once). {@link sealedItems} hands the newest version's array out
 * whole, frozen: every version of the family then branches on its next append.
 */
export interface AppendList<T> {
  /** The items of this version: `items[0 … length)`. */
  readonly length: number;
  /** The shared array (read only the first `length` items). */
  readonly shared: readonly T[];
}

const EMPTY: AppendList<never> = Object.freeze({ length: 0, shared: Object.freeze([]) as readonly never[] });

/** The empty list (appending to it starts a new family). */
export const emptyAppendList = <T>(): AppendList<T> => EMPTY;

/** The list with `items` appended: O(items) on the newest version of a family, O(length + items) on an older one. */
export const appendAll = <T>(list: AppendList<T>, items: readonly T[]): AppendList<T> => {
  if (items.length === 0) return list;
  const shared = list.shared as T[];
  // the newest version owns the array's tail: push in place; any other (or a sealed one: a frozen array, the empty
  // one's included) branches
  const buffer = list.length === shared.length && !Object.isFrozen(shared) ? shared : shared.slice(0, list.length);
  for (const item of items) buffer.push(item);
  return { length: buffer.length, shared: buffer };
};

/** The list with `item` appended (see {@link appendAll}). */
export const appendOne = <T>(list: AppendList<T>, item: T): AppendList<T> => {
  const shared = list.shared as T[];
  const buffer = list.length === shared.length && !Object.isFrozen(shared) ? shared : shared.slice(0, list.length);
  buffer.push(item);
  return { length: buffer.length, shared: buffer };
};

/** The items of this version as an array of their own: O(length). */
export const appendListItems = <T>(list: AppendList<T>): readonly T[] => list.shared.slice(0, list.length);

/**
 * The items of this version as a read-only array without a copy when it is the newest version of its family: the
 * shared array itself, frozen, so that no version of the family ever pushes into it again (each branches on its
 * next append, O(length) once). An older version's items are copied (O(length)). For a list whose family is done
 * growing (a closed turn's claims): its holders keep reading it, and the array is held once, not twice.
 */
export const sealedItems = <T>(list: AppendList<T>): readonly T[] => {
  const shared = list.shared;
  if (list.length !== shared.length) return shared.slice(0, list.length);
  return Object.isFrozen(shared) ? shared : Object.freeze(shared as T[]);
};
