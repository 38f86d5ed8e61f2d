import type { UserMessage } from '../message.js';
import { reportListWalk } from './list-work.js';
import { RankTree } from './rank-tree.js';

/** Marks a slot whose item was removed from the middle of the list. */
const TOMB = Symbol('tomb');
type Slot = UserMessage | typeof TOMB | undefined;

/**
 * The mutable store behind one inbox list (owned by exactly one PendingList version at a time).
 *
 * Items sit in `slots[head..tail)`; removals from the front advance `head`, removals inside the list leave a
 * tombstone counted in a Fenwick tree so that rank <-> slot conversions stay O(log n). Costs (n = pending items):
 * push, prepend, pop-front, pop-back: O(1) amortized; remove/replace at a rank or by id: O(log n); inserting one
 * item where a tombstone sits (undoing a removal): O(log n). Any other splice (items put into the middle of the
 * list, several removed from its middle) moves the items into a RankTree once (O(n)), where that splice and every
 * later operation cost O(log n + k); the deque keeps the tree until the list is empty again, so a log that splices
 * into the middle pays the move once per emptying of the list: O(1) amortized per event.
 */
export class SlotDeque {
  private slots: Slot[];
  private head: number;
  private tail: number;
  private live = 0;
  private tombs = 0;
  private readonly slotOfId = new Map<string, number>();
  /** Fenwick tree (1-based) of tombstones over slot indices [0, fenCap). Valid only while fenCap >= tail. */
  private fen: Int32Array = new Int32Array(1);
  private fenCap = 0;
  /** Set once a general splice moved the items into a tree; every operation then goes to the tree. */
  private tree: RankTree | null = null;

  constructor(items: readonly UserMessage[] = [], frontSlack = 8) {
    this.slots = new Array<Slot>(frontSlack + items.length);
    this.head = frontSlack;
    this.tail = frontSlack;
    for (const m of items) this.push(m);
  }

  get size(): number {
    return this.tree !== null ? this.tree.size : this.live;
  }

  has(id: string): boolean {
    return this.tree !== null ? this.tree.has(id) : this.slotOfId.has(id);
  }

  /** Rank of a pending id, or -1. */
  rankOf(id: string): number {
    if (this.tree !== null) return this.tree.rankOf(id);
    const slot = this.slotOfId.get(id);
    if (slot === undefined) return -1;
    if (this.tombs === 0) return slot - this.head;
    this.ensureFenwick();
    return slot - this.head - (this.tombPrefix(slot - 1) - this.tombPrefix(this.head - 1));
  }

  at(rank: number): UserMessage | undefined {
    if (this.tree !== null) return this.tree.at(rank);
    if (rank < 0 || rank >= this.live) return undefined;
    return this.slots[this.slotOfRank(rank)] as UserMessage;
  }

  toArray(): UserMessage[] {
    if (this.tree !== null) return this.tree.toArray();
    reportListWalk('read-all', this.tail - this.head);
    return this.items();
  }

  private items(): UserMessage[] {
    const out: UserMessage[] = [];
    for (let i = this.head; i < this.tail; i++) {
      const s = this.slots[i];
      if (s !== TOMB && s !== undefined) out.push(s);
    }
    return out;
  }

  /** Items at ranks [start, start + count): O(log n + count + tombstones passed). */
  slice(start: number, count: number): UserMessage[] {
    if (this.tree !== null) return this.tree.slice(start, count);
    if (count <= 0 || start >= this.live) return [];
    if (this.tombs === 0) return this.slots.slice(this.head + start, this.head + start + count) as UserMessage[];
    const out: UserMessage[] = [];
    for (let slot = this.slotOfRank(start); slot < this.tail && out.length < count; slot++) {
      const s = this.slots[slot];
      if (s !== TOMB && s !== undefined) out.push(s);
    }
    return out;
  }

  private push(m: UserMessage): void {
    const slot = this.tail++;
    this.slots[slot] = m;
    this.slotOfId.set(m.id, slot);
    this.live++;
  }

