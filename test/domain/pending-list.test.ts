import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as L from '../../domain/inbox/pending-list.js';
import type { UserMessage } from '../../domain/message.js';
import { msg } from '../../testing/log-builder.js';

type Op =
  | { kind: 'push'; n: number }
  | { kind: 'prepend'; n: number }
  | { kind: 'pop'; n: number }
  | { kind: 'removeAt'; at: number }
  | { kind: 'replaceAt'; at: number; keepId: boolean }
  | { kind: 'general'; at: number; del: number; n: number }
  | { kind: 'takeAll' }
  | { kind: 'branch'; back: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('push' as const), n: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('prepend' as const), n: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pop' as const), n: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('removeAt' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('replaceAt' as const), at: fc.nat(), keepId: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('general' as const), at: fc.nat(), del: fc.integer({ min: 0, max: 5 }), n: fc.integer({ min: 0, max: 3 }) }) },
  // splices of many items at random positions: across the tree's chunks, or splitting and merging its treap
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('general' as const), at: fc.nat(), del: fc.integer({ min: 0, max: 200 }), n: fc.integer({ min: 0, max: 200 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'takeAll' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('branch' as const), back: fc.nat() }) },
);

describe('PendingList (persistent list behind each inbox list)', () => {
  it('behaves like an array under every operation, keeps ranks and ids consistent, and never changes old versions', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), (ops) => {
        let next = 0;
        const fresh = (): UserMessage => msg(`m${next++}`);
        const versions: { list: L.PendingList; items: UserMessage[] }[] = [{ list: L.emptyPendingList, items: [] }];
        let cur = versions[0]!;
        for (const o of ops) {
          const arr = [...cur.items];
          let list = cur.list;
          const n = arr.length;
          switch (o.kind) {
            case 'push': {
              const ins = Array.from({ length: o.n }, fresh);
              list = L.spliceExact(list, n, 0, ins);
              arr.push(...ins);
              break;
            }
            case 'prepend': {
              const ins = Array.from({ length: o.n }, fresh);
              list = L.spliceExact(list, 0, 0, ins);
              arr.unshift(...ins);
              break;
            }
            case 'pop': {
              const d = Math.min(o.n, n);
              list = L.spliceExact(list, 0, d, []);
              arr.splice(0, d);
              break;
            }
            case 'removeAt': {
              if (n === 0) continue;
              const at = o.at % n;
              expect(L.at(list, at)).toBe(arr[at]);
              list = L.spliceExact(list, at, 1, []);
              arr.splice(at, 1);
              break;
            }
            case 'replaceAt': {
              if (n === 0) continue;
              const at = o.at % n;
              const m = o.keepId ? msg(arr[at]!.id, 'edited') : fresh();
              list = L.spliceExact(list, at, 1, [m]);
              arr.splice(at, 1, m);
              break;
            }
            case 'general': {
              const at = n === 0 ? 0 : o.at % (n + 1);
              const del = Math.min(o.del, n - at);
              const ins = Array.from({ length: o.n }, fresh);
              list = L.spliceExact(list, at, del, ins);
              arr.splice(at, del, ...ins);
              break;
            }
            case 'takeAll':
              list = L.spliceExact(list, 0, n, []);
              arr.length = 0;
              break;
            case 'branch':
              // continue from an older version: its items must be intact, and it can be changed independently
              cur = versions[o.back % versions.length]!;
              continue;
          }
          expect(L.size(list)).toBe(arr.length);
          expect(L.toArray(list)).toEqual(arr);
          const probe = arr.length ? (next * 7919) % arr.length : 0;
          if (arr.length) {
            expect(L.indexOf(list, arr[probe]!.id)).toBe(probe);
            expect(L.at(list, probe)).toBe(arr[probe]);
            expect(L.slice(list, probe, Math.min(3, arr.length - probe))).toEqual(arr.slice(probe, probe + 3));
          }
          expect(L.indexOf(list, 'absent')).toBe(-1);
          cur = { list, items: arr };
          versions.push(cur);
        }
        for (const v of versions) expect(L.toArray(v.list)).toEqual(v.items);
      }),
      { numRuns: 500 },
    );
  });

  it('a consuming splice changes the list in place: the same items as a persistent one, and no diff left behind', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ at: fc.nat(), del: fc.integer({ min: 0, max: 4 }), n: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 200 }), (ops) => {
        let next = 0;
        const fresh = (): UserMessage => msg(`m${next++}`);
        let consumed = L.emptyPendingList;
        let persistent = L.emptyPendingList;
        const arr: UserMessage[] = [];
        for (const o of ops) {
          const at = arr.length === 0 ? 0 : o.at % (arr.length + 1);
          const del = Math.min(o.del, arr.length - at);
          const ins = Array.from({ length: o.n }, fresh);
          const before = consumed;
          const sizeBefore = arr.length;
          const c = L.spliceRemoving(consumed, at, del, ins, true);
          const p = L.spliceRemoving(persistent, at, del, ins);
          expect(c.removed).toEqual(arr.splice(at, del, ...ins));
          expect(c.removed).toEqual(p.removed);
          consumed = c.list;
          persistent = p.list;
          // a splice of a non-empty list that leaves part of it keeps the list itself (no new version)
          if (sizeBefore > 0 && !(at === 0 && del === sizeBefore) && (del > 0 || ins.length > 0)) expect(consumed).toBe(before);
          expect(L.toArray(consumed)).toEqual(arr);
          expect(L.toArray(persistent)).toEqual(arr);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reading an old version after many changes rebuilds it exactly', () => {
    let list = L.emptyPendingList;
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) {
      list = L.spliceExact(list, L.size(list), 0, [msg(`x${i}`)]);
      ids.push(`x${i}`);
    }
    const old = list;
    for (let i = 0; i < 300; i++) list = L.spliceExact(list, (i * 13) % L.size(list), 1, []);
    expect(L.toArray(old).map((m) => m.id)).toEqual(ids);
    expect(L.size(list)).toBe(200);
  });
});

describe('PendingList: reading an older version reroots instead of copying', () => {
  it('alternating between the newest version and the one before it walks no list, and both keep their items', async () => {
    const { installListWorkProbe } = await import('../../domain/inbox/list-work.js');
    let list = L.emptyPendingList;
    for (let i = 0; i < 10_000; i++) list = L.spliceExact(list, L.size(list), 0, [msg(`p${i}`)]);
    let walked = 0;
    const remove = installListWorkProbe({ walked: (_what, n) => void (walked += n) });
    try {
      for (let i = 0; i < 2_000; i++) {
        const before = list;
        // a claim of the head, a removal from the middle, a replace: then read the older version again
        const op = i % 3;
        list = op === 0 ? L.spliceExact(list, 0, 1, []) : op === 1 ? L.spliceExact(list, 4_000, 1, []) : L.spliceExact(list, 10, 1, [msg(`r${i}`)]);
        const removed = L.at(before, op === 0 ? 0 : op === 1 ? 4_000 : 10)!;
        expect(L.indexOf(before, removed.id)).toBe(op === 0 ? 0 : op === 1 ? 4_000 : 10);
        expect(L.size(before)).toBe(L.size(list) + (op === 2 ? 0 : 1));
        list = L.spliceExact(list, L.size(list), 0, [msg(`n${i}`)]);
      }
    } finally {
      remove();
    }
    // compactions only (amortized): nothing near 2,000 copies of 10,000 items
    expect(walked).toBeLessThan(100_000);
  });
});
