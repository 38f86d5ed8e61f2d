import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assembleDeltas, type StreamDelta } from '../../domain/stream-assembly.js';

const delta: fc.Arbitrary<StreamDelta> = fc.record({ type: fc.constantFrom<'text' | 'reasoning'>('text', 'reasoning'), text: fc.string({ maxLength: 4 }) });

describe('assembleDeltas', () => {
  it('joins runs of one kind, starts a block at each change of kind, and drops empty deltas', () => {
    expect(
      assembleDeltas([
        { type: 'reasoning', text: 'a' },
        { type: 'reasoning', text: 'b' },
        { type: 'text', text: '' },
        { type: 'reasoning', text: 'c' },
        { type: 'text', text: 'x' },
        { type: 'reasoning', text: 'y' },
      ]),
    ).toEqual([{ type: 'reasoning', text: 'abc' }, { type: 'text', text: 'x' }, { type: 'reasoning', text: 'y' }]);
    expect(assembleDeltas([{ type: 'text', text: '' }])).toEqual([]);
  });

  it('keeps every non-empty delta, in order: per kind and overall, the blocks spell exactly what was streamed', () => {
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 30 }), (deltas) => {
        const blocks = assembleDeltas(deltas) as { type: 'text' | 'reasoning'; text: string }[];
        expect(blocks.map((b) => b.text).join('')).toBe(deltas.map((d) => d.text).join(''));
        for (const kind of ['text', 'reasoning'] as const) {
          expect(blocks.filter((b) => b.type === kind).map((b) => b.text).join('')).toBe(deltas.filter((d) => d.type === kind).map((d) => d.text).join(''));
        }
        blocks.forEach((b, i) => {
          expect(b.text).not.toBe('');
          if (i > 0) expect(b.type).not.toBe(blocks[i - 1]!.type);
        });
      }),
    );
  });
});
