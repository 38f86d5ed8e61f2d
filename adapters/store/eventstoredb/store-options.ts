/**
 * The options of the EventStoreDB and KurrentDB stores (one adapter, `GrpcEventStore`), and the defaults and
 * connection-string credentials both entry points share.
 */
import type { EventStoreDbServerLimits } from './append-limits.js';

/** Options of the EventStoreDB and KurrentDB stores. */
export interface EventStoreDbStoreOptions {
  /** Largest serialized event accepted (checked before sending, in the port's measure). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /**
   * The server's append limits, in the server's measure (data + metadata + 2 × type). A batch larger than
   * `maxAppendSize` is sent as several appends (see docs/store-eventstoredb.md, *Limits*); one event larger than
   * `maxEventSize` is refused with `EventTooLargeError`. Raise to `ESDB_SERVER_LIMITS.from25_1` (or the server's
   * configured `MaxAppendSize`) only for servers that accept it.
   * @defaultValue `ESDB_SERVER_LIMITS.upTo25_0` (1 MiB per request), safe on every server version
   */
  readonly serverLimits?: EventStoreDbServerLimits;
  /**
   * Which append RPC carries appends. `'append'` (one call per append) keeps each append's failure to itself:
   * `@eventstore/db-client` 6.2.1's BatchAppend shares one table of pending appends per process, so a broken BatchAppend stream of
   * any client rejects every client's pending appends, a late answer then throws an uncaught TypeError, and its
   * deadline is an absolute timestamp from this machine's clock. The client takes the Append path when per-call
   * credentials are passed, which the adapter does (see `credentials`). `'batch-append'` uses BatchAppend when the
   * server offers it; its failures are then reported as unknown outcomes.
   * @defaultValue 'append'
   */
  readonly appendRpc?: 'append' | 'batch-append';
  /**
   * Credentials passed with each append (they select the Append path). Needed for `appendRpc: 'append'` on a
   * secure connection; taken from the connection string's `user:password@` when the store creates the client; on
   * an insecure connection (`tls=false`) the client ignores credentials, so placeholders are sent. Without them on a
   * secure connection the adapter falls back to BatchAppend.
   */
  readonly credentials?: { readonly username: string; readonly password: string };
  /**
   * Prefix of the EventStoreDB stream that holds each port stream (`steerlog-` + the port's stream id), which makes
   * `steerlog` the streams' category. `$all` holds much that is not steerlog's (system streams, `$>` links, `$$`
   * metadata, tombstones, other applications' events): `readAll` and `subscribeAll` return only events of streams
   * with this prefix, without parsing anything else. Changing it hides streams written under the old one.
   * @defaultValue 'steerlog-'
   */
  readonly streamPrefix?: string;
  /** How many streams' id indexes (used for idempotency checks) to keep, least recently used first out. @defaultValue 1000 */
  readonly idIndexStreams?: number;
}

/** Per-call credentials that select the Append path: the connection string's own, or placeholders when it is insecure. */
export const credentialsFor = (connectionString: string): { credentials?: { username: string; password: string } } => {
  const m = /^[a-z]+(?:\+discover)?:\/\/([^@/?]*)@/i.exec(connectionString);
  if (m && m[1]!.includes(':')) {
    const [user, ...rest] = m[1]!.split(':');
    return { credentials: { username: decodeURIComponent(user!), password: decodeURIComponent(rest.join(':')) } };
  }
  // Credentials are ignored on an insecure channel; they only steer the client to the Append path.
  if (/[?&]tls=false(&|$)/i.test(connectionString)) return { credentials: { username: 'steerlog', password: 'ignored-on-insecure-channels' } };
  return {};
};

/** See `EventStoreDbStoreOptions.streamPrefix`. */
export const DEFAULT_STREAM_PREFIX = 'steerlog-';

/** What steerlog's own metadata (the chain hash, provenance) may take of the server's per-event limit. */
export const METADATA_ALLOWANCE = 512;
