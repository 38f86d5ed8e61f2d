import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLinesLogger } from '../../runtime/logger.js';

describe('jsonLinesLogger', () => {
  it('writes the time of every record as toISOString does, however the records follow one another', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: -5000, max: 0 }), fc.double({ min: -5000, max: 5000, noNaN: true }), fc.double({ min: -1e13, max: 1e13, noNaN: true })), { minLength: 1, maxLength: 20 }), (times) => {
        const lines: string[] = [];
        let i = 0;
        const logger = jsonLinesLogger({ write: (l) => lines.push(l), now: () => times[i]! });
        for (; i < times.length; i++) logger.log('info', 'm');
        expect(lines.map((l) => JSON.parse(l).time)).toEqual(times.map((t) => new Date(t).toISOString()));
      }),
      { numRuns: 500 },
    );
  });

  it('records in the same millisecond share the time; the next millisecond gets its own', () => {
    let t = 5;
    const lines: string[] = [];
    const logger = jsonLinesLogger({ write: (l) => lines.push(l), now: () => t });
    logger.log('info', 'a');
    logger.log('info', 'b');
    t = 6;
    logger.log('info', 'c');
    expect(lines.map((l) => JSON.parse(l).time)).toEqual(['1970-01-01T00:00:00.005Z', '1970-01-01T00:00:00.005Z', '1970-01-01T00:00:00.006Z']);
  });
});
