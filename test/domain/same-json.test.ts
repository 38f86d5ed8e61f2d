import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameJson } from '../../domain/json.js';

// sameJson answers what comparing the two JSON texts answers (key order counts), for lossless JSON values.
const json = fc.jsonValue({ maxDepth: 4, noUnicodeString: false }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** A value that is often close to `v`: itself, a copy, a copy with keys reordered, or with one leaf changed. */
const near = (v: unknown): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.constant(v),
    fc.constant(JSON.parse(JSON.stringify(v)) as unknown),
    fc.constant(reorder(v)),
    json.map((leaf) => replaceFirstLeaf(v, leaf)),
  );

const reorder = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(reorder);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)]));
};

const replaceFirstLeaf = (v: unknown, leaf: unknown): unknown => {
  if (Array.isArray(v)) return v.length === 0 ? [leaf] : [replaceFirstLeaf(v[0], leaf), ...v.slice(1)];
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v);
    return entries.length === 0 ? { k: leaf } : Object.fromEntries([[entries[0]![0], replaceFirstLeaf(entries[0]![1], leaf)], ...entries.slice(1)]);
  }
  return leaf;
};

describe('sameJson', () => {
  it('is JSON.stringify(a) === JSON.stringify(b), on unrelated and on nearly equal values', () => {
    fc.assert(
      fc.property(json.chain((a) => fc.tuple(fc.constant(a), fc.oneof(json, near(a)))), ([a, b]) => {
        expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: 3000 },
    );
  });

  it('tells message content apart the way the text does: a reordered block is a different content', () => {
    expect(sameJson([{ type: 'text', text: 'a' }], [{ type: 'text', text: 'a' }])).toBe(true);
    expect(sameJson([{ type: 'text', text: 'a' }], [{ text: 'a', type: 'text' }])).toBe(false);
    expect(sameJson([{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(0, -0)).toBe(true);
  });
});