  private prepend(m: UserMessage): void {
    if (this.head === 0) this.rebuild(Math.max(8, this.live));
    const slot = --this.head;
    if (this.slots[slot] === TOMB && this.fenCap > slot) this.fenAdd(slot, -1);
    this.slots[slot] = m;
    this.slotOfId.set(m.id, slot);
    this.live++;
  }

  /** Removes and returns the last item. */
  private popBack(): UserMessage {
    for (;;) {
      const slot = this.tail - 1;
      const s = this.slots[slot];
      this.slots[slot] = undefined;
      this.tail--;
      if (s !== TOMB) {
        const m = s as UserMessage;
        this.slotOfId.delete(m.id);
        this.live--;
        this.afterRemoval();
        return m;
      }
      this.tombs--;
      if (this.fenCap > slot) this.fenAdd(slot, -1);
    }
  }

  /**
   * Splice with exact coordinates (0 <= start <= size, start + deleteCount <= size), through the cheapest path that
   * fits; returns the removed items.
   */
  splice(start: number, deleteCount: number, inserted: readonly UserMessage[]): readonly UserMessage[] {
    if (this.tree !== null) {
      const removedFromTree = this.tree.splice(start, deleteCount, inserted);
      if (this.tree.size === 0) {
        this.tree = null;
        this.reset([], 8);
      }
      return removedFromTree;
    }
    const n = this.live;
    const removed: UserMessage[] = [];
    if (deleteCount === 0 && start === n) {
      for (const m of inserted) this.push(m);
    } else if (deleteCount === 0 && start === 0) {
      for (let i = inserted.length - 1; i >= 0; i--) this.prepend(inserted[i]!);
    } else if (inserted.length === 0 && start === 0) {
      for (let i = 0; i < deleteCount; i++) removed.push(this.popFront());
    } else if (inserted.length === 0 && start + deleteCount === n) {
      for (let i = 0; i < deleteCount; i++) removed.push(this.popBack());
      removed.reverse();
    } else if (deleteCount === 1 && inserted.length === 1) {
      removed.push(this.replaceAt(start, inserted[0]!));
    } else if (deleteCount === 1 && inserted.length === 0) {
      removed.push(this.removeAt(start));
    } else if (deleteCount === 0 && inserted.length === 1 && this.fillTombBefore(start, inserted[0]!)) {
      // undoing a removal from the middle: the tombstone it left takes the item back
    } else {
      return this.spliceGeneral(start, deleteCount, inserted);
    }
    return removed;
  }

  /** Puts `m` at rank `rank` (0 < rank < size) if a tombstone sits just before the item now at that rank. */
  private fillTombBefore(rank: number, m: UserMessage): boolean {
    if (rank <= 0 || rank >= this.live || this.tombs === 0) return false;
    const slot = this.slotOfRank(rank) - 1;
    if (this.slots[slot] !== TOMB) return false;
    this.slots[slot] = m;
    this.fenAdd(slot, -1);
    this.tombs--;
    this.slotOfId.set(m.id, slot);
    this.live++;
    return true;
  }

  /** Removes and returns the first item. */
  private popFront(): UserMessage {
    while (this.slots[this.head] === TOMB) {
      this.head++;
      this.tombs--;
    }
    const m = this.slots[this.head] as UserMessage;
    this.slots[this.head] = undefined;
    this.head++;
    this.slotOfId.delete(m.id);
    this.live--;
    this.afterRemoval();
    return m;
  }

  /** Replaces the item at `rank` with `m` (same or another id). */
  private replaceAt(rank: number, m: UserMessage): UserMessage {
    const slot = this.slotOfRank(rank);
    const old = this.slots[slot] as UserMessage;
    this.slotOfId.delete(old.id);
    this.slots[slot] = m;
    this.slotOfId.set(m.id, slot);
    return old;
  }

