/**
 * Pure mappings between the EventStore port and the gRPC clients (`@eventstore/db-client` 6.2.1 and
 * `@kurrent/kurrentdb-client` 1.3.1, which agree on all of this): event ids, expected revisions, `$all` positions,
 * event metadata and client errors. No I/O and no client import here (the client's constants come from its
 * driver), so each mapping is unit-tested on its own.
 */
import { createHash } from 'node:crypto';
import type { ClientDriver, WireEventData, WirePosition, WireResolvedEvent } from './client-driver.js';
import {
  globalPosition,
  streamRevision,
  type ExpectedRevision,
  type GlobalPosition,
  type NewEvent,
  type RecordedEvent,
} from '../../../runtime/ports/event-store.js';
import {
  ConcurrencyError,
  InvalidEventError,
  InvalidStreamIdError,
  NotLeaderError,
  StoreAccessDeniedError,
  StoreError,
  StreamDeletedError,
  SubscriptionDroppedError,
  UnknownOutcomeError,
  type ActualRevision,
} from '../../../runtime/ports/store-errors.js';

// ---- event ids ----

/** Namespace of the UUIDv5-style ids derived from non-UUID port ids. Never change it: stored ids depend on it. */
export const STEERLOG_EVENT_ID_NAMESPACE = '357e99d2-ad9b-4085-8d1a-0746863c13e4';
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const formatUuid = (b: Buffer): string => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

/** RFC 4122 name-based UUID, version 5 (SHA-1 of namespace bytes + UTF-8 name), by default in the steerlog namespace. */
export const uuidV5 = (name: string, namespace: string = STEERLOG_EVENT_ID_NAMESPACE): string => {
  const ns = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return formatUuid(hash);
};

/**
 * The EventStoreDB event id for a port event id: the id itself when it is already a canonical (lowercase,
 * non-nil) UUID, so the server stores it unchanged; otherwise a deterministic UUIDv5 of it. Deterministic, so a
 * retried append sends the same ids and the server's own idempotency applies.
 */
export const esdbEventId = (portId: string): string =>
  CANONICAL_UUID.test(portId) && portId !== NIL_UUID ? portId : uuidV5(portId);

// ---- stream ids ----

/** `$`-prefixed streams are EventStoreDB system streams (ACL-protected, hidden from readAll): refuse them. */
export const assertNotSystemStream = (stream: string): void => {
  if (stream.startsWith('$')) throw new InvalidStreamIdError(stream, 'names starting with "$" are reserved for EventStoreDB system streams');
};

/**
 * Event types starting with `$` are EventStoreDB's own: `$all` readers (steerlog's included) skip them as system
 * events, so such an event would be stored and then never seen. Refuse it at append instead.
 */
export const assertNoSystemEventTypes = (events: readonly { readonly type: string }[]): void => {
  events.forEach((e, i) => {
    if (e.type.startsWith('$')) throw new InvalidEventError(i, `type "${e.type.slice(0, 40)}" starts with "$", which EventStoreDB reserves for system events`);
  });
};

// ---- expected revisions ----

/** The port's expected revision in the client's terms (its own constants, from its driver). */
export const toEsdbExpected = (expected: ExpectedRevision, driver: Pick<ClientDriver, 'ANY' | 'NO_STREAM' | 'STREAM_EXISTS'>): string | bigint => {
  switch (expected) {
    case 'any':
      return driver.ANY;
    case 'no_stream':
      return driver.NO_STREAM;
    case 'stream_exists':
      return driver.STREAM_EXISTS;
    default:
      return expected;
  }
};

// ---- $all positions ----

const U64 = (1n << 64n) - 1n;

/**
 * A `$all` position is a (commit, prepare) pair of uint64, ordered commit first. The port wants one bigint, so
 * pack them losslessly: `commit * 2^64 + prepare`. The order of the packed values is the order of the pairs.
 */
export const packPosition = (p: WirePosition): GlobalPosition => globalPosition((p.commit << 64n) | (p.prepare & U64));
/** Splits a steerlog global position back into EventStoreDB's commit and prepare positions. */
export const unpackPosition = (g: bigint): WirePosition => ({ commit: g >> 64n, prepare: g & U64 });

