import { describeValue } from '../../domain/json.js';
import type { ExpectedRevision, StreamRevision } from './event-store.js';

/** Every error a store raises has a stable `code`; match on it, never on the message. */
export type StoreErrorCode =
  | 'concurrency'
  | 'invalid-stream-id'
  | 'invalid-event'
  | 'event-too-large'
  | 'duplicate-event-id'
  | 'store-closed'
  | 'store-io'
  | 'store-corrupt'
  | 'unknown-outcome'
  | 'subscription-dropped'
  | 'not-leader'
  | 'access-denied'
  | 'stream-deleted';

/** Base class of the store errors: each has a stable `code` and a guard. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

const hasCode = (e: unknown, code: StoreErrorCode): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/** `'no_stream'` when the stream has no event yet. */
export type ActualRevision = StreamRevision | 'no_stream';

/** Raised when the stream's revision does not match the append's expected revision: another writer got there first. */
export class ConcurrencyError extends StoreError {
  declare readonly code: 'concurrency';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: ActualRevision,
  ) {
    super(
      'concurrency',
      `stream "${stream}": expected revision ${String(expected)}, actual ${String(actual)}`,
    );
    this.name = 'ConcurrencyError';
  }
}
/** Is this a {@link ConcurrencyError}? (by its stable `code`) */
export const isConcurrencyError = (e: unknown): e is ConcurrencyError => hasCode(e, 'concurrency');

/** The stream id is empty, too long, or holds characters no store can keep safely. */
export class InvalidStreamIdError extends StoreError {
  declare readonly code: 'invalid-stream-id';
  constructor(readonly stream: unknown, reason: string) {
    super('invalid-stream-id', `invalid stream id ${typeof stream === 'string' ? JSON.stringify(stream).slice(0, 80) : describeValue(stream)}: ${reason}`);
    this.name = 'InvalidStreamIdError';
  }
}
/** Is this a {@link InvalidStreamIdError}? (by its stable `code`) */
export const isInvalidStreamIdError = (e: unknown): e is InvalidStreamIdError => hasCode(e, 'invalid-stream-id');

/** An event to append is malformed: missing id or type, data that is not lossless JSON. */
export class InvalidEventError extends StoreError {
  declare readonly code: 'invalid-event';
  constructor(readonly index: number, reason: string) {
    super('invalid-event', `event #${index} of the batch is invalid: ${reason}`);
    this.name = 'InvalidEventError';
  }
}
/** Is this a {@link InvalidEventError}? (by its stable `code`) */
export const isInvalidEventError = (e: unknown): e is InvalidEventError => hasCode(e, 'invalid-event');

/** An event's serialized form exceeds the store's limit. */
export class EventTooLargeError extends StoreError {
  declare readonly code: 'event-too-large';
  constructor(readonly index: number, readonly bytes: number, readonly limit: number) {
    super('event-too-large', `event #${index} of the batch is ${bytes} bytes; the limit is ${limit}`);
    this.name = 'EventTooLargeError';
  }
}
/** Is this a {@link EventTooLargeError}? (by its stable `code`) */
export const isEventTooLargeError = (e: unknown): e is EventTooLargeError => hasCode(e, 'event-too-large');

/**
 * An event id is used twice inside one batch, or a batch repeats some (not all) ids already in the stream,
 * or repeats them at other positions: that is not an idempotent retry, so nothing is written.
 */
export class DuplicateEventIdError extends StoreError {
  declare readonly code: 'duplicate-event-id';
  constructor(readonly stream: string, readonly eventId: string, reason: string) {
    super('duplicate-event-id', `stream "${stream}": event id ${eventId} ${reason}`);
    this.name = 'DuplicateEventIdError';
  }
}
/** Is this a {@link DuplicateEventIdError}? (by its stable `code`) */
export const isDuplicateEventIdError = (e: unknown): e is DuplicateEventIdError => hasCode(e, 'duplicate-event-id');

/** The store was closed: no more appends, reads or subscriptions. */
export class StoreClosedError extends StoreError {
  declare readonly code: 'store-closed';
  constructor() {
    super('store-closed', 'the store is closed');
    this.name = 'StoreClosedError';
  }
}
/** Is this a {@link StoreClosedError}? (by its stable `code`) */
export const isStoreClosedError = (e: unknown): e is StoreClosedError => hasCode(e, 'store-closed');
/** Every store error code (a Record, so that adding a code to StoreErrorCode without listing it here fails to compile). */
const STORE_ERROR_CODES: readonly string[] = Object.keys({
  concurrency: true,
  'invalid-stream-id': true,
  'invalid-event': true,
  'event-too-large': true,
  'duplicate-event-id': true,
  'store-closed': true,
  'store-io': true,
  'store-corrupt': true,
  'unknown-outcome': true,
  'subscription-dropped': true,
  'not-leader': true,
  'access-denied': true,
  'stream-deleted': true,
} satisfies Record<StoreErrorCode, true>);
/**
 * Is `e` one of the store's typed errors? Only the codes above count: a raw errno (`ENOSPC`, `EIO`) or a driver's
 * error (PostgreSQL's `57P01`) also carries a string `code`, and must be wrapped, not passed through as typed.
 */
export const isStoreError = (e: unknown): e is StoreError =>
  e instanceof Error && STORE_ERROR_CODES.includes((e as { code?: unknown }).code as string);

/** A file-system or network operation of the store failed; whatever the call was writing was rolled back. */
export class StoreIoError extends StoreError {
  declare readonly code: 'store-io';
  constructor(readonly operation: string, options?: { cause?: unknown }) {
    const cause = options?.cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    super('store-io', `store I/O failed during ${operation}${detail}`, options);
    this.name = 'StoreIoError';
  }
}
/** Is this a {@link StoreIoError}? (by its stable `code`) */
export const isStoreIoError = (e: unknown): e is StoreIoError => hasCode(e, 'store-io');

