/**
 * The EventStore port on EventStoreDB, through `@eventstore/db-client` 6.2.1 (pinned exactly: the adapter relies
 * on that version's behaviour, see docs/store-eventstoredb.md). The adapter itself is `GrpcEventStore`, shared with
 * `steerlog/kurrentdb`; this module gives it this client package.
 *
 * Checked against an in-process protocol fake built from the client's own gRPC stubs, not against a real server.
 */
import { ANY, END, EventStoreDBClient, NO_STREAM, START, STREAM_EXISTS, streamNameFilter } from '@eventstore/db-client';
import type { ClientDriver, WireClient } from './client-driver.js';
import { credentialsFor, GrpcEventStore, type EventStoreDbStoreOptions } from './grpc-event-store.js';

export { DEFAULT_STREAM_PREFIX, GrpcEventStore, METADATA_ALLOWANCE, type EventStoreDbStoreOptions } from './grpc-event-store.js';

/** What differs in `@eventstore/db-client` 6.x, taken from the package. */
const ESDB_DRIVER: ClientDriver = {
  product: 'EventStoreDB',
  packageName: '@eventstore/db-client',
  START,
  END,
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  streamNameFilter: (filter) => streamNameFilter(filter),
  expectedRevisionOption: 'expectedRevision',
};

/** Options of {@link openEventStoreDbStore}: the store options with a client or a connection string. */
export type OpenEventStoreDbStoreOptions = EventStoreDbStoreOptions &
  (
    | {
        /** `esdb://host:2113?tls=false`, `esdb+discover://…`: parsed by the client. The store owns that client and disposes it on close. */
        readonly connectionString: string;
      }
    | {
        /** A client the caller owns: `close()` ends this store's reads and subscriptions but does not dispose the client. */
        readonly client: EventStoreDBClient;
      }
  );

/** Parses an `esdb://` / `esdb+discover://` connection string into a client (the client connects lazily). */
export const clientFromConnectionString = (connectionString: string): EventStoreDBClient => {
  if (typeof connectionString !== 'string' || !/^esdb(\+discover)?:\/\//i.test(connectionString)) {
    throw new TypeError(`EventStoreDB connection string must start with esdb:// or esdb+discover://, got ${JSON.stringify(String(connectionString)).slice(0, 80)}`);
  }
  try {
    return EventStoreDBClient.connectionString(connectionString);
  } catch (e) {
    throw new TypeError(`invalid EventStoreDB connection string: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
};

/** Opens the EventStoreDB store on a client or a connection string. */
export const openEventStoreDbStore = (options: OpenEventStoreDbStoreOptions): EventStoreDbEventStore =>
  'client' in options
    ? new EventStoreDbEventStore(options.client, false, options)
    : new EventStoreDbEventStore(clientFromConnectionString(options.connectionString), true, {
        ...options,
        ...(options.credentials ? {} : credentialsFor(options.connectionString)),
      });

/** The EventStore port on EventStoreDB, through `@eventstore/db-client`. */
export class EventStoreDbEventStore extends GrpcEventStore {
  readonly #esdbClient: EventStoreDBClient;

  constructor(client: EventStoreDBClient, ownsClient: boolean, options: EventStoreDbStoreOptions = {}) {
    // The client's overloaded, generic signatures are a superset of what the adapter calls (see client-driver.ts).
    super(client as unknown as WireClient, ESDB_DRIVER, ownsClient, options);
    this.#esdbClient = client;
  }

  /** The underlying client, for diagnostics. */
  get client(): EventStoreDBClient {
    return this.#esdbClient;
  }
}