// ---- events ----

/** What the adapter keeps in each event's custom metadata. */
export interface SteerlogMetadata {
  readonly steerlog: {
    readonly v: 1;
    /** The port's event id (the ESDB id may be a UUIDv5 of it). */
    readonly id: string;
    readonly time: number;
    readonly ignorable?: true;
    /** The event's provenance (the port's `metadata`), verbatim. */
    readonly metadata?: Readonly<Record<string, unknown>>;
    /** The writer's chain hash, verbatim. */
    readonly hash?: string;
  };
}

export const toEsdbEvent = (e: NewEvent): WireEventData => ({
  id: esdbEventId(e.id),
  contentType: 'application/json',
  type: e.type,
  // Validated lossless JSON; the client serializes it with JSON.stringify.
  data: e.data,
  metadata: {
    steerlog: {
      v: 1,
      id: e.id,
      time: e.time,
      ...(e.ignorable ? { ignorable: true as const } : {}),
      ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
      ...(e.hash !== undefined ? { hash: e.hash } : {}),
    },
  } satisfies SteerlogMetadata,
});

const steerlogMetadata = (metadata: unknown): SteerlogMetadata['steerlog'] | undefined => {
  if (typeof metadata !== 'object' || metadata === null || metadata instanceof Uint8Array) return undefined;
  const s = (metadata as { steerlog?: unknown }).steerlog;
  if (typeof s !== 'object' || s === null) return undefined;
  const { id, time } = s as { id?: unknown; time?: unknown };
  return typeof id === 'string' && typeof time === 'number' ? (s as SteerlogMetadata['steerlog']) : undefined;
};

/** Is this a server/system event that the port never shows (`$`-typed, or in a `$` stream)? */
export const isSystemEvent = (resolved: WireResolvedEvent): boolean => {
  const e = resolved.event;
  return !e || e.type.startsWith('$') || e.streamId.startsWith('$');
};

/**
 * A recorded event as the port returns it. Events not written by steerlog (no steerlog metadata) keep their ESDB
 * id and `created` time; binary (non-JSON) data is returned as a base64 string.
 */
export const fromResolved = (resolved: WireResolvedEvent, streamPrefix = ''): RecordedEvent => {
  const e = resolved.event;
  if (!e) throw new StoreError('store-corrupt', 'the server returned a link whose event is missing');
  const meta = steerlogMetadata(e.metadata);
  const data = e.isJson ? e.data : Buffer.from(e.data as Uint8Array).toString('base64');
  return {
    stream: e.streamId.startsWith(streamPrefix) ? e.streamId.slice(streamPrefix.length) : e.streamId,
    revision: streamRevision(e.revision),
    // Servers before 22.6 give events read from a stream the maximum value instead of a position: unknown (-1).
    position: e.position && e.position.commit !== U64 ? packPosition(e.position) : globalPosition(-1),
    id: meta?.id ?? e.id,
    type: e.type,
    time: meta?.time ?? e.created.getTime(),
    data,
    ...(meta?.ignorable === true ? { ignorable: true as const } : {}),
    ...(typeof meta?.metadata === 'object' && meta.metadata !== null && !Array.isArray(meta.metadata) ? { metadata: meta.metadata } : {}),
    ...(typeof meta?.hash === 'string' ? { hash: meta.hash } : {}),
  };
};

// ---- errors ----

/** The client's `CommandError` classes carry a stable string `type`; match on it, not on `instanceof`. */
const errorType = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && typeof (e as { type?: unknown }).type === 'string' ? (e as { type: string }).type : undefined;

export const isWrongExpectedVersion = (e: unknown): boolean => errorType(e) === 'wrong-expected-version';

/**
 * Client error types after which an append may or may not have been written. The server commits a write and still
 * answers `Timeout` when replication or the index is slow (CommitTimeout; the client raises `timeout` for the
 * Append RPC's ABORTED status and `deadline-exceeded` for BatchAppend's Timeout detail or an expired deadline), a
 * dropped connection or a broken BatchAppend stream (`unavailable`, `cancelled`, `unknown`) says nothing about
 * what the server did with a request it had received. Every other answer (wrong expected version, access denied,
 * stream deleted, maximum append size, not leader, invalid argument) is a refusal: nothing was written.
 */
