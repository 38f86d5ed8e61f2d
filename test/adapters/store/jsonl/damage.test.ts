import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkJsonlStore, openJsonlEventStore, rebuildJsonlIndex } from '../../../../adapters/store/jsonl/index.js';
import { isStoreCorruptError } from '../../../../runtime/ports/store-errors.js';
import { applyDamage, copyStore, damagesOf, describeDamage, quarantineLog, scratchParent, seedStore, snapshotStore, type SeededStore } from './support/damage.js';
import { collect } from './support/verify.js';

/**
 * Fault injection: truncate, flip a byte of, or delete the index or a stream file at many offsets, then open the
 * store. Either open refuses with StoreCorruptError and every byte stays where it was, or the store opens and
 * every read returns exactly the committed events or refuses with StoreCorruptError — the only loss allowed is
 * the last commit, when the damage looks exactly like a crash in it, and then its bytes are in the quarantine.
 * Index damage that open refuses is repaired by rebuilding the index: exactly the committed events come back.
 * `STEERLOG_DAMAGE_STEP=1` damages every byte (default: every 19th).
 */
const STEP = Number(process.env.STEERLOG_DAMAGE_STEP ?? 19);
let parent: string;
let checkpointed: SeededStore;
let journalPending: SeededStore;
beforeAll(async () => {
  parent = scratchParent('steerlog-damage-');
  checkpointed = await seedStore(parent);
  journalPending = await seedStore(parent, { journalPending: true });
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));

type Outcome = 'refused' | 'intact' | 'read-refused' | 'last-commit-quarantined';

const readEverything = async (dir: string): Promise<{ ids: string[]; perStream: Map<string, string[]> } | 'read-refused'> => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  try {
    const ids = (await collect(store.readAll())).map((e) => e.id);
    const perStream = new Map<string, string[]>();
    for (const s of ['s/a', 's/b', 's/c']) perStream.set(s, (await collect(store.read(s))).map((e) => e.id));
    return { ids, perStream };
  } catch (e) {
    if (isStoreCorruptError(e)) return 'read-refused';
    throw e;
  } finally {
    await store.close();
  }
};

const expectedStreams = (seed: SeededStore, ids: readonly string[]): Map<string, string[]> => {
  const m = new Map<string, string[]>([['s/a', []], ['s/b', []], ['s/c', []]]);
  for (const c of seed.committed) if (ids.includes(c.id)) m.get(c.stream)!.push(c.id);
  return m;
};

describe('a damaged JSONL store directory', () => {
  it.each([
    ['its group journal checkpointed', () => checkpointed, STEP],
    ['its group journal still pending (replayed at open)', () => journalPending, STEP * 2 + 1],
  ] as const)('is refused untouched, or reads exactly the committed events; never a silently shorter history (%s)', async (_, seedOf, step) => {
    const seed = seedOf();
    const all = seed.committed.map((c) => c.id);
    const withoutLast = all.filter((id) => !seed.lastCommit.includes(id));
    const tally: Record<Outcome, number> = { refused: 0, intact: 0, 'read-refused': 0, 'last-commit-quarantined': 0 };
    let rebuilt = 0;
    for (const damage of damagesOf(seed, step)) {
      const dir = copyStore(seed, parent);
      applyDamage(dir, damage);
      const before = snapshotStore(dir);
      const where = describeDamage(damage);
      const opened = await openJsonlEventStore(dir, { durability: 'none' }).then(
        async (s) => {
          await s.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      let outcome: Outcome;
      if (opened !== undefined) {
        expect(isStoreCorruptError(opened), `${where}: ${String(opened)}`).toBe(true);
        expect(snapshotStore(dir), where).toEqual(before);
        expect((await checkJsonlStore(dir)).ok, `${where}: store check agrees`).toBe(false);
        outcome = 'refused';
        if (damage.file === 'global.idx') {
          await rebuildJsonlIndex(dir, { sync: false });
          const back = await readEverything(dir);
          expect(back, `${where}: rebuilt`).toEqual({ ids: all, perStream: expectedStreams(seed, all) });
          expect((await checkJsonlStore(dir)).ok, `${where}: checks clean after the rebuild`).toBe(true);
          rebuilt++;
        }
      } else {
        const got = await readEverything(dir);
        if (got === 'read-refused') outcome = 'read-refused';
        else if (got.ids.length === all.length) {
          expect(got, where).toEqual({ ids: all, perStream: expectedStreams(seed, all) });
          outcome = 'intact';
        } else {
          expect(got, `${where}: only the last commit may go`).toEqual({ ids: withoutLast, perStream: expectedStreams(seed, withoutLast) });
          expect(quarantineLog(dir), `${where}: its bytes are quarantined`).toMatch(/unfinished commit/);
          outcome = 'last-commit-quarantined';
        }
      }
      tally[outcome]++;
      rmSync(dir, { recursive: true, force: true });
    }
    // Each outcome occurs: the test sees refusals, clean reads, refused reads and the one crash-shaped loss.
    expect(tally.refused).toBeGreaterThan(50);
    expect(tally['read-refused']).toBeGreaterThan(10);
    // Without a pending journal, index damage shaped like a crash in the last commit costs that commit (into the
    // quarantine); with one, the journal writes back what the damage took from the last commit instead.
    if (seed === checkpointed) expect(tally['last-commit-quarantined']).toBeGreaterThan(0);
    else expect(tally.intact).toBeGreaterThan(5);
    expect(rebuilt).toBeGreaterThan(10);
    console.log(`damage cases (${_}): ${JSON.stringify(tally)}, index rebuilt ${rebuilt}×`);
  }, 900_000); // STEERLOG_DAMAGE_STEP=1 runs thousands of cases
});
