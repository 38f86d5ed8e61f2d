import { describe, expect, it } from 'vitest';
import { batchedLines } from '../../../adapters/cli/batched-lines.js';

describe('batchedLines', () => {
  it('writes the lines of one turn of the event loop in one write, in order, and flush writes the rest at once', async () => {
    const writes: string[] = [];
    const log = batchedLines((chunk) => writes.push(chunk));
    log.line('a');
    log.line('b');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n']);
    log.line('c');
    log.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });
});
