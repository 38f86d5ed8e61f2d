import type { UserMessage } from '../message.js';

/** The most items one chunk holds; a chunk that grows past it is cut in two. */
export const CHUNK_MAX = 64;
/** A chunk left with fewer items than this after a removal is merged with a neighbour when both fit in one. */
export const CHUNK_MIN = 16;
/** How many items a chunk gets when a list is built from an array (room left for insertions). */
export const CHUNK_FILL = 48;

/**
 * One node of a chunk treap: a run of consecutive items of the list (1..CHUNK_MAX of them, in order), the number
 * of items in its subtree, its children and its parent (for the rank of an id).
 */
export interface ChunkNode {
  items: UserMessage[];
  readonly priority: number;
  size: number;
  left: ChunkNode | null;
  right: ChunkNode | null;
  parent: ChunkNode | null;
}

/** Where each item's chunk is, by id: kept up to date by every operation that moves items between chunks. */
export type ChunkOfId = Map<string, ChunkNode>;

/** The number of items in a subtree. */
export const sizeOf = (n: ChunkNode | null): number => (n === null ? 0 : n.size);

/** A chunk of `items` (which it takes, not copies), with no children, each item's home set to it. */
export const chunkNode = (items: UserMessage[], priority: number, home: ChunkOfId): ChunkNode => {
  const node: ChunkNode = { items, priority, size: items.length, left: null, right: null, parent: null };
  for (let i = 0; i < items.length; i++) home.set(items[i]!.id, node);
  return node;
};

/** Recomputes `n`'s size from its chunk and children and points them back at it. */
export const update = (n: ChunkNode): ChunkNode => {
  n.size = n.items.length + sizeOf(n.left) + sizeOf(n.right);
  if (n.left !== null) n.left.parent = n;
  if (n.right !== null) n.right.parent = n;
  return n;
};

/** Joins two treaps, every item of `a` before every item of `b`. */
export const merge = (a: ChunkNode | null, b: ChunkNode | null): ChunkNode | null => {
  if (a === null) return b;
  if (b === null) return a;
  if (a.priority >= b.priority) {
    a.right = merge(a.right, b);
    return update(a);
  }
  b.left = merge(a, b.left);
  return update(b);
};

/**
 * Cuts a treap into its first `k` items and the rest. A chunk that straddles the cut is cut too: its tail goes to
 * a new chunk with the same priority, which takes the old chunk's right subtree (so the heap order holds).
 */
export const split = (n: ChunkNode | null, k: number, home: ChunkOfId): [ChunkNode | null, ChunkNode | null] => {
  if (n === null) return [null, null];
  const leftSize = sizeOf(n.left);
  if (k <= leftSize) {
    const parts = split(n.left, k, home);
    const a = parts[0];
    n.left = parts[1];
    update(n);
    if (a !== null) a.parent = null;
    return [a, n];
  }
  const own = n.items.length;
  if (k >= leftSize + own) {
    const parts = split(n.right, k - leftSize - own, home);
    const b = parts[1];
    n.right = parts[0];
    update(n);
    if (b !== null) b.parent = null;
    return [n, b];
  }
  const cut = k - leftSize;
  const tail = chunkNode(n.items.slice(cut), n.priority, home);
  n.items.length = cut;
  tail.right = n.right;
  n.right = null;
  update(n);
  update(tail);
  n.parent = null;
  return [n, tail];
};

/** Calls `visit` on every chunk of a treap, in order (iteratively: no recursion over the depth). */
export const eachChunk = (n: ChunkNode | null, visit: (chunk: ChunkNode) => void): void => {
  const stack: ChunkNode[] = [];
  let cursor = n;
  while (cursor !== null || stack.length > 0) {
    while (cursor !== null) {
      stack.push(cursor);
      cursor = cursor.left;
    }
    const top = stack.pop()!;
    visit(top);
    cursor = top.right;
  }
};

/** Appends every item of a treap, in order, to `out`. */
export const collectItems = (n: ChunkNode | null, out: UserMessage[]): void =>
  eachChunk(n, (chunk) => {
    for (let i = 0; i < chunk.items.length; i++) out.push(chunk.items[i]!);
  });

/** Adds `delta` to the size of `n` and of every ancestor of it. */
export const addToSizes = (n: ChunkNode | null, delta: number): void => {
  for (let a = n; a !== null; a = a.parent) a.size += delta;
};

