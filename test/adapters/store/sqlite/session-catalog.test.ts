import fc from 'fast-check';
import { expect, it } from 'vitest';
import { connectSqlite } from '../../../../adapters/store/sqlite/driver.js';
import { openSqliteEventStore, type SqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import { streamRevision, type RecordedEvent } from '../../../../runtime/ports/event-store.js';
import { catalogPageOf, type CatalogedSession, type SessionCatalogQuery } from '../../../../runtime/ports/session-catalog.js';
import { appendCatalogSteps, catalogEventsMaker, catalogStepArb, type CatalogStep } from '../../../support/catalog-steps.js';
import { expectedRows } from '../jsonl/support/catalog-oracle.js';
import { runCli } from '../../cli/support/run-cli.js';
import { describeSqlite, sqliteFiles } from './sqlite-test-support.js';

/**
 * The SQLite session catalog equals a fold of the store: after random sessions written by two connections on one
 * file, after a deletion, a row removed by hand (folded again by the next append), rows made wrong and a rebuild
 * (the store's, and `steerlog store repair sqlite:<file>`).
 * Pages and filters answer what the port's reference paging (catalogPageOf) answers on the fold.
 */
const freshFile = sqliteFiles();
const eventsOf = catalogEventsMaker();

const readAll = async (store: SqliteEventStore): Promise<RecordedEvent[]> => {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
};

const allPages = async (store: SqliteEventStore, query: SessionCatalogQuery, limit: number, expected: readonly CatalogedSession[]): Promise<CatalogedSession[]> => {
  const out: CatalogedSession[] = [];
  let after: string | undefined;
  for (;;) {
    const asked = { ...query, limit, ...(after !== undefined ? { after } : {}) };
    const page = await store.listSessions(asked);
    expect(page, JSON.stringify(asked)).toEqual(catalogPageOf(expected, asked));
    out.push(...page.sessions);
    if (page.next === null) return out;
    after = page.next;
  }
};

const assertCatalogIsFold = async (store: SqliteEventStore): Promise<void> => {
  expect((await store.listSessions()).sessions).toEqual(expectedRows(await readAll(store)));
};

/** A second connection on the store's file, for edits by hand (as `sqlite3` would make them). */
const edit = async (store: SqliteEventStore, sql: string): Promise<void> => {
  const db = connectSqlite(store.file, { readOnly: false, busyTimeoutMs: 5000 });
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
};

describeSqlite('SQLite session catalog', () => {
  it('equals a fold of the store after random sessions from two connections; pages and filters as the port pages the fold', async () => {
    const file = freshFile();
    const stores = [await openSqliteEventStore(file), await openSqliteEventStore(file)];
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(catalogStepArb, { minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 4 }), async (steps: CatalogStep[], limit) => {
          await appendCatalogSteps(stores, steps, eventsOf, `r${runs++}-`);
          const store = stores[0]!;
          const expected = expectedRows(await readAll(store));
          expect((await store.listSessions()).sessions).toEqual(expected);
          for (const order of [undefined, 'newest'] as const) {
            for (const filter of [{}, { kind: 'fork' }, { parentSession: 's0' }, { sessionsOnly: true }, { status: 'open-turn' as const }, { status: 'idle' as const }, { activeSince: 1_100 }]) {
              const query: SessionCatalogQuery = { ...filter, ...(order !== undefined ? { order } : {}) };
              expect(await allPages(store, query, limit, expected)).toEqual(catalogPageOf(expected, query).sessions);
            }
          }
          expect((await store.listSessions({ status: 'broken' })).sessions).toEqual([]);
        }),
        { numRuns: 25 },
      );
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('a deletion, a row removed by hand and a rebuild leave it equal to the fold', async () => {
    const store = await openSqliteEventStore(freshFile());
    try {
      const steps: CatalogStep[] = [0, 1, 2, 3].flatMap((stream) => [
        { stream, kind: 'session', types: ['turn/start'], via: 0, hashed: true },
        { stream, kind: 'session', types: ['agent/x', 'turn/end', 'turn/start'], via: 0, hashed: stream % 2 === 0 },
      ]);
      await appendCatalogSteps([store], steps, eventsOf);
      await assertCatalogIsFold(store);
      const before = await store.listSessions();

      await store.deleteStream('s2', streamRevision(before.sessions.find((r) => r.sessionId === 's2')!.lastSeq));
      await assertCatalogIsFold(store);
      expect((await store.listSessions()).sessions.map((r) => r.sessionId)).not.toContain('s2');

      // a row removed by hand is folded again by the next append to its stream
      await edit(store, `DELETE FROM session_catalog WHERE stream = 's1'`);
      await appendCatalogSteps([store], [{ stream: 1, kind: 'session', types: ['agent/x'], via: 0, hashed: false }], eventsOf);
      await assertCatalogIsFold(store);

      // rows lost or wrong: the rebuild folds them again
      await edit(store, `DELETE FROM session_catalog WHERE stream = 's3'; UPDATE session_catalog SET last_seq = 999, open_turn = 1 - open_turn, kind = 'lie'`);
      expect((await store.listSessions()).sessions).not.toEqual(expectedRows(await readAll(store)));
      expect(await store.rebuildSessionCatalog()).toBe(3);
      await assertCatalogIsFold(store);
      // and through the CLI's repair path
      await edit(store, `UPDATE session_catalog SET chain_head = NULL, last_activity = 0`);
      const repaired = await runCli('store', 'repair', `sqlite:${store.file}`, '--json');
      expect([repaired.code, JSON.parse(repaired.stdout)]).toEqual([0, { ok: true, catalogRows: 3 }]);
      await assertCatalogIsFold(store);
    } finally {
      await store.close();
    }
  });
});
