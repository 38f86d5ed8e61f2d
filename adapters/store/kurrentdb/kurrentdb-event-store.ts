/**
 * The EventStore port on KurrentDB (and EventStoreDB servers), through `@kurrent/kurrentdb-client` 1.3.1, the
 * vendor's successor of `@eventstore/db-client` (pinned exactly: the adapter relies on that version's behaviour,
 * see docs/store-eventstoredb.md). The adapter is the one `steerlog/eventstoredb` uses (`GrpcEventStore`); this
 * module gives it this client package. Its stream and `$all` reads go through the client's native bridge
 * (`@kurrent/bridge`, a prebuilt binary); appends and subscriptions through `@grpc/grpc-js`.
 *
 * Never load this module and `@eventstore/db-client` in one process: both clients register the same protobuf
 * message names globally, and the one loaded second breaks the other's requests.
 *
 * Checked against an in-process protocol fake built from the client's own gRPC stubs, not against a real server.
 */
import { ANY, END, KurrentDBClient, NO_STREAM, START, STREAM_EXISTS, streamNameFilter } from '@kurrent/kurrentdb-client';
import type { ClientDriver, WireClient } from '../eventstoredb/client-driver.js';
import { credentialsFor, GrpcEventStore, type EventStoreDbStoreOptions } from '../eventstoredb/grpc-event-store.js';

/** Options of the KurrentDB store: those of the EventStoreDB store (the same adapter). */
export type KurrentDbStoreOptions = EventStoreDbStoreOptions;

/** What differs in `@kurrent/kurrentdb-client` 1.x, taken from the package. */
const KURRENTDB_DRIVER: ClientDriver = {
  product: 'KurrentDB',
  packageName: '@kurrent/kurrentdb-client',
  START,
  END,
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  streamNameFilter: (filter) => streamNameFilter(filter),
  expectedRevisionOption: 'streamState',
};

/** Options of {@link openKurrentDbStore}: the store options with a client or a connection string. */
export type OpenKurrentDbStoreOptions = KurrentDbStoreOptions &
  (
    | {
        /** `kurrentdb://host:2113?tls=false`, `kurrentdb+discover://…`: parsed by the client. The store owns that client and disposes it on close. */
        readonly connectionString: string;
      }
    | {
        /** A client the caller owns: `close()` ends this store's reads and subscriptions but does not dispose the client. */
        readonly client: KurrentDBClient;
      }
  );

/** Parses a `kurrentdb://` / `kurrentdb+discover://` connection string into a client (the client connects lazily). */
export const kurrentClientFromConnectionString = (connectionString: string): KurrentDBClient => {
  if (typeof connectionString !== 'string' || !/^kurrentdb(\+discover)?:\/\//i.test(connectionString)) {
    throw new TypeError(`KurrentDB connection string must start with kurrentdb:// or kurrentdb+discover://, got ${JSON.stringify(String(connectionString)).slice(0, 80)}`);
  }
  try {
    return KurrentDBClient.connectionString(connectionString);
  } catch (e) {
    throw new TypeError(`invalid KurrentDB connection string: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
};

/** Opens the KurrentDB store on a client or a connection string. */
export const openKurrentDbStore = (options: OpenKurrentDbStoreOptions): KurrentDbEventStore =>
  'client' in options
    ? new KurrentDbEventStore(options.client, false, options)
    : new KurrentDbEventStore(kurrentClientFromConnectionString(options.connectionString), true, {
        ...options,
        ...(options.credentials ? {} : credentialsFor(options.connectionString)),
      });

/** The EventStore port on KurrentDB, through `@kurrent/kurrentdb-client`. */
export class KurrentDbEventStore extends GrpcEventStore {
  readonly #kurrentClient: KurrentDBClient;

  constructor(client: KurrentDBClient, ownsClient: boolean, options: KurrentDbStoreOptions = {}) {
    // The client's overloaded, generic signatures are a superset of what the adapter calls (see client-driver.ts).
    super(client as unknown as WireClient, KURRENTDB_DRIVER, ownsClient, options);
    this.#kurrentClient = client;
  }

  /** The underlying client, for diagnostics. */
  get client(): KurrentDBClient {
    return this.#kurrentClient;
  }
}
