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
});