/** The rank of the first item of chunk `n` in the whole treap: O(depth). */
export const rankOfChunk = (n: ChunkNode): number => {
  let rank = sizeOf(n.left);
  for (let c = n; c.parent !== null; c = c.parent) {
    if (c.parent.right === c) rank += sizeOf(c.parent.left) + c.parent.items.length;
  }
  return rank;
};

/** The chunk just after `n` in order, or null: O(depth). */
export const nextChunk = (n: ChunkNode): ChunkNode | null => {
  if (n.right !== null) {
    let c = n.right;
    while (c.left !== null) c = c.left;
    return c;
  }
  let c = n;
  while (c.parent !== null && c.parent.right === c) c = c.parent;
  return c.parent;
};

/** The chunk just before `n` in order, or null: O(depth). */
export const previousChunk = (n: ChunkNode): ChunkNode | null => {
  if (n.left !== null) {
    let c = n.left;
    while (c.right !== null) c = c.right;
    return c;
  }
  let c = n;
  while (c.parent !== null && c.parent.left === c) c = c.parent;
  return c.parent;
};

/**
 * A treap of `items` in order, in chunks of CHUNK_FILL, each chunk's priority from `priority`: O(k) (each chunk
 * merged on the right spine of the treap built so far, then every size computed once, children first).
 */
export const buildTreap = (items: readonly UserMessage[], priority: () => number, home: ChunkOfId): ChunkNode | null => {
  const spine: ChunkNode[] = [];
  for (let from = 0; from < items.length; from += CHUNK_FILL) {
    const node = chunkNode(items.slice(from, from + CHUNK_FILL), priority(), home);
    // the new chunk takes the spine's lower-priority tail as its left child
    let last: ChunkNode | null = null;
    while (spine.length > 0 && spine[spine.length - 1]!.priority < node.priority) last = spine.pop()!;
    node.left = last;
    if (spine.length > 0) spine[spine.length - 1]!.right = node;
    spine.push(node);
  }
  if (spine.length === 0) return null;
  const top = spine[0]!;
  const order: ChunkNode[] = [];
  const stack: ChunkNode[] = [top];
  while (stack.length > 0) {
    const n = stack.pop()!;
    order.push(n);
    if (n.left !== null) stack.push(n.left);
    if (n.right !== null) stack.push(n.right);
  }
  // `order` lists every node after its parent, so walking it backwards updates children before their parents.
  for (let i = order.length - 1; i >= 0; i--) update(order[i]!);
  top.parent = null;
  return top;
};

/**
 * Puts a chunk (not in the treap yet) at `rank`, a boundary between chunks, and returns the root: walks down while
 * the nodes' priorities are at least the new one's (counting its items into their sizes), then the new node takes
 * the place of the subtree there, split at the rank into its two children. O(log n) expected.
 */
export const insertChunk = (root: ChunkNode | null, rank: number, node: ChunkNode, home: ChunkOfId): ChunkNode => {
  let parent: ChunkNode | null = null;
  let onLeft = false;
  let cursor = root;
  let k = rank;
  while (cursor !== null && cursor.priority >= node.priority) {
    cursor.size += node.size;
    parent = cursor;
    const leftSize = sizeOf(cursor.left);
    onLeft = k <= leftSize;
    if (onLeft) cursor = cursor.left;
    else {
      k -= leftSize + cursor.items.length;
      cursor = cursor.right;
    }
  }
  const parts = split(cursor, k, home);
  node.left = parts[0];
  node.right = parts[1];
  update(node);
  node.parent = parent;
  if (parent === null) return node;
  if (onLeft) parent.left = node;
  else parent.right = node;
  return root!;
};

/**
 * Takes an emptied chunk (the sizes above it already without its items) out of the treap and returns the root:
 * its subtrees are merged in its place.
 */
export const unlinkChunk = (root: ChunkNode | null, chunk: ChunkNode): ChunkNode | null => {
  const parent = chunk.parent;
  const replacement = merge(chunk.left, chunk.right);
  if (replacement !== null) replacement.parent = parent;
  chunk.left = null;
  chunk.right = null;
  chunk.parent = null;
  if (parent === null) return replacement;
  if (parent.left === chunk) parent.left = replacement;
  else parent.right = replacement;
  return root;
};
