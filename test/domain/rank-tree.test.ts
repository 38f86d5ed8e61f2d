import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_MAX, type ChunkNode } from '../../domain/inbox/chunk-treap.js';
import { RankTree } from '../../domain/inbox/rank-tree.js';
import type { UserMessage } from '../../domain/message.js';
import { msg } from '../../testing/log-builder.js';

type Op = { readonly at: number; readonly del: number; readonly ins: number; readonly keepFirst: boolean };

/** A length: mostly a few items (the in-chunk paths), sometimes enough to span chunks or to split the treap. */
const length = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 6 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 * CHUNK_MAX }) });

const op: fc.Arbitrary<Op> = fc.record({ at: fc.nat(), del: length, ins: length, keepFirst: fc.boolean() });

const rootOf = (tree: RankTree): ChunkNode | null => (tree as unknown as { root: ChunkNode | null }).root;
const homeOf = (tree: RankTree): Map<string, ChunkNode> => (tree as unknown as { home: Map<string, ChunkNode> }).home;

/**
 * The treap's invariants: heap order of the priorities, each size its chunk's plus its subtrees', each child's
 * parent its own, every chunk holding 1..CHUNK_MAX items, every item's home its own chunk. Returns the depth.
 */
const check = (tree: RankTree): number => {
  const home = homeOf(tree);
  let items = 0;
  const walk = (n: ChunkNode | null, parent: ChunkNode | null): number => {
    if (n === null) return 0;
    expect(n.parent).toBe(parent);
    if (n.left !== null) expect(n.left.priority).toBeLessThanOrEqual(n.priority);
    if (n.right !== null) expect(n.right.priority).toBeLessThanOrEqual(n.priority);
    expect(n.items.length).toBeGreaterThan(0);
    expect(n.items.length).toBeLessThanOrEqual(CHUNK_MAX);
    for (const m of n.items) expect(home.get(m.id)).toBe(n);
    items += n.items.length;
    const depth = 1 + Math.max(walk(n.left, n), walk(n.right, n));
    expect(n.size).toBe(n.items.length + (n.left?.size ?? 0) + (n.right?.size ?? 0));
    return depth;
  };
  const depth = walk(rootOf(tree), null);
  expect(home.size).toBe(items);
  return depth;
};

describe('RankTree (the inbox list once items are spliced into its middle)', () => {
  it('behaves like an array under any splice at any position and of any length: items, ranks of ids, at, slices, copies', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 150 }), fc.integer(), fc.nat({ max: 300 }), (ops, seed, initial) => {
        let next = 0;
        const fresh = (): UserMessage => msg(`m${next++}`);
        const model: UserMessage[] = Array.from({ length: initial }, fresh);
        const tree = new RankTree(model, seed);
        for (const o of ops) {
          const start = model.length === 0 ? 0 : o.at % (model.length + 1);
          const del = Math.min(o.del, model.length - start);
          const inserted = Array.from({ length: o.ins }, fresh);
          // an identity-preserving edit: the first removed item comes back under its own id
          if (o.keepFirst && del > 0 && inserted.length > 0) inserted[0] = { ...model[start]!, content: [{ type: 'text', text: 'edited' }] };
          const removed = tree.splice(start, del, inserted);
          expect(removed).toEqual(model.splice(start, del, ...inserted));
          expect(tree.size).toBe(model.length);
        }
        check(tree);
        expect(tree.toArray()).toEqual(model);
        model.forEach((m, i) => {
          expect(tree.rankOf(m.id)).toBe(i);
          expect(tree.has(m.id)).toBe(true);
          expect(tree.at(i)).toBe(m);
        });
        expect(tree.rankOf('absent')).toBe(-1);
        expect(tree.has('absent')).toBe(false);
        expect(tree.at(model.length)).toBeUndefined();
        expect(tree.at(-1)).toBeUndefined();
        for (let s = 0; s <= model.length; s += 3) expect(tree.slice(s, 4)).toEqual(model.slice(s, s + 4));
        expect(tree.slice(0, model.length + 5)).toEqual(model);
        const copy = tree.copy();
        if (model.length > 0) copy.splice(0, 1, []);
        expect(tree.toArray()).toEqual(model);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps the treap of chunks whole after every splice: heap order, sizes, parents, chunk bounds, homes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 200 }), fc.integer(), (ops, seed) => {
        let next = 0;
        const tree = new RankTree([], seed);
        const model: UserMessage[] = [];
        for (const o of ops) {
          // inserts outweigh removals, so that the tree grows and chunks are cut and merged
          const start = model.length === 0 ? 0 : o.at % (model.length + 1);
          const del = Math.min(o.keepFirst ? o.del >> 1 : o.del, model.length - start);
          const inserted = Array.from({ length: o.keepFirst ? Math.max(1, o.ins) : o.ins }, () => msg(`m${next++}`));
          expect(tree.splice(start, del, inserted)).toEqual(model.splice(start, del, ...inserted));
          check(tree);
        }
        expect(tree.toArray()).toEqual(model);
      }),
      { numRuns: 100 },
    );
  });

  it('stays shallow and compact: 20,000 inserts at the front, the back and the middle, then random removals', () => {
    // a degenerate (list-shaped) tree would overflow the recursion of split/merge long before 20,000 items
    const tree = new RankTree([], 7);
    const model: UserMessage[] = [];
    let x = 12345;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x % n;
    };
    for (let i = 0; model.length < 20_000; i++) {
      const inserted = i % 2 === 0 ? [msg(`a${i}`), msg(`b${i}`)] : [msg(`a${i}`)];
      const at = i % 3 === 0 ? 0 : i % 3 === 1 ? model.length : rand(model.length + 1);
      tree.splice(at, 0, inserted);
      model.splice(at, 0, ...inserted);
    }
    // the middle-splices shape of the benchmark: below the peak one or two items in at a random rank, else two or
    // three out at a random rank
    // removals compared item by item, counted, and asserted once (an expect per splice would be most of the test's time)
    let mismatches = 0;
    const same = (a: readonly UserMessage[], b: readonly UserMessage[]): boolean => a.length === b.length && a.every((m, j) => m === b[j]);
    for (let i = 0; i < 15_000; i++) {
      if (model.length < 20_000) {
        const inserted = i % 2 === 0 ? [msg(`c${i}`), msg(`d${i}`)] : [msg(`c${i}`)];
        const to = rand(model.length + 1);
        tree.splice(to, 0, inserted);
        model.splice(to, 0, ...inserted);
      } else {
        const del = 2 + rand(2);
        const at = rand(model.length - del + 1);
        if (!same(tree.splice(at, del, []), model.splice(at, del))) mismatches++;
      }
    }
    while (model.length > 5_000) {
      const at = rand(model.length - 1);
      if (!same(tree.splice(at, 2, []), model.splice(at, 2))) mismatches++;
    }
    expect(mismatches).toBe(0);
    expect(tree.toArray()).toEqual(model);
    const chunks = model.length / CHUNK_MAX;
    // a random treap of c nodes is about 3·log2(c) deep at most, with high probability (a list would be c deep)
    expect(check(tree)).toBeLessThan(4 * Math.log2(tree.chunkCount()) + 4);
    // chunks stay full enough that the tree has far fewer nodes than items (a chunk shrinking below a quarter of
    // CHUNK_MAX is merged with a neighbour when both fit in one)
    expect(tree.chunkCount()).toBeLessThan(6 * chunks);
  });
});
