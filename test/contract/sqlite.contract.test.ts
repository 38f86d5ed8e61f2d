import { openSqliteEventStore, SqliteEventStore } from '../../adapters/store/sqlite/index.js';
import { describeSqlite, sqliteFiles } from '../adapters/store/sqlite/sqlite-test-support.js';
import { describeEventStoreContract } from './event-store.contract.js';

const freshFile = sqliteFiles();

describeSqlite('sqlite', () => {
  for (const durability of ['full', 'normal'] as const) {
    describeEventStoreContract(`sqlite (${durability})`, {
      create: () => openSqliteEventStore(freshFile(), { durability }),
      // a second connection on the same file: another writer, as another process would be
      openPeer: (store) => openSqliteEventStore((store as SqliteEventStore).file, { durability }),
      foldSnapshots: true,
    });
  }
});
