/**
 * fsync (and write) errors after a JSONL append wrote its bytes, through the fs-ops seam. With a working rollback
 * the store undoes the write and says `store-io` (nothing written); when the rollback fails too after the index
 * record was written, recovery decides, and the store says `unknown-outcome`. Either way a session log on it
 * continues with each event stored once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { isUnknownOutcomeError } from '../../../../runtime/ports/store-errors.js';
import { runSessionUnderFaults } from '../../../support/unknown-outcome-run.js';
import { FaultyFs, type OpKind } from './support/faulty-fs.js';
import { collect } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-unknown-'));
  dirs.push(d);
  return d;
};
const ev = (id: string) => ({ id, type: 'fault/test', time: 1, data: { id } });

describe('JSONL unknown outcomes (injected fsync and write errors)', () => {
  it('a journal fsync error whose rollback fails is unknown-outcome; sending the batch again stores it once', async () => {
    const fs = new FaultyFs();
    const store = await openJsonlEventStore(freshDir(), { durability: 'fsync', fs });
    await store.append('s', [ev('a')], 'no_stream');
    fs.armKind('sync', 0, 1); // the journal record is written; its fsync fails, and so does undoing it
    const e = await store.append('s', [ev('b'), ev('c')], 0n).then(() => null, (x: unknown) => x);
    expect(isUnknownOutcomeError(e)).toBe(true);
    fs.disarm();
    // recovery decides whether the journaled batch counts; either way the same batch again lands once
    await store.append('s', [ev('b'), ev('c')], 0n);
    expect((await collect(store.read('s'))).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  for (const durability of ['fsync', 'group'] as const) {
    it(`100 randomized fsync/write errors (${durability}), with and without a working rollback: the session continues, each event once`, async () => {
      const fs = new FaultyFs();
      const store = await openJsonlEventStore(freshDir(), { durability, fs });
      try {
        const kinds: OpKind[] = ['sync', 'sync', 'write'];
        const report = await runSessionUnderFaults({
          store,
          stream: 'session/s',
          everyCheckpointResolves: false, // a clean rollback is a plain store-io failure: retried at the next checkpoint
          arm: (random) => {
            const kind = kinds[Math.floor(random() * kinds.length)]!;
            // every append writes and fsyncs at least once (the journal's fsync; more for a new stream file)
            const n = 0;
            const broken = random() < 0.5 ? 1 : false;
            fs.armKind(kind, n, broken);
            return `${kind} #${n}${broken ? ', rollback broken' : ''}`;
          },
        });
        expect(report.events).toBeGreaterThan(100);
        expect(fs.firedCount).toBeGreaterThanOrEqual(100);
      } finally {
        fs.disarm();
        await store.close();
      }
    }, 60_000);
  }
});
