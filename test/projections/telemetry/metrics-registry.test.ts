import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MetricsRegistry, type MetricLabels } from '../../../projections/telemetry/metrics.js';

/** The series lines of counter `c` in the registry's text (one per series). */
const seriesOf = (r: MetricsRegistry): string[] => r.render().split('\n').filter((l) => l.startsWith('c{') || l.startsWith('c '));

describe('MetricsRegistry series keys', () => {
  // labels whose names and values hold the characters a key could confuse (digits, ':', quotes, commas)
  const text = fc.string({ unit: fc.constantFrom('a', '1', ':', '"', ',', '=', '['), maxLength: 4 });
  const labels = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'a1', '1:'), text), { maxLength: 3 }).map((pairs) => Object.fromEntries(pairs) as MetricLabels);

  it('two observations are one series exactly when their labels are the same entries in the same order', () => {
    fc.assert(
      fc.property(labels, labels, (x, y) => {
        const r = new MetricsRegistry();
        r.inc('c', 'a counter', x);
        r.inc('c', 'a counter', y, 2);
        const same = JSON.stringify(Object.entries(x)) === JSON.stringify(Object.entries(y));
        const lines = seriesOf(r);
        expect(lines.length).toBe(same ? 1 : 2);
        if (same) expect(lines[0]!.endsWith(' 3')).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

});
