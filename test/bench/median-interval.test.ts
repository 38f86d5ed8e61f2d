import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { median } from '../../bench/support/machine.js';
import { medianInterval } from '../../bench/support/median-interval.js';

/** P(B ≤ j), B ~ Binomial(n, ½), summed term by term from the binomial coefficients. */
const cdf = (n: number, j: number): number => {
  let c = 1;
  let sum = 0;
  for (let i = 0; i <= j; i++) {
    sum += c;
    c = (c * (n - i)) / (i + 1);
  }
  return sum / 2 ** n;
};

describe('medianInterval (the benchmarks\' confidence interval of a median pair ratio)', () => {
  it('is the order-statistic interval of the binomial table: 12 samples → 3rd and 10th (96.1 %), 40 → 15th and 26th (91.9 %)', () => {
    const ranks = (n: number) => Array.from({ length: n }, (_, i) => n - i); // given unsorted
    expect(medianInterval(ranks(12))).toEqual({ low: 3, high: 10, coverage: 1 - 2 * cdf(12, 2) });
    expect(medianInterval(ranks(12)).coverage).toBeCloseTo(0.9614, 4);
    expect(medianInterval(ranks(40))).toEqual({ low: 15, high: 26, coverage: 1 - 2 * cdf(40, 14) });
    expect(medianInterval(ranks(40)).coverage).toBeCloseTo(0.9193, 4);
  });

  it('holds the sample median, reaches the level asked for, and is the narrowest that does', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 5, maxLength: 200 }), fc.constantFrom(0.8, 0.9, 0.95), (xs, level) => {
        const sorted = [...xs].sort((a, b) => a - b);
        const n = xs.length;
        const { low, high, coverage } = medianInterval(xs, level);
        expect(low).toBeLessThanOrEqual(sorted[Math.floor((n - 1) / 2)]!);
        expect(high).toBeGreaterThanOrEqual(sorted[Math.ceil((n - 1) / 2)]!);
        const k = sorted.indexOf(low) + 1; // the rank used (the values are distinct)
        expect(high).toBe(sorted[n - k]);
        if (n >= 6) expect(coverage).toBeGreaterThanOrEqual(level);
        // one rank further in would fall short of the level (or cross the middle)
        const inner = 1 - 2 * cdf(n, k);
        expect(inner < level || k + 1 > Math.ceil(n / 2)).toBe(true);
      }),
    );
  });

  it('with too few samples for the level, gives the whole range and its coverage; refuses none', () => {
    expect(medianInterval([5, 1, 3])).toEqual({ low: 1, high: 5, coverage: 0.75 });
    expect(() => medianInterval([])).toThrow(RangeError);
  });
});

describe('median (the benchmarks\' shared one)', () => {
  it('is the middle value, or the mean of the two middle ones for an even count (not the upper one)', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([0.93, 0.88, 0.86, 0.97])).toBeCloseTo(0.905, 10);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 50 }), (xs) => {
        const m = median(xs);
        // as many values at or below it as at or above it
        expect(xs.filter((x) => x <= m).length * 2).toBeGreaterThanOrEqual(xs.length);
        expect(xs.filter((x) => x >= m).length * 2).toBeGreaterThanOrEqual(xs.length);
      }),
    );
  });
});
