import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../../adapters/keys/memory-key-store.js';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { scanSessions, searchSessions, SEARCHED_TYPES, type SearchQuery } from '../../../../audit/session-search.js';
import { createKeyring } from '../../../../runtime/content-opener.js';
import { runRandomSession, randomProgram } from '../../../support/random-session.js';
import { SECRETS, writeSecretSession } from '../../../support/secret-session.js';
import { runCli } from '../../cli/support/run-cli.js';
import { describePg, dropSchema, PG_URL, postgresAvailable, uniqueSchema } from './pg-test-support.js';

const schema = uniqueSchema('search');
let store: PostgresEventStore;
let pool: pg.Pool;
const keys = new MemoryKeyStore();
beforeAll(async () => {
  if (!postgresAvailable) return;
  pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  store = await openPostgresEventStore({ pool, schema });
  // random sessions (sends, steers, injected contexts, tool calls and results, failed requests), copied from memory
  const programs = fc.sample(randomProgram, { numRuns: 6, seed: 34 });
  for (const [i, p] of programs.entries()) {
    const { store: memory } = await runRandomSession(p, `rand-${i}`);
    const events = [];
    for await (const r of memory.read(`rand-${i}`)) events.push({ id: r.id, type: r.type, time: r.time, data: r.data, ...(r.metadata ? { metadata: r.metadata } : {}) });
    await store.append(`rand-${i}`, events, 'no_stream');
  }
  // sealed content: one session per actor key, one in clear
  await writeSecretSession(store, 'sealed', { keys, perActor: true });
  await writeSecretSession(store, 'clear');
  // events another writer stored without the index (the old append_events): pending rows, read and judged here
  await pool.query(
    `SELECT * FROM "${schema}".append_events('old-writer', 'no_stream', ARRAY['o1','o2'], ARRAY['user/message','tool/call'], ARRAY[5,6]::float8[],
       ARRAY['{"id":"u","role":"user","content":[{"type":"text","text":"Acted 100% on_it"}],"source":{"kind":"user"}}', '{"turn":1,"step":1,"callId":"c","name":"act","arguments":"{\\"n\\":1}"}'],
       ARRAY[false,false], ARRAY[NULL,NULL]::text[], ARRAY[NULL,NULL]::text[], false)`,
  );
});
afterAll(async () => {
  if (!postgresAvailable) return;
  await store.close();
  await pool.end();
  await dropSchema(schema);
});

const WORDS = ['acted', 'ACTED c1', 'ok', 'steer', 'followup-1', 'staged', 'calling', 'par', '%', '100%', 'on_it', '_', 'n', '"n"', 'secret', SECRETS.result.toLowerCase(), 'done: answer', 'final', 'zzz-nothing'];

describePg('steerlog search on PostgreSQL: the text index answers what the streaming scan answers', () => {
  it('is maintained with the events: indexed text rows, sealed rows without their text, pending rows from a writer without the index', async () => {
    const rows = (await pool.query<{ text: string | null; sealed: boolean; pending: boolean }>(`SELECT text, sealed, pending FROM "${schema}".event_text ORDER BY position`)).rows;
    expect(rows.filter((r) => r.pending)).toHaveLength(2);
    expect(rows.some((r) => r.sealed && r.text === null)).toBe(true);
    expect(rows.map((r) => r.text ?? '').join('\n')).not.toContain(SECRETS.result.toLowerCase().slice(0, 10).replace('result', 'x'));
    expect(rows.filter((r) => r.text !== null).every((r) => r.text === r.text!.toLowerCase())).toBe(true);
    // the sealed session's secrets are never stored in clear in the index
    const sealedText = (await pool.query<{ text: string | null }>(`SELECT t.text FROM "${schema}".event_text t JOIN "${schema}".events e USING (position) WHERE e.stream = 'sealed'`)).rows;
    expect(JSON.stringify(sealedText)).not.toMatch(/secret/i);
  });

  it('equal results for words, types, time bounds, a session and limits; with the key and without it', async () => {
    const queries = fc.sample(
      fc.record({
        text: fc.subarray(WORDS, { minLength: 1, maxLength: 2 }).map((w) => w.join(' ')),
        types: fc.option(fc.subarray([...SEARCHED_TYPES, 'request/header', 'turn/start'], { minLength: 1 }), { nil: undefined }),
        since: fc.option(fc.integer({ min: 1_700_000_000_000 - 10, max: 1_700_000_000_100 }), { nil: undefined }),
        until: fc.option(fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_200 }), { nil: undefined }),
        session: fc.option(fc.constantFrom('rand-0', 'rand-3', 'sealed', 'clear', 'old-writer'), { nil: undefined }),
        limit: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      }),
      { numRuns: 120, seed: 3434 },
    );
    let found = 0;
    for (const raw of queries) {
      const q = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)) as unknown as SearchQuery;
      for (const keyring of [createKeyring(keys), createKeyring(null)]) {
        const indexed = await searchSessions(store, q, keyring);
        expect(indexed).toEqual(await scanSessions(store, q, keyring));
        found += indexed.total;
      }
    }
    // the queries found things: the comparison is not one of empty answers
    expect(found).toBeGreaterThan(100);
    const sealed = await searchSessions(store, { text: SECRETS.result }, createKeyring(keys));
    expect(sealed.sessions).toEqual([{ session: 'sealed', hits: 1 }, { session: 'clear', hits: 1 }]);
    const without = await searchSessions(store, { text: SECRETS.result }, createKeyring(null));
    expect(without.sessions).toEqual([{ session: 'clear', hits: 1 }]);
    expect(without.sealedUnsearched).toBeGreaterThan(0);
  });

  it('steerlog search --store postgres://… answers from the index what the scan answers', async () => {
    const r = await runCli('search', 'acted', '--store', `${PG_URL}?schema=${schema}`, '--keys', 'file:/nonexistent/keys.json', '--json');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const scanned = await scanSessions(store, { text: 'acted' }, createKeyring(null));
    expect(scanned.total).toBeGreaterThan(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(scanned)));
  });
});
