import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonObject } from '../../domain/json.js';
import { mapSealUnits, sealedOf, type SealedContent } from '../../domain/sealed-content.js';

/** The sealed sidecars as `mapSealUnits` visits the units: what `sealedOf` reads without copying the data. */
const byMap = (type: string, data: unknown): SealedContent[] => {
  const out: SealedContent[] = [];
  mapSealUnits(type, data, (o) => {
    if (isJsonObject(o.sealed)) out.push(o.sealed as SealedContent);
    return o;
  });
  return out;
};

const TYPES = ['agent/inbox/spliced', 'user/message', 'assistant/message', 'assistant/chunk', 'tool/call', 'tool/result', 'subagent/end', 'turn/end', 'request/header', 'request/error', 'step/start'];

describe('sealedOf', () => {
  it('finds the sidecars of a splice in unit order, skipping units that are not objects or not sealed', () => {
    const s1 = { keyId: 'k1', mac: 'a' };
    const s2 = { keyId: 'k2', mac: 'b' };
    const data = { target: 'next-turn', start: 0, inserted: [{ id: 'a', sealed: s1 }, 7, { id: 'b' }, { id: 'c', sealed: s2 }, { id: 'd', sealed: 'x' }] };
    expect(sealedOf('agent/inbox/spliced', data)).toEqual([s1, s2]);
    expect(sealedOf('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [] })).toEqual([]);
    expect(sealedOf('user/message', { id: 'a', sealed: s1 })).toEqual([s1]);
    expect(sealedOf('step/start', { sealed: s1 })).toEqual([]);
  });

  it('is what mapSealUnits visits, for any type and data (property)', () => {
    const sealed = fc.record({ keyId: fc.string(), mac: fc.string() });
    const unit = fc.oneof(fc.record({ id: fc.string(), sealed: fc.oneof(sealed, fc.string(), fc.constant(null)) }, { requiredKeys: ['id'] }), fc.integer(), fc.constant(null));
    const data = fc.oneof(
      fc.record({ inserted: fc.array(unit, { maxLength: 6 }), sealed: fc.option(sealed), lastAssistantText: fc.option(fc.string()), error: fc.option(fc.record({ message: fc.string() })) }),
      unit,
      fc.array(unit),
    );
    fc.assert(
      fc.property(fc.constantFrom(...TYPES), data, (type, d) => {
        expect(sealedOf(type, d)).toEqual(byMap(type, d));
      }),
      { numRuns: 3000 },
    );
  });
});