  /** Removes the item at `rank`. */
  private removeAt(rank: number): UserMessage {
    if (rank === 0) return this.popFront();
    const slot = this.slotOfRank(rank);
    const old = this.slots[slot] as UserMessage;
    this.slotOfId.delete(old.id);
    if (slot === this.tail - 1 && this.tombs === 0) {
      this.slots[slot] = undefined;
      this.tail--;
    } else {
      this.ensureFenwick();
      this.slots[slot] = TOMB;
      this.fenAdd(slot, 1);
      this.tombs++;
    }
    this.live--;
    this.afterRemoval();
    return old;
  }

  /** The general case: the items move into a tree (O(n), once), which does this splice and all later ones. */
  private spliceGeneral(start: number, deleteCount: number, inserted: readonly UserMessage[]): readonly UserMessage[] {
    reportListWalk('general-splice', this.tail - this.head);
    const tree = new RankTree(this.items());
    this.reset([], 8);
    this.tree = tree;
    const removed = tree.splice(start, deleteCount, inserted);
    if (tree.size === 0) this.tree = null;
    return removed;
  }

  /** A deque of its own with the same items: O(n). */
  copy(): SlotDeque {
    if (this.tree !== null) {
      const copy = new SlotDeque();
      copy.tree = this.tree.copy();
      return copy;
    }
    reportListWalk('copy', this.tail - this.head);
    return new SlotDeque(this.items());
  }

  private slotOfRank(rank: number): number {
    if (this.tombs === 0) return this.head + rank;
    this.ensureFenwick();
    // Smallest slot s with (s + 1) - tombPrefix(s) >= k, where the non-tomb slots before head are offset out.
    const k = rank + 1 + this.head - this.tombPrefix(this.head - 1);
    let pos = 0;
    let acc = 0;
    for (let step = highestPowerOfTwo(this.fenCap); step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.fenCap && next - (acc + this.fen[next]!) < k) {
        pos = next;
        acc += this.fen[next]!;
      }
    }
    return pos;
  }

  /** Compacts when the list is empty, when tombstones outnumber items, or when the slots freed at the front do: O(1) amortized. */
  private afterRemoval(): void {
    if (this.live === 0) {
      this.reset([], 8);
    } else if ((this.tombs > 32 && this.tombs > this.live) || (this.head > 1024 && this.head > 2 * this.live)) {
      this.rebuild(8);
    }
  }

  private rebuild(frontSlack: number): void {
    reportListWalk('compact', this.tail - this.head);
    this.reset(this.items(), frontSlack);
  }

  private reset(items: readonly UserMessage[], frontSlack: number): void {
    this.slots = new Array<Slot>(frontSlack + items.length);
    this.head = frontSlack;
    this.tail = frontSlack;
    this.live = 0;
    this.tombs = 0;
    this.slotOfId.clear();
    this.fen = new Int32Array(1);
    this.fenCap = 0;
    for (const m of items) this.push(m);
  }

  private ensureFenwick(): void {
    if (this.fenCap >= this.tail) return;
    const cap = Math.max(16, this.tail * 2);
    const fen = new Int32Array(cap + 1);
    for (let i = 0; i < this.tail; i++) {
      if (this.slots[i] === TOMB) fen[i + 1]! += 1;
    }
    for (let i = 1; i <= cap; i++) {
      const parent = i + (i & -i);
      if (parent <= cap) fen[parent]! += fen[i]!;
    }
    this.fen = fen;
    this.fenCap = cap;
  }

  private fenAdd(slot: number, delta: number): void {
    for (let i = slot + 1; i <= this.fenCap; i += i & -i) this.fen[i]! += delta;
  }

  /** Tombstones in slots [0, slot]. */
  private tombPrefix(slot: number): number {
    let sum = 0;
    for (let i = Math.min(slot + 1, this.fenCap); i > 0; i -= i & -i) sum += this.fen[i]!;
    return sum;
  }
}

const highestPowerOfTwo = (n: number): number => (n <= 0 ? 0 : 2 ** Math.floor(Math.log2(n)));
