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

describeSqlite('the SQLite schema version 1 (a JSON array of fold snapshots per session)', () => {
  it('is migrated by a writable open (one row per snapshot, the same snapshots read back), refused read-only with store-io naming store repair', async () => {
    const file = freshFile();
    const created = await openSqliteEventStore(file);
    await created.append('s', [ev('a')], 'no_stream');
    await created.close();
    // the version 1 layout, as a store of that version left it: one row, a JSON array
    const snap = (seq: number) => ({ seq, id: `e-${seq}`, hash: 'h'.repeat(8), version: 2, state: { seq } });
    const db = connectSqlite(file, { readOnly: false, busyTimeoutMs: 100 });
    db.exec('DROP TABLE fold_snapshots; CREATE TABLE fold_snapshots (stream TEXT PRIMARY KEY, snapshots TEXT NOT NULL) WITHOUT ROWID; PRAGMA user_version = 1');
    db.prepare('INSERT INTO fold_snapshots VALUES (?, ?)').run('s', JSON.stringify([snap(3), snap(7)]));
    db.prepare('INSERT INTO fold_snapshots VALUES (?, ?)').run('gone', 'not json');
    db.close();
    await expect(openSqliteEventStore(file, { readOnly: true })).rejects.toMatchObject({ code: 'store-io', message: expect.stringContaining('store repair') });
    const store = await openSqliteEventStore(file);
    try {
      expect((await store.loadFoldSnapshots('s')).map((s) => ({ ...s }))).toEqual([snap(3), snap(7)]);
      expect(await store.appendFoldSnapshots('s', [snap(5), snap(11)])).toBe(11);
      expect((await store.loadFoldSnapshotsNear('s', { from: 8, to: 20 })).map((s) => s.seq)).toEqual([7, 11]);
      // a row that does not decode is skipped by both reads (the near one takes the next row below)
      const other = connectSqlite(file, { readOnly: false, busyTimeoutMs: 1000 });
      other.prepare('INSERT INTO fold_snapshots (stream, seq, snapshot) VALUES (?, ?, ?)').run('s', 9, 'not json');
      other.close();
      expect((await store.loadFoldSnapshots('s')).map((s) => s.seq)).toEqual([3, 7, 11]);
      expect((await store.loadFoldSnapshotsNear('s', { from: 10, to: 20 })).map((s) => s.seq)).toEqual([7, 11]);
    } finally {
      await store.close();
    }
    const reader = await openSqliteEventStore(file, { readOnly: true });
    await reader.close();
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
