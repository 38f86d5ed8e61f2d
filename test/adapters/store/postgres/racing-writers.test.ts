import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { isConcurrencyError, type ConcurrencyError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { describePg, dropSchema, PG_URL, postgresAvailable, uniqueSchema } from './pg-test-support.js';

const WRITERS = 8;
const schema = uniqueSchema('race');
/** Each writer is its own store with its own pool: separate connections, like separate processes. */
let writers: PostgresEventStore[] = [];

beforeAll(async () => {
  if (!postgresAvailable) return;
  writers = await Promise.all(Array.from({ length: WRITERS }, () => openPostgresEventStore({ connectionString: PG_URL, schema, poolSize: 2 })));
});
afterAll(async () => {
  if (!postgresAvailable) return;
  await Promise.all(writers.map((w) => w.close()));
  await dropSchema(schema);
});

describePg('PostgreSQL store: N racing writers on separate connections', () => {
  it('creating one stream with no_stream: exactly one wins, the others see its revision', async () => {
    const results = await Promise.allSettled(writers.map((w, i) => w.append('fresh', [ev(`w${i}-a`), ev(`w${i}-b`)], 'no_stream')));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(WRITERS - 1);
    for (const l of lost) {
      expect(isConcurrencyError(l.reason)).toBe(true);
      expect((l.reason as ConcurrencyError).actual).toBe(1n);
    }
    expect((await collect(() => writers[0]!.read('fresh'))).map((e) => e.revision)).toEqual([0n, 1n]);
  });

  it('the same expected revision, round after round: one winner per round, losers get the actual revision', async () => {
    await writers[0]!.append('contended', [ev('base')], 'no_stream');
    for (let round = 0; round < 10; round++) {
      const expected = BigInt(round);
      const results = await Promise.allSettled(writers.map((w, i) => w.append('contended', [ev(`r${round}-w${i}`)], expected)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(isConcurrencyError(r.reason)).toBe(true);
          expect((r.reason as ConcurrencyError).actual).toBe(expected + 1n);
        }
      }
    }
    const events = await collect(() => writers[3]!.read('contended'));
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 11 }, (_, i) => BigInt(i)));
  });

  it("'any' appends from every writer to shared and own streams: all land, revisions and global positions contiguous", async () => {
    const before = (await collect(() => writers[0]!.readAll())).at(-1)?.position ?? -1n;
    const perWriter = 25;
    await Promise.all(
      writers.map(async (w, i) => {
        for (let k = 0; k < perWriter; k++) {
          await w.append(k % 2 === 0 ? 'shared' : `own-${i}`, [ev(`w${i}-${k}-x`), ev(`w${i}-${k}-y`)], 'any');
        }
      }),
    );
    const all = await collect(() => writers[5]!.readAll({ after: before }));
    expect(all).toHaveLength(WRITERS * perWriter * 2);
    // Positions are contiguous (no gap, no duplicate) and readAll returns them in order.
    expect(all.map((e) => e.position)).toEqual(all.map((_, i) => before + 1n + BigInt(i)));
    // Every stream's revisions are contiguous, and appear in readAll in revision order.
    const byStream = new Map<string, bigint[]>();
    for (const e of all) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e.revision]);
    for (const revisions of byStream.values()) expect(revisions).toEqual(revisions.map((_, i) => BigInt(i)));
    // Each batch stays together in the global order.
    for (let i = 0; i < all.length; i += 2) {
      expect(all[i]!.id.replace(/-x$/, '')).toBe(all[i + 1]!.id.replace(/-y$/, ''));
    }
  });

  it('racing retries of the same batch: one write, every retry gets the same result', async () => {
    const batch = [ev('idem-1'), ev('idem-2'), ev('idem-3')];
    const results = await Promise.all(writers.map((w) => w.append('idempotent', batch, 'no_stream')));
    expect(new Set(results.map((r) => r.nextExpectedRevision))).toEqual(new Set([2n]));
    expect(new Set(results.map((r) => r.position)).size).toBe(1);
    expect(await collect(() => writers[1]!.read('idempotent'))).toHaveLength(3);
  });
});
