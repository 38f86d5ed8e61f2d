import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { openKurrentDbStore } from '../../adapters/store/kurrentdb/index.js';

/**
 * docs/store-eventstoredb.md, the KurrentDB client (in a package: `from 'steerlog/kurrentdb'`). A file of its own:
 * `@kurrent/kurrentdb-client` must never be loaded next to `@eventstore/db-client` (see store-usage.ts).
 */
export const kurrentDbExample = async (connectionString: string) => {
  // #region kurrentdb
  // connectionString: 'kurrentdb://host:2113?tls=false' (or kurrentdb+discover://…)
  const store = openKurrentDbStore({ connectionString });

  // Or a client you own, as with openEventStoreDbStore:
  const client = KurrentDBClient.connectionString(connectionString);
  const shared = openKurrentDbStore({ client });
  // #endregion kurrentdb
  await store.append('session-1', [{ id: 'e1', type: 'user/message', time: 1, data: { text: 'hi' } }], 'no_stream');
  const revision = await shared.revision('session-1');
  await store.close();
  await shared.close();
  await client.dispose();
  return revision;
};
