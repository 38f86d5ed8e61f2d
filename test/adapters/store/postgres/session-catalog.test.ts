import fc from 'fast-check';
import { expect, it } from 'vitest';
import { MIGRATIONS, migratePostgresEventStore, openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import type { NewEvent, RecordedEvent } from '../../../../runtime/ports/event-store.js';
import { catalogPageOf, type CatalogedSession, type SessionCatalogQuery } from '../../../../runtime/ports/session-catalog.js';
import { expectedRows } from '../jsonl/support/catalog-oracle.js';
import { runCli } from '../../cli/support/run-cli.js';
import { describePg, PG_URL, testSchemas } from './pg-test-support.js';
import { appendCatalogSteps, catalogEventsMaker, catalogStepArb, type CatalogStep } from '../../../support/catalog-steps.js';

/**
 * The PostgreSQL session catalog (migration 6) equals a fold of the store: after random sessions written by two
 * store instances at once, after a transaction that rolled back, a deletion, a row removed by hand and a rebuild,
 * and after the upgrade from version 5 fills it from the events already there. Pages and filters answer what the
 * port's reference paging (catalogPageOf) answers on the fold.
 */
const db = testSchemas({ poolMax: 6 });
const fresh = db.fresh;

const eventsOf = catalogEventsMaker();
type Step = CatalogStep;
const stepArb = catalogStepArb;

/** Appends the steps three at a time, from two store instances at once (a lost race is skipped). */
const run = async (stores: readonly PostgresEventStore[], steps: readonly Step[], prefix = ''): Promise<void> => {
  await appendCatalogSteps(stores, steps, eventsOf, prefix);
};

const readAll = async (store: PostgresEventStore): Promise<RecordedEvent[]> => {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
};

/** Every page of `query` with page size `limit`, each checked against the port's reference paging of `expected`, concatenated. */
const allPages = async (store: PostgresEventStore, query: SessionCatalogQuery, limit: number, expected: readonly CatalogedSession[]): Promise<CatalogedSession[]> => {
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

const assertCatalogIsFold = async (store: PostgresEventStore): Promise<void> => {
  const expected = expectedRows(await readAll(store));
  expect((await store.listSessions()).sessions).toEqual(expected);
};

describePg('PostgreSQL session catalog', () => {
  it('equals a fold of the store after random sessions from two instances; pages and filters as the port pages the fold', async () => {
    // one schema for every run (migrating one costs more than a run): each run's streams are new, and the catalog
    // must equal the fold of everything stored so far
    const schema = fresh('cat');
    const stores = [await openPostgresEventStore({ pool: db.pool, schema, listen: false }), await openPostgresEventStore({ pool: db.pool, schema, listen: false })];
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 4 }), async (steps, limit) => {
          await run(stores, steps, `r${runs++}-`);
          const store = stores[0]!;
          const expected = expectedRows(await readAll(store));
          expect((await store.listSessions()).sessions).toEqual(expected);
          for (const order of [undefined, 'newest'] as const) {
            for (const filter of [{}, { kind: 'fork' }, { parentSession: 's0' }, { sessionsOnly: true }, { status: 'open-turn' as const }, { status: 'idle' as const }, { activeSince: 1_100 }]) {
              const query: SessionCatalogQuery = { ...filter, ...(order !== undefined ? { order } : {}) };
              expect(await allPages(store, query, limit, expected)).toEqual(catalogPageOf(expected, query).sessions);
              expect(await store.listSessions(query)).toEqual(catalogPageOf(expected, query));
            }
          }
          // newest first is the oldest-first order reversed
          expect((await store.listSessions({ order: 'newest' })).sessions).toEqual([...expected].reverse());
          expect((await store.listSessions({ status: 'broken' })).sessions).toEqual([]);
        }),
        { numRuns: 6 },
      );
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('a rolled-back append, a deletion, a row removed by hand and a rebuild leave it equal to the fold', async () => {
    const schema = fresh('cat_edit');
    const store = await openPostgresEventStore({ pool: db.pool, schema, listen: false });
    try {
      const steps: Step[] = [0, 1, 2, 3].flatMap((stream) => [
        { stream, kind: 'session', types: ['turn/start'], via: 0, hashed: true },
        { stream, kind: 'session', types: ['agent/x', 'turn/end', 'turn/start'], via: 0, hashed: stream % 2 === 0 },
      ]);
      await run([store], steps);
      await assertCatalogIsFold(store);
      const before = await store.listSessions();

      // a transaction that appended and then rolled back (what a crash before COMMIT comes to) changes nothing
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SELECT * FROM "${schema}".append_events('s1', 'any', ARRAY['rb-1'], ARRAY['turn/end'], ARRAY[99999]::float8[], ARRAY['{}'], ARRAY[false], ARRAY[NULL]::text[], ARRAY[NULL]::text[], false)`);
        await client.query(`SELECT * FROM "${schema}".append_events('new-x', 'no_stream', ARRAY['rb-2'], ARRAY['session/created'], ARRAY[99999]::float8[], ARRAY['{"kind":"root","createdAt":5}'], ARRAY[false], ARRAY[NULL]::text[], ARRAY[NULL]::text[], false)`);
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      expect(await store.listSessions()).toEqual(before);

      await store.deleteStream('s2', BigInt(before.sessions.find((r) => r.sessionId === 's2')!.lastSeq) as never, { reason: 'test' });
      await assertCatalogIsFold(store);
      expect((await store.listSessions()).sessions.map((r) => r.sessionId)).not.toContain('s2');

      // a row removed by hand is folded again by the next append to its stream
      await db.pool.query(`DELETE FROM "${schema}".session_catalog WHERE stream = 's1'`);
      await run([store], [{ stream: 1, kind: 'session', types: ['agent/x'], via: 0, hashed: false }]);
      await assertCatalogIsFold(store);

      // rows lost or wrong: the rebuild folds them again
      await db.pool.query(`DELETE FROM "${schema}".session_catalog WHERE stream = 's3'`);
      await db.pool.query(`UPDATE "${schema}".session_catalog SET last_seq = 999, open_turn = NOT open_turn, kind = 'lie'`);
      expect(await store.rebuildSessionCatalog()).toBe(3);
      await assertCatalogIsFold(store);
      // and through the CLI's repair path
      await db.pool.query(`UPDATE "${schema}".session_catalog SET chain_head = NULL, last_activity = 0`);
      const url = new URL(PG_URL);
      url.searchParams.set('schema', schema);
      const repaired = await runCli('store', 'repair', url.toString(), '--json');
      expect([repaired.code, JSON.parse(repaired.stdout)]).toEqual([0, { ok: true, catalogRows: 3 }]);
      await assertCatalogIsFold(store);
    } finally {
      await store.close();
    }
  });

  it('the upgrade from version 5 fills it from the events already stored', async () => {
    const schema = fresh('cat_mig');
    const client = await db.pool.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of MIGRATIONS.filter((m) => m.version <= 5)) {
        await client.query(m.sql(schema));
        await client.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
    } finally {
      client.release();
    }
    // events written by version 5's append function (the store's code at version 5 called the same one)
    const events = [0, 1, 2, 3, 4].flatMap((stream) =>
      (
        [
          { stream, kind: stream === 4 ? 'plain' : 'session', types: ['turn/start', 'agent/x'], via: 0, hashed: true },
          { stream, kind: 'session', types: stream % 2 ? ['turn/end'] : ['agent/x'], via: 0, hashed: false },
        ] satisfies Step[]
      ).map((step, i) => ({ stream: `s${stream}`, events: eventsOf(i === 0 ? 0 : step.kind === 'session' && stream !== 4 ? 3 : 2, step, `s${stream}`, 2_000 + stream * 100 + i * 10) })),
    );
    for (const { stream, events: batch } of events) {
      await db.pool.query(`SELECT * FROM "${schema}".append_events($1, 'any', $2, $3, $4, $5, $6, $7, $8, false)`, [
        stream,
        batch.map((e) => e.id),
        batch.map((e) => e.type),
        batch.map((e) => e.time),
        batch.map((e) => JSON.stringify(e.data)),
        batch.map(() => false),
        batch.map(() => null),
        batch.map((e) => e.hash ?? null),
      ]);
    }
    expect((await migratePostgresEventStore(db.pool, schema)).applied).toEqual([6, 7, 8]);
    const store = await openPostgresEventStore({ pool: db.pool, schema, listen: false });
    try {
      await assertCatalogIsFold(store);
      expect((await store.listSessions({ sessionsOnly: true })).sessions.map((r) => r.sessionId)).toEqual(['s0', 's1', 's2', 's3']);
      await run([store], [{ stream: 0, kind: 'session', types: ['turn/end'], via: 0, hashed: true }]);
      await assertCatalogIsFold(store);
    } finally {
      await store.close();
    }
  });
});