const AMBIGUOUS_APPEND_FAILURES: ReadonlySet<string> = new Set(['timeout', 'deadline-exceeded', 'unavailable', 'cancelled', 'unknown']);

/** Is this failure of an append call one whose outcome is unknown? Errors that are not client errors count as unknown. */
export const isAmbiguousAppendFailure = (e: unknown): boolean => {
  const type = errorType(e);
  if (type === 'unknown' && (grpcCodeOf(e) === INVALID_ARGUMENT || exceptionOf(e) !== undefined)) return false; // a refusal the client does not know
  return type === undefined || AMBIGUOUS_APPEND_FAILURES.has(type);
};

/** gRPC status INVALID_ARGUMENT: the server refused the request as such. */
const INVALID_ARGUMENT = 3;
const grpcCodeOf = (e: unknown): number | undefined => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
};
/** The server's `exception` trailer (a stable protocol key), kept by the client on the raw gRPC error. */
const exceptionOf = (e: unknown): string | undefined => {
  const raw = (e as { _raw?: { metadata?: { get?: (k: string) => unknown[] } } } | null)?._raw;
  const value = raw?.metadata?.get?.('exception')?.[0];
  return value === undefined ? undefined : String(value);
};
export const isStreamNotFound = (e: unknown): boolean => errorType(e) === 'stream-not-found';
/**
 * The server answered that the stream is tombstoned (hard-deleted): the client's `StreamDeletedError` (type
 * `stream-deleted`, from the `exception` trailer the Streams API sends), or kurrentdb 1.3.1's `StreamTombstonedError`
 * (`stream-tombstoned`, which it decodes from the newer error details when no such trailer came).
 */
export const isStreamDeleted = (e: unknown): boolean => {
  const type = errorType(e);
  return type === 'stream-deleted' || type === 'stream-tombstoned';
};

/**
 * The actual revision a client `WrongExpectedVersionError` reports (`no_stream`, or a revision; -1 means none):
 * `actualVersion` in `@eventstore/db-client`, `actualState` in `@kurrent/kurrentdb-client`.
 */
export const actualRevisionOf = (e: unknown): ActualRevision | undefined => {
  const error = e as { actualVersion?: unknown; actualState?: unknown };
  const actual = error.actualVersion ?? error.actualState;
  if (actual === 'no_stream') return 'no_stream';
  if (typeof actual === 'bigint') return actual < 0n ? 'no_stream' : streamRevision(actual);
  return undefined;
};

export const toConcurrencyError = (stream: string, expected: ExpectedRevision, e: unknown, fallback: ActualRevision): ConcurrencyError =>
  new ConcurrencyError(stream, expected, actualRevisionOf(e) ?? fallback);

/**
 * Any other client error as a port `StoreError`: `event-too-large` for the server's maximum append size,
 * `store-io` for everything else (unavailable, deadline, access denied, not leader, deleted stream, unknown).
 * The client error is kept as `cause`.
 */
export const toStoreError = (e: unknown, what: string, product = 'EventStoreDB'): StoreError => {
  if (e instanceof StoreError) return e;
  const type = errorType(e) ?? 'unknown';
  const message = e instanceof Error ? e.message : String(e);
  if (type === 'not-leader') {
    const leader = (e as { leader?: { address?: unknown; port?: unknown } }).leader;
    const known = leader && typeof leader.address === 'string' && typeof leader.port === 'number' && Number.isFinite(leader.port);
    return new NotLeaderError(what, known ? { host: leader.address as string, port: leader.port as number } : undefined, { cause: e });
  }
  if (type === 'access-denied') {
    return new StoreAccessDeniedError(
      what,
      what.startsWith('readAll') || what.startsWith('subscribeAll')
        ? 'reading $all needs a user in the $admins group (or $ops); connect with such credentials'
        : 'check the credentials in the connection string and the stream ACLs',
      { cause: e },
    );
  }
  if (exceptionOf(e) === 'maximum-append-event-size-exceeded') {
    return new StoreError('event-too-large', `${what}: an event exceeds the server's maximum event size (25.1+ MaxAppendEventSize)`, { cause: e });
  }
  if (type === 'maximum-append-size-exceeded') {
    const limit = (e as { maxAppendSize?: unknown }).maxAppendSize;
    return new StoreError('event-too-large', `${what}: the batch exceeds the server's maximum append size${typeof limit === 'number' ? ` of ${limit} bytes` : ''}`, { cause: e });
  }
  return new StoreError('store-io', `${what}: ${product} ${type} error${message ? `: ${message}` : ''}`, { cause: e });
};

