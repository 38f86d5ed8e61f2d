import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { IdRevisions, idHash } from '../../../../adapters/store/jsonl/id-revisions.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { isDuplicateEventIdError } from '../../../../runtime/ports/store-errors.js';
import { collect } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const ev = (id: string): NewEvent => ({ id, type: 'unit/test', time: 5, data: { id } });

/** Two distinct ids with one 32-bit hash (a birthday search over short ids: about 2^16 tries). */
const collidingPair = (): [string, string] => {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `id-${i.toString(36)}`;
    const h = idHash(id);
    const other = seen.get(h);
    if (other !== undefined) return [other, id];
    seen.set(h, id);
  }
};

describe('IdRevisions, the writer state of a stream\'s ids as hashes', () => {
  it('names every held id\'s revision among its candidates, through growth, and nothing for most others', () => {
    const ids = new IdRevisions();
    for (let r = 0; r < 50_000; r++) ids.set(`e-${r}`, r);
    expect(ids.size).toBe(50_000);
    for (let r = 0; r < 50_000; r += 7) expect(ids.candidates(`e-${r}`)).toContain(r);
    let hits = 0;
    for (let r = 0; r < 10_000; r++) hits += ids.candidates(`other-${r}`).length;
    expect(hits).toBeLessThan(5); // 10,000 lookups among 50,000 hashes of 2^32: about 0.1 expected
    expect(ids.bytes).toBeLessThanOrEqual(16 * 2 * 50_000);
  });

  it('a new id whose hash an appended id has is appended, and a retry of either batch is still recognised', async () => {
    const [a, b] = collidingPair();
    expect(idHash(a)).toBe(idHash(b));
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-id-revisions-'));
    dirs.push(dir);
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('s', [ev('first'), ev(a)], 'no_stream');
    // b only shares a's hash: new, not taken for a retry of a nor for a duplicate
    const appended = await store.append('s', [ev(b)], 1n);
    expect(appended.nextExpectedRevision).toBe(2n);
    // retries: recognised from the lines read back, nothing written again
    expect((await store.append('s', [ev('first'), ev(a)], 'any')).nextExpectedRevision).toBe(1n);
    expect((await store.append('s', [ev(b)], 'any')).nextExpectedRevision).toBe(2n);
    // a held id at another place is still a duplicate
    await expect(store.append('s', [ev(a), ev('fresh')], 'any')).rejects.toSatisfy(isDuplicateEventIdError);
    await store.close();
    // and so in a fresh process's state, read from the file
    const again = await openJsonlEventStore(dir, { durability: 'none' });
    expect((await again.append('s', [ev(b)], 'any')).nextExpectedRevision).toBe(2n);
    await expect(again.append('s', [ev('x'), ev(a)], 'any')).rejects.toSatisfy(isDuplicateEventIdError);
    expect((await collect(again.read('s'))).map((e) => e.id)).toEqual(['first', a, b]);
    await again.close();
  });
});
