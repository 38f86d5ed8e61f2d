import type { UserMessage } from '../message.js';
import {
  CHUNK_FILL,
  CHUNK_MAX,
  CHUNK_MIN,
  addToSizes,
  buildTreap,
  chunkNode,
  collectItems,
  eachChunk,
  insertChunk,
  merge,
  nextChunk,
  previousChunk,
  rankOfChunk,
  sizeOf,
  split,
  unlinkChunk,
  type ChunkNode,
  type ChunkOfId,
} from './chunk-treap.js';
import { reportListWalk } from './list-work.js';

/** What a splice that removes nothing returns (shared: nobody writes to a splice's removed items). */
const NO_ITEMS: readonly UserMessage[] = Object.freeze([]);

/** Splices that remove and insert at most this many items together go through the chunks they touch in place. */
const LOCAL = 2 * CHUNK_MAX;

/**
 * The items of one inbox list as a rope: runs of up to CHUNK_MAX consecutive items (chunks) in an implicit treap —
 * a binary tree ordered by rank, balanced by pseudo-random priorities, each node knowing its subtree's item count
 * and its parent. A splice anywhere in the list (which the slot deque can only do by rebuilding, O(n)) walks down
 * to the chunk at its rank and edits that chunk's array: O(log n + k) expected for k items, with a chunk cut in two
 * when it outgrows CHUNK_MAX and merged with a neighbour when it shrinks below CHUNK_MIN; a larger splice splits
 * and merges the treap. Holding dozens of items per node, the tree has few nodes and shallow walks. The priorities
 * come from a seeded generator, so the shape (and so the work) of a fold is the same on every run; they never
 * affect which items the list holds or their order.
 */
export class RankTree {
  private root: ChunkNode | null = null;
  private readonly home: ChunkOfId = new Map();
  private seed: number;
  /** The offset within its chunk of the item `locate` found last. */
  private offset = 0;
  private readonly priority = (): number => this.nextPriority();

  /** A tree holding `items` in order; `seed` picks the (deterministic) priorities. */
  constructor(items: readonly UserMessage[] = [], seed = 0x2545f491) {
    this.seed = seed | 0 || 1;
    this.root = buildTreap(items, this.priority, this.home);
  }

  get size(): number {
    return sizeOf(this.root);
  }

  has(id: string): boolean {
    return this.home.has(id);
  }

  /** Rank of a pending id, or -1: O(log n + CHUNK_MAX). */
  rankOf(id: string): number {
    const chunk = this.home.get(id);
    if (chunk === undefined) return -1;
    const items = chunk.items;
    let i = 0;
    while (items[i]!.id !== id) i++;
    return rankOfChunk(chunk) + i;
  }

  /** The item at `rank`, or undefined: O(log n). */
  at(rank: number): UserMessage | undefined {
    if (rank < 0 || rank >= this.size) return undefined;
    return this.locate(rank).items[this.offset];
  }

  /** The chunk holding the item at `rank` (0 <= rank < size), its offset there left in `this.offset`. */
  private locate(rank: number): ChunkNode {
    let n = this.root!;
    let k = rank;
    for (;;) {
      const leftSize = sizeOf(n.left);
      if (k < leftSize) n = n.left!;
      else if (k < leftSize + n.items.length) {
        this.offset = k - leftSize;
        return n;
      } else {
        k -= leftSize + n.items.length;
        n = n.right!;
      }
    }
  }

  /** Every item, in order: O(n). */
  toArray(): UserMessage[] {
    reportListWalk('read-all', this.size);
    const out: UserMessage[] = [];
    collectItems(this.root, out);
    return out;
  }

