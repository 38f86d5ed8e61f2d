import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyPersistentSet,
  persistentSetAdd,
  persistentSetChangeInPlace,
  persistentSetHas,
  persistentSetRemove,
  persistentSetSize,
  persistentSetValues,
  type PersistentSet,
} from '../../domain/persistent-set.js';

describe('PersistentSet (history classification marks)', () => {
  it('behaves like a Set under adds and removes from any older version, and never changes an old version', () => {
    const op = fc.record({ add: fc.boolean(), id: fc.integer({ min: 0, max: 12 }), from: fc.nat() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 150 }), (ops) => {
        const versions: { set: PersistentSet; model: Set<string> }[] = [{ set: emptyPersistentSet(), model: new Set() }];
        for (const o of ops) {
          // usually the newest version; sometimes an older one (a holder of an old state going on from it)
          const base = o.from % 4 === 0 ? versions[o.from % versions.length]! : versions[versions.length - 1]!;
          const id = `m${o.id}`;
          const set = o.add ? persistentSetAdd(base.set, id) : persistentSetRemove(base.set, id);
          const model = new Set(base.model);
          if (o.add) model.add(id);
          else model.delete(id);
          expect(persistentSetHas(set, id)).toBe(o.add);
          expect(persistentSetSize(set)).toBe(model.size);
          versions.push({ set, model });
        }
        for (const v of versions) expect(new Set(persistentSetValues(v.set))).toEqual(v.model);
      }),
      { numRuns: 300 },
    );
  });

  it('changed in place, is the Set a model gives after the same changes, even from an older version re-rooted first', () => {
    const op = fc.record({ add: fc.boolean(), id: fc.integer({ min: 0, max: 12 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.array(op, { maxLength: 80 }), (before, inPlace) => {
        // a few persistent versions first, then the oldest one consumed: read (re-rooted) and changed in place
        let set = emptyPersistentSet();
        const model = new Set<string>();
        const first = set;
        for (const o of before) set = o.add ? persistentSetAdd(set, `m${o.id}`) : persistentSetRemove(set, `m${o.id}`);
        for (const o of inPlace) {
          persistentSetChangeInPlace(first, `m${o.id}`, o.add);
          if (o.add) model.add(`m${o.id}`);
          else model.delete(`m${o.id}`);
          expect(persistentSetHas(first, `m${o.id}`)).toBe(o.add);
        }
        expect(new Set(persistentSetValues(first))).toEqual(model);
        expect(persistentSetSize(first)).toBe(model.size);
      }),
      { numRuns: 300 },
    );
  });
});
