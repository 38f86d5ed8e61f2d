import { expect, it } from 'vitest';
import { isInvalidStoreSpecError, openStore } from '../../../../adapters/store/open-store.js';
import { connectSqlite } from '../../../../adapters/store/sqlite/driver.js';
import { openSqliteEventStore, SqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import type { SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { describeSqlite, sqliteFiles } from './sqlite-test-support.js';

const freshFile = sqliteFiles();
const ev = (id: string) => ({ id, type: 'test/event', time: 1, data: { id } });

describeSqlite('the sqlite: store spec', () => {
  it('opens a SQLite store in the file it names, writable or read-only; an empty name is refused', async () => {
    expect(isInvalidStoreSpecError(await openStore('sqlite:').catch((e: unknown) => e))).toBe(true);
    const file = freshFile();
    const store = await openStore(`sqlite:${file}`);
    expect(store).toBeInstanceOf(SqliteEventStore);
    await store.append('s', [ev('a')], 'no_stream');
    await store.close();
    const reader = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect(await reader.revision('s')).toBe(0n);
    } finally {
      await reader.close();
    }
  });

  it('read-only: a missing file, or one that holds no steerlog store, is store-io and nothing is created', async () => {
    const missing = freshFile();
    await expect(openSqliteEventStore(missing, { readOnly: true })).rejects.toMatchObject({ code: 'store-io' });
    const other = freshFile();
    const db = connectSqlite(other, { readOnly: false, busyTimeoutMs: 100 });
    db.exec('CREATE TABLE t (x)');
    db.close();
    await expect(openSqliteEventStore(other, { readOnly: true })).rejects.toMatchObject({ code: 'store-io', message: expect.stringContaining('no steerlog store') });
  });
});

describeSqlite('SQLite live reads across connections', () => {
  it("a subscription wakes for another connection's append (as another process's), without an append of its own", async () => {
    const file = freshFile();
    const store = await openSqliteEventStore(file, { pollIntervalMs: 20 });
    const other = await openSqliteEventStore(file);
    const controller = new AbortController();
    try {
      const got: SubscriptionMessage[] = [];
      const reading = (async () => {
        for await (const m of store.subscribe('s', { signal: controller.signal })) {
          got.push(m);
          if (m.kind === 'event') return;
        }
      })();
      while (!got.some((m) => m.kind === 'caught-up')) await new Promise((r) => setTimeout(r, 5));
      await other.append('s', [ev('from-the-other')], 'no_stream');
      await reading;
      expect(got.map((m) => (m.kind === 'event' ? m.event.id : m.kind))).toEqual(['caught-up', 'from-the-other']);
    } finally {
      controller.abort();
      await other.close();
      await store.close();
    }
  });
});
