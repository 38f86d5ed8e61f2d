import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyPersistentSet,
  persistentSetAdd,
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
});
