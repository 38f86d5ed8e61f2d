import type { UserMessage } from '../message.js';
import { reportListWalk } from './list-work.js';

/** Splices that insert or remove at most this many items (and do not do both) go item by item. */
const FEW = 4;

/** One item of the tree, with its subtree's size and its parent (for the rank of an id). */
interface TreeNode {
  readonly item: UserMessage;
  readonly priority: number;
  size: number;
  left: TreeNode | null;
  right: TreeNode | null;
  parent: TreeNode | null;
}

const sizeOf = (n: TreeNode | null): number => (n === null ? 0 : n.size);

/** Recomputes `n`'s size from its children and points them back at it. */
const update = (n: TreeNode): TreeNode => {
  n.size = 1 + sizeOf(n.left) + sizeOf(n.right);
  if (n.left !== null) n.left.parent = n;
  if (n.right !== null) n.right.parent = n;
  return n;
};

/** Joins two trees, every item of `a` before every item of `b`. */
const merge = (a: TreeNode | null, b: TreeNode | null): TreeNode | null => {
  if (a === null) return b;
  if (b === null) return a;
  if (a.priority >= b.priority) {
    a.right = merge(a.right, b);
    return update(a);
  }
  b.left = merge(a, b.left);
  return update(b);
};

/** Cuts a tree into its first `k` items and the rest. */
const split = (n: TreeNode | null, k: number): [TreeNode | null, TreeNode | null] => {
  if (n === null) return [null, null];
  const leftSize = sizeOf(n.left);
  if (k <= leftSize) {
    const parts = split(n.left, k);
    const a = parts[0];
    n.left = parts[1];
    update(n);
    if (a !== null) a.parent = null;
    return [a, n];
  }
  const parts = split(n.right, k - leftSize - 1);
  const b = parts[1];
  n.right = parts[0];
  update(n);
  if (b !== null) b.parent = null;
  return [n, b];
};

/** Appends the items of `n`, in order, to `out` (iteratively: a degenerate tree must not overflow the stack). */
const collect = (n: TreeNode | null, out: UserMessage[], forget?: Map<string, TreeNode>): void => {
  const stack: TreeNode[] = [];
  let cursor = n;
  while (cursor !== null || stack.length > 0) {
    while (cursor !== null) {
      stack.push(cursor);
      cursor = cursor.left;
    }
    const top = stack.pop()!;
    out.push(top.item);
    forget?.delete(top.item.id);
    cursor = top.right;
  }
};

/**
 * The items of one inbox list as an implicit treap: a binary tree ordered by rank, balanced by pseudo-random
 * priorities, each node knowing its subtree's size and its parent. Every operation costs O(log n) expected plus
 * the items it inserts or removes — in particular a splice anywhere in the list, which the slot deque can only do
 * by rebuilding (O(n)). The priorities come from a seeded generator, so the shape (and so the work) of a fold is
 * the same on every run; they never affect which items the list holds or their order.
 */
export class RankTree {
  private root: TreeNode | null = null;
  private readonly nodeOfId = new Map<string, TreeNode>();
  private seed: number;

  /** A tree holding `items` in order; `seed` picks the (deterministic) priorities. */
  constructor(items: readonly UserMessage[] = [], seed = 0x2545f491) {
    this.seed = seed | 0 || 1;
    this.root = this.build(items);
  }

  get size(): number {
    return sizeOf(this.root);
  }

  has(id: string): boolean {
    return this.nodeOfId.has(id);
  }

  /** Rank of a pending id, or -1: O(log n). */
  rankOf(id: string): number {
    let n = this.nodeOfId.get(id);
    if (n === undefined) return -1;
    let rank = sizeOf(n.left);
    while (n.parent !== null) {
      if (n.parent.right === n) rank += sizeOf(n.parent.left) + 1;
      n = n.parent;
    }
    return rank;
  }

  /** The item at `rank`, or undefined: O(log n). */
  at(rank: number): UserMessage | undefined {
    return rank < 0 || rank >= this.size ? undefined : this.nodeAt(rank).item;
  }

  /** The node at `rank` (0 <= rank < size): a walk down from the root by the subtrees' sizes. */
  private nodeAt(rank: number): TreeNode {
    let n = this.root!;
    let k = rank;
    for (;;) {
      const leftSize = sizeOf(n.left);
      if (k < leftSize) n = n.left!;
      else if (k === leftSize) return n;
      else {
        k -= leftSize + 1;
        n = n.right!;
      }
    }
  }

  /** Every item, in order: O(n). */
  toArray(): UserMessage[] {
    reportListWalk('read-all', this.size);
    const out: UserMessage[] = [];
    collect(this.root, out);
    return out;
  }

  /** Items at ranks [start, start + count): O(log n + count). */
  slice(start: number, count: number): UserMessage[] {
    const out: UserMessage[] = [];
    if (count <= 0 || start >= this.size) return out;
    // Walk down to `start`, keeping the ancestors whose item comes after it; then an in-order walk from there.
    const stack: TreeNode[] = [];
    let n = this.root;
    let k = start;
    while (n !== null) {
      const leftSize = sizeOf(n.left);
      if (k < leftSize) {
        stack.push(n);
        n = n.left;
      } else if (k === leftSize) {
        stack.push(n);
        break;
      } else {
        k -= leftSize + 1;
        n = n.right;
      }
    }
    while (stack.length > 0 && out.length < count) {
      const top = stack.pop()!;
      out.push(top.item);
      let cursor = top.right;
      while (cursor !== null) {
        stack.push(cursor);
        cursor = cursor.left;
      }
    }
    return out;
  }

