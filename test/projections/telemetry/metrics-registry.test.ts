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

  it('a kept series (histogramSeries, counterSeries) renders as observe and inc of the same labels do', () => {
    const op = fc.record({ histogram: fc.boolean(), labels, value: fc.double({ min: 0, max: 400, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const byLabels = new MetricsRegistry();
        const kept = new MetricsRegistry();
        for (const r of [byLabels, kept]) {
          r.histogram('h', 'a histogram');
          r.counter('c', 'a counter');
        }
        const series = new Map<string, (v: number) => void>();
        for (const o of ops) {
          if (o.histogram) byLabels.observe('h', 'a histogram', o.labels, o.value);
          else byLabels.inc('c', 'a counter', o.labels, o.value);
          const key = `${o.histogram}${JSON.stringify(Object.entries(o.labels))}`;
          let s = series.get(key);
          if (s === undefined) series.set(key, (s = o.histogram ? kept.histogramSeries('h', 'a histogram', o.labels) : kept.counterSeries('c', 'a counter', o.labels)));
          s(o.value);
        }
        expect(kept.render()).toBe(byLabels.render());
      }),
      { numRuns: 500 },
    );
  });
});