/** Stored data is damaged (bad checksum, broken sequence): reported with where it is, never skipped. */
export class StoreCorruptError extends StoreError {
  declare readonly code: 'store-corrupt';
  constructor(
    readonly file: string,
    /** Byte offset of the damaged record in `file`. */
    readonly offset: number,
    reason: string,
    /** 1-based line number when known. */
    readonly line?: number,
  ) {
    super('store-corrupt', `${file}${line === undefined ? '' : `:${line}`} (byte ${offset}): ${reason}`);
    this.name = 'StoreCorruptError';
  }
}
/** Is this a {@link StoreCorruptError}? (by its stable `code`) */
export const isStoreCorruptError = (e: unknown): e is StoreCorruptError => hasCode(e, 'store-corrupt');

/**
 * The store may or may not have written the batch: the request reached it, and then the answer was lost or came
 * back as a failure that does not say whether the write committed (a timeout after the write was sent, a dropped
 * connection after COMMIT, an fsync error whose rollback failed too). Nothing about the stream can be assumed:
 * resolve it by reading the stream's tail (its last revision and the ids stored there) and continue from what is
 * actually stored. Retrying the same batch blindly is safe only with the same ids at the same place.
 */
export class UnknownOutcomeError extends StoreError {
  declare readonly code: 'unknown-outcome';
  constructor(
    readonly stream: string,
    /** Number of events in the batch whose outcome is unknown. */
    readonly events: number,
    /** What happened, in one line (`"EventStoreDB timeout after the append was sent"`). */
    reason: string,
    options?: {
      cause?: unknown;
      /**
       * What probably caused it, when the store can tell: `'clock-skew'` when the server answered "timed out" at
       * once, as it does when the request's absolute deadline (set from this machine's clock) is already past
       * by its own clock.
       */
      hint?: 'clock-skew';
    },
  ) {
    super(
      'unknown-outcome',
      `stream "${stream}": the outcome of an append of ${events} event(s) is unknown: ${reason}${options?.hint === 'clock-skew' ? " (the server timed it out at once: check this machine's clock against the server's)" : ''}`,
      options,
    );
    this.name = 'UnknownOutcomeError';
    if (options?.hint !== undefined) this.hint = options.hint;
  }
  /** See the constructor's `options.hint`. */
  readonly hint?: 'clock-skew';
}
/** True for an `UnknownOutcomeError` (code `unknown-outcome`), by its code. */
export const isUnknownOutcomeError = (e: unknown): e is UnknownOutcomeError => hasCode(e, 'unknown-outcome');

/**
 * The server ended a live subscription (a consumer too slow for the server's live buffer, a dropped connection, a
 * leader change). Retryable: subscribe again after the last position handled; nothing was skipped before it.
 */
export class SubscriptionDroppedError extends StoreError {
  declare readonly code: 'subscription-dropped';
  constructor(what: string, reason: string, options?: { cause?: unknown }) {
    super('subscription-dropped', `${what}: the subscription was dropped: ${reason}`, options);
    this.name = 'SubscriptionDroppedError';
  }
}
/** True for a `SubscriptionDroppedError` (code `subscription-dropped`), by its code. */
export const isSubscriptionDroppedError = (e: unknown): e is SubscriptionDroppedError => hasCode(e, 'subscription-dropped');

/**
 * The node the store talked to cannot take this write: it is a follower (or read-only replica) of a cluster.
 * Nothing was written. Retryable: the client reconnects to `leader` (when the node named it) and the write can be
 * sent again.
 */
export class NotLeaderError extends StoreError {
  declare readonly code: 'not-leader';
  constructor(
    what: string,
    /** The leader's address as the node reported it, when it did. */
    readonly leader: { readonly host: string; readonly port: number } | undefined,
    options?: { cause?: unknown },
  ) {
    super('not-leader', `${what}: the node is not the cluster leader${leader ? `; the leader is ${leader.host}:${leader.port}` : ''}`, options);
    this.name = 'NotLeaderError';
  }
}
/** Is this a {@link NotLeaderError}? (by its stable `code`) */
export const isNotLeaderError = (e: unknown): e is NotLeaderError => hasCode(e, 'not-leader');

/** The store's credentials do not allow the operation (EventStoreDB: reading `$all` needs admin rights). Nothing was read or written. */
export class StoreAccessDeniedError extends StoreError {
  declare readonly code: 'access-denied';
  constructor(what: string, hint: string, options?: { cause?: unknown }) {
    super('access-denied', `${what}: access denied; ${hint}`, options);
    this.name = 'StoreAccessDeniedError';
  }
}
/** True for a `StoreAccessDeniedError` (code `access-denied`), by its code. */
export const isStoreAccessDeniedError = (e: unknown): e is StoreAccessDeniedError => hasCode(e, 'access-denied');

/**
 * The stream was deleted (archived, see `StreamDeletion`): its id is retired, so nothing can be appended to it and it
 * cannot be deleted again. Nothing was written.
 */
export class StreamDeletedError extends StoreError {
  declare readonly code: 'stream-deleted';
  constructor(readonly stream: string, options?: { cause?: unknown }) {
    super('stream-deleted', `stream "${stream}" was deleted (archived): its id cannot be written again`, options);
    this.name = 'StreamDeletedError';
  }
}
/** True for a `StreamDeletedError` (code `stream-deleted`), by its code. */
export const isStreamDeletedError = (e: unknown): e is StreamDeletedError => hasCode(e, 'stream-deleted');