  /**
   * Removes `deleteCount` items at `start` and puts `inserted` there (exact coordinates: 0 <= start <= size,
   * start + deleteCount <= size); returns the removed items. O(log n + deleteCount + inserted) expected.
   */
  splice(start: number, deleteCount: number, inserted: readonly UserMessage[]): UserMessage[] {
    // A few items put in or taken out: each one by a walk down from the root, which only restructures the small
    // subtree where the item goes or leaves (two splits and two merges of the whole depth cost about four walks).
    if (deleteCount === 0 && inserted.length <= FEW) {
      for (let i = 0; i < inserted.length; i++) this.insertAt(start + i, inserted[i]!);
      return [];
    }
    if (inserted.length === 0 && deleteCount <= FEW) {
      const removed: UserMessage[] = [];
      for (let i = 0; i < deleteCount; i++) removed.push(this.removeAt(start));
      return removed;
    }
    // (indexing, not destructuring: a destructured pair walks an iterator at every level of the recursion)
    const cut = split(this.root, start);
    const before = cut[0];
    const rest = split(cut[1], deleteCount);
    const gone = rest[0];
    const after = rest[1];
    const removed: UserMessage[] = [];
    collect(gone, removed, this.nodeOfId);
    this.root = merge(merge(before, this.build(inserted)), after);
    if (this.root !== null) this.root.parent = null;
    return removed;
  }

  /**
   * Puts `item` at `rank` (0 <= rank <= size): walks down while the nodes' priorities are at least the new one's
   * (counting it into their sizes), then the new node takes the place of the subtree there, split at the rank into
   * its two children. O(log n) expected; the split is of a subtree of expected O(1) size.
   */
  private insertAt(rank: number, item: UserMessage): void {
    const node: TreeNode = { item, priority: this.nextPriority(), size: 1, left: null, right: null, parent: null };
    this.nodeOfId.set(item.id, node);
    let parent: TreeNode | null = null;
    let onLeft = false;
    let cursor = this.root;
    let k = rank;
    while (cursor !== null && cursor.priority >= node.priority) {
      cursor.size++;
      parent = cursor;
      const leftSize = sizeOf(cursor.left);
      if (k <= leftSize) {
        onLeft = true;
        cursor = cursor.left;
      } else {
        onLeft = false;
        k -= leftSize + 1;
        cursor = cursor.right;
      }
    }
    const parts = split(cursor, k);
    node.left = parts[0];
    node.right = parts[1];
    update(node);
    node.parent = parent;
    if (parent === null) this.root = node;
    else if (onLeft) parent.left = node;
    else parent.right = node;
  }

  /**
   * Takes the item at `rank` (0 <= rank < size) out: its node is replaced by the merge of its two subtrees (whose
   * facing spines are of expected O(1) length) and every ancestor's size drops by one. O(log n) expected.
   */
  private removeAt(rank: number): UserMessage {
    const n = this.nodeAt(rank);
    const parent = n.parent;
    const replacement = merge(n.left, n.right);
    if (replacement !== null) replacement.parent = parent;
    if (parent === null) this.root = replacement;
    else if (parent.left === n) parent.left = replacement;
    else parent.right = replacement;
    for (let a = parent; a !== null; a = a.parent) a.size--;
    n.left = null;
    n.right = null;
    n.parent = null;
    this.nodeOfId.delete(n.item.id);
    return n.item;
  }

  /** A tree of its own with the same items: O(n). */
  copy(): RankTree {
    reportListWalk('copy', this.size);
    const items: UserMessage[] = [];
    collect(this.root, items);
    return new RankTree(items, this.seed);
  }

  /** A tree of `items` in order: O(k) amortized (each item merged on the right spine). */
  private build(items: readonly UserMessage[]): TreeNode | null {
    // The right spine of the tree built so far; a new node takes the spine's lower-priority tail as its left child.
    const spine: TreeNode[] = [];
    for (const item of items) {
      const node: TreeNode = { item, priority: this.nextPriority(), size: 1, left: null, right: null, parent: null };
      this.nodeOfId.set(item.id, node);
      let last: TreeNode | null = null;
      while (spine.length > 0 && spine[spine.length - 1]!.priority < node.priority) last = spine.pop()!;
      node.left = last;
      if (spine.length > 0) spine[spine.length - 1]!.right = node;
      spine.push(node);
    }
    if (spine.length === 0) return null;
    const top = spine[0]!;
    fixSubtree(top);
    top.parent = null;
    return top;
  }

  private nextPriority(): number {
    // xorshift32: deterministic, and independent of the items
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x | 0 || 1;
    return this.seed >>> 0;
  }
}

/** Recomputes sizes and parents in a tree whose nodes were just linked: every node once, children first. */
const fixSubtree = (top: TreeNode): void => {
  const order: TreeNode[] = [];
  const stack: TreeNode[] = [top];
  while (stack.length > 0) {
    const n = stack.pop()!;
    order.push(n);
    if (n.left !== null) stack.push(n.left);
    if (n.right !== null) stack.push(n.right);
  }
  // `order` lists every node after its parent, so walking it backwards updates children before their parents.
  for (let i = order.length - 1; i >= 0; i--) update(order[i]!);
};