/** An append call's failure as a port error: `UnknownOutcomeError` when the write may have committed, else `toStoreError`. */
export const toAppendError = (e: unknown, stream: string, events: number, elapsedMs = Number.POSITIVE_INFINITY, product = 'EventStoreDB'): StoreError => {
  if (e instanceof StoreError) return e;
  // a tombstoned stream refuses every append (Append: the `stream-deleted` trailer; BatchAppend: a StreamDeleted detail)
  if (isStreamDeleted(e)) return new StreamDeletedError(stream, { cause: e });
  if (!isAmbiguousAppendFailure(e)) return toStoreError(e, `append to "${stream}"`, product);
  const type = errorType(e) ?? 'transport';
  const message = e instanceof Error && e.message ? `: ${e.message}` : '';
  // A server times a write out after its write timeout (2 s by default); far sooner means the request's absolute
  // deadline (BatchAppend sends this machine's clock + 10 s) was already past by the server's clock.
  const skew = (type === 'deadline-exceeded' || type === 'timeout') && elapsedMs < CLOCK_SKEW_SUSPECT_MS;
  return new UnknownOutcomeError(stream, events, `${product} answered ${type} after the append was sent${message}`, {
    cause: e,
    ...(skew ? { hint: 'clock-skew' as const } : {}),
  });
};

/** A Timeout answered within this many milliseconds of sending suggests clock skew rather than a slow server. */
export const CLOCK_SKEW_SUSPECT_MS = 500;

/** Client error types that end a subscription without refusing it: subscribing again resumes it. */
const DROPPED_SUBSCRIPTION: ReadonlySet<string> = new Set(['timeout', 'deadline-exceeded', 'unavailable', 'cancelled']);

/** A subscription's failure as a port error: `SubscriptionDroppedError` when resubscribing can resume it. */
export const toSubscriptionError = (e: unknown, what: string, product = 'EventStoreDB'): StoreError => {
  if (e instanceof StoreError) return e;
  const type = errorType(e);
  if (type !== undefined && DROPPED_SUBSCRIPTION.has(type)) {
    return new SubscriptionDroppedError(what, `${product} ${type}${e instanceof Error && e.message ? `: ${e.message}` : ''}`, { cause: e });
  }
  return toStoreError(e, what, product);
};

/**
 * A failed tombstone (`deleteStream`) as a port error, for everything but a wrong expected version (which the store
 * maps to `ConcurrencyError` with the actual revision): `stream-deleted` → `StreamDeletedError` (the stream was
 * tombstoned before); a refusal (access denied, not leader, invalid argument) → `toStoreError`, nothing deleted; an
 * answer after which the tombstone may or may not have been written (timeout, unavailable, a dropped call: the same
 * list as for appends) → a `store-io` error that says so, since the port's `store-io` otherwise means nothing was
 * deleted. Calling `deleteStream` again settles it: `StreamDeletedError` if the tombstone committed.
 */
export const toDeleteError = (e: unknown, stream: string, product = 'EventStoreDB'): StoreError => {
  if (e instanceof StoreError) return e;
  if (isStreamDeleted(e)) return new StreamDeletedError(stream, { cause: e });
  const what = `deleteStream "${stream}"`;
  if (!isAmbiguousAppendFailure(e)) return toStoreError(e, what, product);
  const type = errorType(e) ?? 'transport';
  return new StoreError(
    'store-io',
    `${what}: ${product} answered ${type} after the tombstone was sent: it may or may not have been written; deleting again answers stream-deleted if it was${e instanceof Error && e.message ? ` (${e.message})` : ''}`,
    { cause: e },
  );
};
