import { EventStoreDBClient } from '@eventstore/db-client';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../../adapters/store/postgres/index.js';
import { openEventStoreDbStore } from '../../adapters/store/eventstoredb/index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { readAllPages, readStreamPages } from '../../runtime/ports/paged-reads.js';

/** docs/store-jsonl.md (in a package: `from 'steerlog'`). */
export const jsonlExample = async (dir: string, id: string, data: unknown) => {
  // #region jsonl
  const store = await openJsonlEventStore(dir, { durability: 'fsync' });
  await store.append('session-42', [{ id, type: 'user/message', time: Date.now(), data }], 'no_stream');
  await store.close();
  // #endregion jsonl
};

/** docs/store-postgres.md (in a package: `from 'steerlog/postgres'`). */
export const postgresExample = async (connectionString: string, schema: string) => {
  // #region postgres
  const store = await openPostgresEventStore({ connectionString, schema }); // migrates first
  await store.append('session-1', [{ id: 'e1', type: 'user/message', time: Date.now(), data: { text: 'hi' } }], 'no_stream');
  await store.close(); // ends the pool the store created
  // #endregion postgres
};

/** docs/store-eventstoredb.md (in a package: `from 'steerlog/eventstoredb'`). */
export const eventStoreDbExample = async (connectionString: string) => {
  // #region eventstoredb
  // The store creates the client, owns it, and disposes it on close():
  const store = openEventStoreDbStore({ connectionString });

  // Or pass a client you own. close() then ends this store's reads and subscriptions but leaves the client open:
  const client = EventStoreDBClient.connectionString(connectionString);
  const shared = openEventStoreDbStore({ client });
  // #endregion eventstoredb
  await store.close();
  await shared.close();
  await client.dispose();
};

/** README.md, Stores: a stream read a page at a time, from any store (in a package: `from 'steerlog'`). */
export const pagedReadExample = async (store: EventStore, stream: string): Promise<string[]> => {
  const types: string[] = [];
  // #region paged-read
  // The store's own pages (JSONL: one 256 KiB file read; PostgreSQL: one query), or `read` batched for a store
  // without them; the same events as store.read(stream, { from: 0n }), one await per page.
  for await (const page of readStreamPages(store, stream, { from: 0n, pageSize: 1000 })) {
    for (const event of page) types.push(event.type);
  }
  // #endregion paged-read
  return types;
};

/** README.md, Stores: every stream's events a page at a time, from any store (in a package: `from 'steerlog'`). */
export const pagedReadAllExample = async (store: EventStore): Promise<Map<string, number>> => {
  const perStream = new Map<string, number>();
  // #region paged-read-all
  // The store's own pages (JSONL: one 512-record read of its global index; PostgreSQL: one query), or `readAll`
  // batched for a store without them; the same events as store.readAll(), in global order, one await per page.
  for await (const page of readAllPages(store, { pageSize: 1000 })) {
    for (const event of page) perStream.set(event.stream, (perStream.get(event.stream) ?? 0) + 1);
  }
  // #endregion paged-read-all
  return perStream;
};
