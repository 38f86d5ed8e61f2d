import { describe, expect, it } from 'vitest';
import { readAhead } from '../../projections/worker/read-ahead.js';

/** A source that logs each pull and each end, and yields 1…n. */
const source = (n: number, log: string[]): AsyncIterable<number> => ({
  [Symbol.asyncIterator]: () => {
    let i = 0;
    return {
      next: async () => {
        log.push(`pull ${i + 1}`);
        return i < n ? { done: false, value: ++i } : { done: true, value: undefined };
      },
      return: async () => {
        log.push('end');
        return { done: true, value: undefined };
      },
    };
  },
});

describe('readAhead', () => {
  it('asks for the next value while the consumer works on one it may prefetch after, not after the others', async () => {
    const log: string[] = [];
    const seen: number[] = [];
    for await (const v of readAhead(source(4, log), (v) => v !== 2)) {
      log.push(`use ${v}`);
      seen.push(v);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    // after 1: pull 2 before use 1; after 2 (no prefetch): pull 3 only when asked
    expect(log).toEqual(['pull 1', 'pull 2', 'use 1', 'use 2', 'pull 3', 'pull 4', 'use 3', 'pull 5', 'use 4']);
  });

  it('ends the source when the consumer stops early, once the fetch in flight settled', async () => {
    const log: string[] = [];
    for await (const v of readAhead(source(10, log), () => true)) {
      if (v === 2) break;
    }
    await new Promise((r) => setTimeout(r, 0));
    expect(log).toEqual(['pull 1', 'pull 2', 'pull 3', 'end']);
  });

  it('passes a failure of the source on', async () => {
    const failing: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return { next: async () => (i++ === 0 ? { done: false, value: 1 } : Promise.reject(new Error('read failed'))) };
      },
    };
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const v of readAhead(failing, () => true)) seen.push(v);
      })(),
    ).rejects.toThrow('read failed');
    expect(seen).toEqual([1]);
  });
});