  /** Items at ranks [start, start + count): O(log n + count). */
  slice(start: number, count: number): UserMessage[] {
    const out: UserMessage[] = [];
    if (count <= 0 || start >= this.size) return out;
    // Walk down to `start`, keeping the ancestors whose chunk comes after it; then an in-order walk from there.
    const stack: ChunkNode[] = [];
    let n = this.root;
    let k = start;
    while (n !== null) {
      const leftSize = sizeOf(n.left);
      stack.push(n);
      if (k < leftSize) n = n.left;
      else if (k < leftSize + n.items.length) break;
      else {
        stack.pop();
        k -= leftSize + n.items.length;
        n = n.right;
      }
    }
    let from = k - sizeOf(stack[stack.length - 1]!.left);
    while (stack.length > 0 && out.length < count) {
      const top = stack.pop()!;
      for (let i = from; i < top.items.length && out.length < count; i++) out.push(top.items[i]!);
      from = 0;
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
  splice(start: number, deleteCount: number, inserted: readonly UserMessage[]): readonly UserMessage[] {
    if (deleteCount + inserted.length > LOCAL) return this.spliceWhole(start, deleteCount, inserted);
    const removed = deleteCount === 0 ? NO_ITEMS : this.removeRun(start, deleteCount);
    if (inserted.length > 0) this.insertRun(start, inserted);
    return removed;
  }

  /** A large splice: the treap split at both ends of the removed run, the inserted items built and merged in. */
  private spliceWhole(start: number, deleteCount: number, inserted: readonly UserMessage[]): UserMessage[] {
    // (indexing, not destructuring: a destructured pair walks an iterator at every level of the recursion)
    const cut = split(this.root, start, this.home);
    const rest = split(cut[1], deleteCount, this.home);
    const removed: UserMessage[] = [];
    collectItems(rest[0], removed);
    for (let i = 0; i < removed.length; i++) this.home.delete(removed[i]!.id);
    this.root = merge(merge(cut[0], buildTreap(inserted, this.priority, this.home)), rest[1]);
    if (this.root !== null) this.root.parent = null;
    return removed;
  }

  /** Takes `count` items at `rank` out, chunk by chunk (each chunk it empties leaves the treap). */
  private removeRun(rank: number, count: number): UserMessage[] {
    // an array of the removed run's exact size (an empty array's first push would give it room for 17)
    const removed = new Array<UserMessage>(count);
    let k = 0;
    while (k < count) {
      const chunk = this.locate(rank);
      const items = chunk.items;
      const from = this.offset;
      const take = Math.min(count - k, items.length - from);
      for (let i = from; i < from + take; i++) {
        removed[k++] = items[i]!;
        this.home.delete(items[i]!.id);
      }
      // (shifted by hand: Array.prototype.splice allocates the removed run and is slow on short arrays)
      for (let i = from + take; i < items.length; i++) items[i - take] = items[i]!;
      items.length -= take;
      addToSizes(chunk, -take);
      if (chunk.items.length === 0) this.root = unlinkChunk(this.root, chunk);
      else if (chunk.items.length < CHUNK_MIN) this.absorbSmall(chunk);
    }
    return removed;
  }

  /** Puts `items` (at most LOCAL) at `rank` (0 <= rank <= size) into the chunk there, cut up if it outgrows CHUNK_MAX. */
  private insertRun(rank: number, items: readonly UserMessage[]): void {
    if (this.root === null) {
      this.root = buildTreap(items, this.priority, this.home);
      return;
    }
    // the walk down counts the items into every size it passes: they all end up below it
    let n = this.root;
    let k = rank;
    for (;;) {
      n.size += items.length;
      const leftSize = sizeOf(n.left);
      if (k < leftSize) n = n.left!;
      else if (k <= leftSize + n.items.length) break;
      else {
        k -= leftSize + n.items.length;
        n = n.right!;
      }
    }
    const into = n.items;
    const at = k - sizeOf(n.left);
    const count = items.length;
    const length = into.length;
    // grown by pushes first (a write past the end would leave a hole and make the array holey), then shifted
    for (let i = 0; i < count; i++) into.push(items[i]!);
    for (let i = length - 1; i >= at; i--) into[i + count] = into[i]!;
    for (let i = 0; i < count; i++) {
      into[at + i] = items[i]!;
      this.home.set(items[i]!.id, n);
    }
    if (n.items.length > CHUNK_MAX) this.cutUp(n);
  }

  /** Cuts an overfull chunk into pieces of at most CHUNK_FILL items: the first stays, the others enter after it. */
  private cutUp(chunk: ChunkNode): void {
    const total = chunk.items.length;
    const piece = Math.ceil(total / Math.ceil(total / CHUNK_FILL));
    const tail = chunk.items.splice(piece);
    addToSizes(chunk, -tail.length);
    const at = rankOfChunk(chunk) + piece;
    for (let from = 0; from < tail.length; from += piece) {
      this.root = insertChunk(this.root, at + from, chunkNode(tail.slice(from, from + piece), this.nextPriority(), this.home), this.home);
    }
  }

  /** Merges a chunk that shrank below CHUNK_MIN with the next chunk, or else the previous one, when both fit in one. */
  private absorbSmall(chunk: ChunkNode): void {
    const next = nextChunk(chunk);
    if (next !== null && chunk.items.length + next.items.length <= CHUNK_MAX) this.moveInto(next, chunk);
    else {
      const previous = previousChunk(chunk);
      if (previous !== null && chunk.items.length + previous.items.length <= CHUNK_MAX) this.moveInto(chunk, previous);
    }
  }

  /** Moves every item of chunk `from` to the end of the chunk just before it, `to`, and takes `from` out. */
  private moveInto(from: ChunkNode, to: ChunkNode): void {
    const moved = from.items;
    from.items = [];
    addToSizes(from, -moved.length);
    this.root = unlinkChunk(this.root, from);
    for (let i = 0; i < moved.length; i++) to.items.push(moved[i]!);
    for (let i = 0; i < moved.length; i++) this.home.set(moved[i]!.id, to);
    addToSizes(to, moved.length);
  }

  /** A tree of its own with the same items: O(n). */
  copy(): RankTree {
    reportListWalk('copy', this.size);
    const items: UserMessage[] = [];
    collectItems(this.root, items);
    return new RankTree(items, this.seed);
  }

  /** The number of chunks: O(n / CHUNK_FILL) at least. */
  chunkCount(): number {
    let count = 0;
    eachChunk(this.root, () => count++);
    return count;
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
