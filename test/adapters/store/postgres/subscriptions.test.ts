import { afterAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import type { SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { ev } from '../../../contract/event-store.contract.js';
import { describePg, dropSchema, PG_URL, postgresAvailable, uniqueSchema } from './pg-test-support.js';

const schema = uniqueSchema('subs');
const opened: PostgresEventStore[] = [];
const open = async (options: { listen?: boolean; notify?: boolean; pollIntervalMs?: number } = {}): Promise<PostgresEventStore> => {
  const s = await openPostgresEventStore({ connectionString: PG_URL, schema, poolSize: 2, ...options });
  opened.push(s);
  return s;
};
afterAll(async () => {
  if (!postgresAvailable) return;
  for (const s of opened) await s.close();
  await dropSchema(schema);
});

const nextEvents = async (it: AsyncIterator<SubscriptionMessage>, n: number): Promise<string[]> => {
  const ids: string[] = [];
  while (ids.length < n) {
    const next = await it.next();
    if (next.done) break;
    if (next.value.kind === 'event') ids.push(next.value.event.id);
  }
  return ids;
};

describePg('PostgreSQL store: live subscriptions across processes', () => {
  it('LISTEN/NOTIFY: another store (another pool) appends, this one’s subscriptions see it', async () => {
    // A long poll interval: delivery must come from the notification, not from polling.
    const reader = await open({ pollIntervalMs: 3_600_000 });
    const writer = await open();
    const ac = new AbortController();
    const all = reader.subscribeAll({ signal: ac.signal })[Symbol.asyncIterator]();
    const one = reader.subscribe('x-proc', { signal: ac.signal })[Symbol.asyncIterator]();
    expect((await all.next()).value).toEqual({ kind: 'caught-up' });
    expect((await one.next()).value).toEqual({ kind: 'caught-up' });
    await writer.append('x-proc', [ev('n1'), ev('n2')], 'no_stream');
    await writer.append('x-other', [ev('n3')], 'no_stream');
    expect(await nextEvents(all, 3)).toEqual(['n1', 'n2', 'n3']);
    expect(await nextEvents(one, 2)).toEqual(['n1', 'n2']);
    ac.abort();
    await all.return?.();
    await one.return?.();
  });

  it('a group commit wakes another store by its NOTIFY, with every committed append of the group and none refused', async () => {
    const reader = await open({ pollIntervalMs: 3_600_000 });
    const writer = await open();
    const base = await writer.append('g-existing', [ev('g0')], 'no_stream');
    const ac = new AbortController();
    const all = reader.subscribeAll({ after: base.position, signal: ac.signal })[Symbol.asyncIterator]();
    expect((await all.next()).value).toEqual({ kind: 'caught-up' });
    // issued in one tick: one group, one transaction, one NOTIFY at its commit; the stale append is refused alone
    const results = await Promise.allSettled([
      writer.append('g-1', [ev('g1')], 'no_stream'),
      writer.append('g-existing', [ev('stale')], 'no_stream'),
      writer.append('g-2', [ev('g2a'), ev('g2b')], 'no_stream'),
      writer.append('g-existing', [ev('g3')], 0n),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await nextEvents(all, 4)).toEqual(['g1', 'g2a', 'g2b', 'g3']);
    ac.abort();
    await all.return?.();
  });

  it('polling fallback: with LISTEN off and a writer that does not NOTIFY, events still arrive', async () => {
    const reader = await open({ listen: false, pollIntervalMs: 20 });
    const writer = await open({ notify: false });
    const ac = new AbortController();
    const sub = reader.subscribe('polled', { signal: ac.signal })[Symbol.asyncIterator]();
    expect((await sub.next()).value).toEqual({ kind: 'caught-up' });
    await writer.append('polled', [ev('p1')], 'no_stream');
    await writer.append('polled', [ev('p2')], 0n);
    expect(await nextEvents(sub, 2)).toEqual(['p1', 'p2']);
    ac.abort();
    await sub.return?.();
  });

  it('close() ends live subscriptions', async () => {
    const reader = await openPostgresEventStore({ connectionString: PG_URL, schema, poolSize: 2 });
    const sub = reader.subscribeAll({ after: 1_000_000n })[Symbol.asyncIterator]();
    expect((await sub.next()).value).toEqual({ kind: 'caught-up' });
    const pending = sub.next();
    await reader.close();
    expect((await pending).done).toBe(true);
  });
});
