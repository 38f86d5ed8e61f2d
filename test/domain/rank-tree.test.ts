import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RankTree } from '../../domain/inbox/rank-tree.js';
import type { UserMessage } from '../../domain/message.js';
import { msg } from '../../testing/log-builder.js';

type Op = { readonly at: number; readonly del: number; readonly ins: number; readonly keepFirst: boolean };

const op: fc.Arbitrary<Op> = fc.record({
  at: fc.nat(),
  del: fc.integer({ min: 0, max: 6 }),
  ins: fc.integer({ min: 0, max: 6 }),
  keepFirst: fc.boolean(),
});

describe('RankTree (the inbox list once items are spliced into its middle)', () => {
  it('behaves like an array under any splice: items, ranks of ids, at, slices, copies', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 150 }), fc.integer(), (ops, seed) => {
        let next = 0;
        const fresh = (): UserMessage => msg(`m${next++}`);
        const tree = new RankTree([], seed);
        const model: UserMessage[] = [];
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
        expect(tree.toArray()).toEqual(model);
        model.forEach((m, i) => {
          expect(tree.rankOf(m.id)).toBe(i);
          expect(tree.at(i)).toBe(m);
        });
        expect(tree.rankOf('absent')).toBe(-1);
        expect(tree.has('absent')).toBe(false);
        expect(tree.at(model.length)).toBeUndefined();
        for (let s = 0; s <= model.length; s += 3) expect(tree.slice(s, 4)).toEqual(model.slice(s, s + 4));
        const copy = tree.copy();
        if (model.length > 0) copy.splice(0, 1, []);
        expect(tree.toArray()).toEqual(model);
      }),
    );
  });

  it('stays shallow: 20,000 inserts at the front, the back and the middle leave every rank reachable in a few dozen steps', () => {
    // a degenerate (list-shaped) tree would overflow the recursion of split/merge long before 20,000 items
    const tree = new RankTree([], 7);
    let next = 0;
    for (let i = 0; i < 20_000; i++) {
      const where = i % 3 === 0 ? 0 : i % 3 === 1 ? tree.size : tree.size >> 1;
      tree.splice(where, 0, [msg(`n${next++}`)]);
    }
    expect(tree.size).toBe(20_000);
    expect(tree.slice(10_000, 2)).toHaveLength(2);
    expect(tree.rankOf('n0')).toBeGreaterThanOrEqual(0);
  });

  it('keeps the treap whole under splices of a few items (item by item) and of many (split and merge)', () => {
    interface Node {
      readonly item: UserMessage;
      readonly priority: number;
      readonly size: number;
      readonly left: Node | null;
      readonly right: Node | null;
      readonly parent: Node | null;
    }
    // heap order of the priorities, each size its subtree's, each child's parent its own; returns the depth
    const check = (n: Node | null, parent: Node | null): number => {
      if (n === null) return 0;
      expect(n.parent).toBe(parent);
      if (n.left !== null) expect(n.left.priority).toBeLessThanOrEqual(n.priority);
      if (n.right !== null) expect(n.right.priority).toBeLessThanOrEqual(n.priority);
      const depth = 1 + Math.max(check(n.left, n), check(n.right, n));
      expect(n.size).toBe(1 + (n.left?.size ?? 0) + (n.right?.size ?? 0));
      return depth;
    };
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 300 }), fc.integer(), (ops, seed) => {
        let next = 0;
        const tree = new RankTree([], seed);
        const model: UserMessage[] = [];
        for (const o of ops) {
          // mostly inserts, so that the tree grows
          const start = model.length === 0 ? 0 : o.at % (model.length + 1);
          const del = o.keepFirst ? 0 : Math.min(o.del, model.length - start);
          const inserted = Array.from({ length: o.keepFirst ? Math.max(1, o.ins) : o.ins }, () => msg(`m${next++}`));
          expect(tree.splice(start, del, inserted)).toEqual(model.splice(start, del, ...inserted));
          check((tree as unknown as { root: Node | null }).root, null);
        }
        expect(tree.toArray()).toEqual(model);
      }),
    );
    // and balanced: 10,000 items spliced in one or two at a time at pseudo-random ranks, then half taken out two at a time
    const tree = new RankTree([], 11);
    const model: UserMessage[] = [];
    let x = 12345;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x % n;
    };
    for (let i = 0; model.length < 10_000; i++) {
      const inserted = i % 2 === 0 ? [msg(`a${i}`), msg(`b${i}`)] : [msg(`a${i}`)];
      const at = rand(model.length + 1);
      tree.splice(at, 0, inserted);
      model.splice(at, 0, ...inserted);
    }
    while (model.length > 5_000) {
      const at = rand(model.length - 1);
      expect(tree.splice(at, 2, [])).toEqual(model.splice(at, 2));
    }
    expect(tree.toArray()).toEqual(model);
    // a random treap of n nodes is about 3·log2(n) deep at most, with high probability (a list would be n deep)
    expect(check((tree as unknown as { root: Node | null }).root, null)).toBeLessThan(4 * Math.log2(model.length));
  });
});
