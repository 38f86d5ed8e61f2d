import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import type { RecordedEvent, SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { describePg, dropSchema, PG_URL, postgresAvailable, uniqueSchema } from './pg-test-support.js';

const schema = uniqueSchema('order');
let store: PostgresEventStore;
let observer: pg.Client;

beforeAll(async () => {
  if (!postgresAvailable) return;
  store = await openPostgresEventStore({ connectionString: PG_URL, schema });
  observer = new pg.Client({ connectionString: PG_URL });
  await observer.connect();
});
afterAll(async () => {
  if (!postgresAvailable) return;
  await store.close();
  await observer.end();
  await dropSchema(schema);
});

/** Waits (without a clock) until some other backend is blocked on a lock while running an append. */
const untilAnAppendWaitsOnALock = async (exceptPid: number): Promise<void> => {
  for (;;) {
    const r = await observer.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND pid <> $1 AND query LIKE '%append_events%'`,
      [exceptPid],
    );
    if (r.rows[0]!.n > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
};

describePg('PostgreSQL store: global order under concurrency', () => {
  it('readAll never skips an event whose lower position was still uncommitted when a reader passed by', async () => {
    const before = await collect(() => store.readAll());
    const cursor = before.at(-1)?.position ?? -1n;

    // A subscriber that is live before anything below happens.
    const ac = new AbortController();
    const sub = store.subscribeAll({ after: cursor, signal: ac.signal })[Symbol.asyncIterator]();
    expect((await sub.next()).value).toEqual({ kind: 'caught-up' });

    // Transaction A takes the next global position and stays open.
    const a = new pg.Client({ connectionString: PG_URL });
    await a.connect();
    try {
      const aPid = (await a.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await a.query('BEGIN');
      const taken = await a.query<{ position: string }>(
        `SELECT last_position::text AS position FROM "${schema}".append_events($1, 'any', ARRAY['a1'], ARRAY['t'], ARRAY[1]::float8[], ARRAY['{"from":"A"}'], ARRAY[false], true)`,
        ['gap-a'],
      );
      const aPosition = BigInt(taken.rows[0]!.position);

      // Writer B (another connection, through the store) starts after A: it must not commit a higher position first.
      let bSettled = false;
      const b = store.append('gap-b', [ev('b1')], 'any').finally(() => {
        bSettled = true;
      });
      await untilAnAppendWaitsOnALock(aPid);
      expect(bSettled).toBe(false);

      // A reader passing by now sees neither A's nor B's event, so it cannot move its cursor past A's position.
      const during = await collect(() => store.readAll({ after: cursor }));
      expect(during.filter((e) => e.stream === 'gap-a' || e.stream === 'gap-b')).toEqual([]);

      await a.query('COMMIT');
      const bResult = await b;
      expect(bResult.position > aPosition).toBe(true);

      const after = await collect(() => store.readAll({ after: cursor }));
      expect(after.map((e) => [e.stream, e.id, e.position])).toEqual([
        ['gap-a', 'a1', aPosition],
        ['gap-b', 'b1', bResult.position],
      ]);

      // The live subscriber got both, in commit order.
      const live: RecordedEvent[] = [];
      while (live.length < 2) {
        const next = (await sub.next()) as IteratorResult<SubscriptionMessage>;
        if (next.done) break;
        if (next.value.kind === 'event') live.push(next.value.event);
      }
      expect(live.map((e) => e.id)).toEqual(['a1', 'b1']);
    } finally {
      await a.query('ROLLBACK').catch(() => undefined);
      await a.end();
      ac.abort();
      await sub.return?.();
    }
  });

  it('an aborted append gives its positions back: the global order stays contiguous', async () => {
    const start = (await collect(() => store.readAll())).at(-1)?.position ?? -1n;
    const a = new pg.Client({ connectionString: PG_URL });
    await a.connect();
    try {
      await a.query('BEGIN');
      await a.query(
        `SELECT * FROM "${schema}".append_events('rolled-back', 'any', ARRAY['r1','r2'], ARRAY['t','t'], ARRAY[1,1]::float8[], ARRAY['1','2'], ARRAY[false,false], true)`,
      );
      await a.query('ROLLBACK');
    } finally {
      await a.end();
    }
    const r = await store.append('after-rollback', [ev('z')], 'no_stream');
    expect(r.position).toBe(start + 1n);
    expect(await store.revision('rolled-back')).toBe('no_stream');
  });
});
