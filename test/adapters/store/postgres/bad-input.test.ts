import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import {
  isConcurrencyError,
  isDuplicateEventIdError,
  isEventTooLargeError,
  isInvalidEventError,
  isInvalidStreamIdError,
  isStoreClosedError,
  type StoreErrorCode,
} from '../../../../runtime/ports/store-errors.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { describePg, dropSchema, PG_URL, postgresAvailable, uniqueSchema } from './pg-test-support.js';

const schema = uniqueSchema('bad');
let store: PostgresEventStore;
let db: pg.Client;

beforeAll(async () => {
  if (!postgresAvailable) return;
  store = await openPostgresEventStore({ connectionString: PG_URL, schema, maxEventBytes: 4096 });
  db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  await store.append('existing', [ev('e-0'), ev('e-1')], 'no_stream');
});
afterAll(async () => {
  if (!postgresAvailable) return;
  await store.close();
  await db.end();
  await dropSchema(schema);
});

/** Everything the store keeps, as text: any write shows up as a difference. */
const tables = async (): Promise<string> => {
  const q = async (sql: string): Promise<unknown[]> => (await db.query(sql)).rows;
  return JSON.stringify({
    events: await q(`SELECT position::text, stream, revision::text, id, type, time, data::text, ignorable FROM "${schema}".events ORDER BY position`),
    streams: await q(`SELECT stream, revision::text FROM "${schema}".streams ORDER BY stream`),
    counter: await q(`SELECT last::text FROM "${schema}".global_position`),
  });
};

const codeOf = async (fn: () => Promise<unknown>): Promise<StoreErrorCode | 'none'> => {
  try {
    await fn();
    return 'none';
  } catch (e) {
    return (e as { code: StoreErrorCode }).code;
  }
};

describePg('PostgreSQL store: typed errors on bad input leave the tables unchanged', () => {
  const cases: [string, () => Promise<unknown>, StoreErrorCode][] = [
    ['empty stream id', () => store.append('', [ev('a')], 'any'), 'invalid-stream-id'],
    ['NUL in stream id', () => store.append('a\u0000b', [ev('a')], 'any'), 'invalid-stream-id'],
    ['over-long stream id', () => store.append('x'.repeat(201), [ev('a')], 'any'), 'invalid-stream-id'],
    ['NaN in data', () => store.append('existing', [ev('a'), { ...ev('b'), data: { x: Number.NaN } }], 'any'), 'invalid-event'],
    ['-0 in data', () => store.append('existing', [{ ...ev('a'), data: [-0] }], 'any'), 'invalid-event'],
    ['NUL in event id', () => store.append('existing', [ev('ok'), ev('a\u0000b')], 'any'), 'invalid-event'],
    ['NUL in event type', () => store.append('existing', [ev('ok'), ev('a', 't\u0000')], 'any'), 'invalid-event'],
    ['lone surrogate in event id', () => store.append('existing', [ev('\ud800')], 'any'), 'invalid-event'],
    ['bad expected revision', () => store.append('existing', [ev('a')], -3n), 'invalid-event'],
    ['oversized event', () => store.append('existing', [ev('a'), { ...ev('big'), data: 'x'.repeat(5000) }], 'any'), 'event-too-large'],
    ['id twice in a batch', () => store.append('existing', [ev('d'), ev('d')], 'any'), 'duplicate-event-id'],
    ['partial retry', () => store.append('existing', [ev('e-1'), ev('new')], 'any'), 'duplicate-event-id'],
    ['retry at another place', () => store.append('existing', [ev('e-1'), ev('e-0')], 'any'), 'duplicate-event-id'],
    ['stale revision', () => store.append('existing', [ev('a')], 0n), 'concurrency'],
    ['no_stream on an existing stream', () => store.append('existing', [ev('a')], 'no_stream'), 'concurrency'],
    ['stream_exists on an absent stream', () => store.append('absent', [ev('a')], 'stream_exists'), 'concurrency'],
    ['exact revision on an absent stream', () => store.append('absent', [], 0n), 'concurrency'],
  ];

  it.each(cases)('%s', async (_, attempt, code) => {
    const before = await tables();
    expect(await codeOf(attempt)).toBe(code);
    expect(await tables()).toBe(before);
  });

  it('the typed guards match those errors', async () => {
    const err = async (fn: () => Promise<unknown>): Promise<unknown> => fn().then(() => undefined, (e: unknown) => e);
    expect(isInvalidStreamIdError(await err(() => store.append('', [], 'any')))).toBe(true);
    expect(isInvalidEventError(await err(() => store.append('s', [ev('\u0000')], 'any')))).toBe(true);
    expect(isEventTooLargeError(await err(() => store.append('s', [{ ...ev('a'), data: 'y'.repeat(9000) }], 'any')))).toBe(true);
    expect(isDuplicateEventIdError(await err(() => store.append('existing', [ev('e-0'), ev('z')], 'any')))).toBe(true);
    expect(isConcurrencyError(await err(() => store.append('existing', [ev('z')], 5n)))).toBe(true);
  });

  it('a batch split over several statements is still all-or-nothing', async () => {
    const small = await openPostgresEventStore({ connectionString: PG_URL, schema, maxStatementBytes: 200 });
    try {
      const batch: NewEvent[] = Array.from({ length: 30 }, (_, i) => ev(`chunk-${i}`, 'test/event', { i, pad: 'p'.repeat(40) }));
      // A conflict on the first chunk and a stored id in a later chunk both leave nothing behind.
      const before = await tables();
      expect(await codeOf(() => small.append('existing', batch, 7n))).toBe('concurrency');
      expect(await codeOf(() => small.append('existing', [...batch, ev('e-1')], 1n))).toBe('duplicate-event-id');
      expect(await tables()).toBe(before);
      const r = await small.append('chunked', batch, 'no_stream');
      expect(r.nextExpectedRevision).toBe(29n);
      const read = await collect(() => small.read('chunked'));
      expect(read.map((e) => (e.data as { i: number }).i)).toEqual(batch.map((_, i) => i));
      const positions = read.map((e) => e.position);
      expect(positions).toEqual(positions.map((_, i) => positions[0]! + BigInt(i)));
      // And a retry of the whole split batch is recognised.
      expect(await small.append('chunked', batch, 'no_stream')).toEqual(r);
    } finally {
      await small.close();
    }
  });

  it('keeps JSON that jsonb would not: U+0000 and lone surrogates in strings, key order, big and tiny numbers', async () => {
    const data = { z: 1, a: 'nul\u0000 and \ud800 alone', m: [1e300, 5e-324, 0.1, -1.5e-7, 2 ** 53 + 2], '': { b: 2, a: 1 } };
    await store.append('json-kept', [{ id: 'j', type: 'test/json', time: 1_700_000_000_123.25, data }], 'no_stream');
    const [got] = await collect(() => store.read('json-kept'));
    expect(got!.data).toEqual(data);
    expect(JSON.stringify(got!.data)).toBe(JSON.stringify(data));
    expect(got!.time).toBe(1_700_000_000_123.25);
  });

  it('after close every call is refused with StoreClosedError', async () => {
    const s = await openPostgresEventStore({ connectionString: PG_URL, schema });
    await s.close();
    await s.close();
    expect(isStoreClosedError(await s.append('x', [ev('a')], 'any').catch((e: unknown) => e))).toBe(true);
    expect(isStoreClosedError(await s.revision('x').catch((e: unknown) => e))).toBe(true);
    expect(isStoreClosedError(await collect(() => s.readAll()).catch((e: unknown) => e))).toBe(true);
  });
});
