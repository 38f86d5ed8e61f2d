import { isChainHash } from '../../domain/event-chain.js';
import { describeValue, findNonJsonPath } from '../../domain/json.js';
import { checkedForm } from './checked-events.js';
import type { ExpectedRevision, NewEvent } from './event-store.js';
import {
  ConcurrencyError,
  DuplicateEventIdError,
  EventTooLargeError,
  InvalidEventError,
  InvalidStreamIdError,
  type ActualRevision,
} from './store-errors.js';

/** Longest stream id, in UTF-8 bytes, that every store accepts. */
export const MAX_STREAM_ID_BYTES = 200;
/** Default largest serialized event (its JSON envelope), in bytes. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Refuses ids that some store cannot keep safely: not a string, empty, too long, control characters (NUL, newline,
 * tab…) or broken UTF-16 (a lone surrogate). Every store and the runtime (createSession, resume, fork) call this one
 * function. (EventStoreDB additionally reserves ids starting with `$` for its system streams.)
 */
export const assertValidStreamId = (stream: unknown): string => {
  if (typeof stream !== 'string') throw new InvalidStreamIdError(stream, 'not a string');
  if (stream.length === 0) throw new InvalidStreamIdError(stream, 'empty');
  if (LONE_SURROGATE.test(stream)) throw new InvalidStreamIdError(stream, 'not valid UTF-16 (lone surrogate)');
  if (CONTROL.test(stream)) throw new InvalidStreamIdError(stream, 'control characters are not allowed');
  const bytes = Buffer.byteLength(stream, 'utf8');
  if (bytes > MAX_STREAM_ID_BYTES) {
    throw new InvalidStreamIdError(stream, `${bytes} bytes; at most ${MAX_STREAM_ID_BYTES}`);
  }
  return stream;
};

/**
 * The size of an event as every store measures it against its `maxEventBytes`: the UTF-8 bytes of its id, its type
 * and its data serialized as JSON. The runtime measures the events it is about to log with this same function, so
 * an event the live log admits is never one the store refuses as too large.
 */
export const eventSizeBytes = (event: { readonly id: string; readonly type: string; readonly data: unknown; readonly metadata?: unknown }): number =>
  eventSizeOfJson(JSON.stringify(event.data), event);

/** `eventSizeBytes` of an event whose data is already serialized (`dataJson` = `JSON.stringify(event.data)`). */
export const eventSizeOfJson = (dataJson: string, event: { readonly id: string; readonly type: string; readonly metadata?: unknown }): number =>
  Buffer.byteLength(dataJson, 'utf8') +
  Buffer.byteLength(event.type, 'utf8') +
  Buffer.byteLength(event.id, 'utf8') +
  (event.metadata === undefined ? 0 : Buffer.byteLength(JSON.stringify(event.metadata), 'utf8'));

/**
 * Checks every event of a batch.
 * Ids must be non-empty strings, unique inside the batch; data lossless JSON; the envelope within `maxEventBytes`.
 * An event the session log built and marked (`markChecked`: deep-frozen, validated, measured) skips the walk over
 * its data and metadata and the measurement, which it already passed; its id, type, time, uniqueness and size
 * against this store's maximum are still checked. Every other event is checked in full.
 */
export const assertValidBatch = (
  stream: string,
  events: readonly NewEvent[],
  maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES,
): void => {
  if (!Array.isArray(events)) throw new InvalidEventError(0, 'the batch is not an array');
  const ids = new Set<string>();
  events.forEach((e, i) => {
    if (typeof e !== 'object' || e === null) throw new InvalidEventError(i, 'not an object');
    if (typeof e.id !== 'string' || e.id.length === 0) throw new InvalidEventError(i, 'id must be a non-empty string');
    if (typeof e.type !== 'string' || e.type.length === 0) throw new InvalidEventError(i, 'type must be a non-empty string');
    if (typeof e.time !== 'number' || !Number.isFinite(e.time)) throw new InvalidEventError(i, 'time must be a finite number');
    const form = checkedForm(e);
    if (form !== undefined) {
      if (ids.has(e.id)) throw new DuplicateEventIdError(stream, e.id, 'appears twice in one batch');
      ids.add(e.id);
      if (form.size > maxEventBytes) throw new EventTooLargeError(i, form.size, maxEventBytes);
      return;
    }
    if (e.ignorable !== undefined && e.ignorable !== true) throw new InvalidEventError(i, 'ignorable must be true or absent');
    const bad = findNonJsonPath(e.data);
    if (bad !== null) throw new InvalidEventError(i, `data is not lossless JSON at ${bad}`);
    if (e.metadata !== undefined) {
      if (typeof e.metadata !== 'object' || e.metadata === null || Array.isArray(e.metadata)) throw new InvalidEventError(i, 'metadata must be an object or absent');
      const badMeta = findNonJsonPath(e.metadata);
      if (badMeta !== null) throw new InvalidEventError(i, `metadata is not lossless JSON at ${badMeta}`);
    }
    if (e.hash !== undefined && !isChainHash(e.hash)) {
      throw new InvalidEventError(i, 'hash must be 64 lowercase hex digits or absent');
    }
    if (ids.has(e.id)) throw new DuplicateEventIdError(stream, e.id, 'appears twice in one batch');
    ids.add(e.id);
    const bytes = eventSizeBytes(e);
    if (bytes > maxEventBytes) throw new EventTooLargeError(i, bytes, maxEventBytes);
  });
};

/** Does the stream's actual revision satisfy the expected one? */
export const expectedRevisionMatches = (expected: ExpectedRevision, actual: ActualRevision): boolean => {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === 'no_stream';
  if (expected === 'stream_exists') return actual !== 'no_stream';
  return actual !== 'no_stream' && actual === expected;
};

export const assertValidExpected = (expected: unknown): ExpectedRevision => {
  if (expected === 'any' || expected === 'no_stream' || expected === 'stream_exists') return expected;
  if (typeof expected === 'bigint' && expected >= 0n) return expected;
  throw new InvalidEventError(0, `expected revision must be 'any', 'no_stream', 'stream_exists' or a bigint >= 0, got ${describeValue(expected)}`);
};

/**
 * Idempotency check shared by stores that can look ids up: given the stored events' ids at the positions
 * where a retried batch would have landed, decide between "already appended" and "conflict".
 * `storedIdsFrom(i)` returns the id stored at (first match revision + i), or undefined.
 */
export type IdempotencyVerdict =
  | { readonly kind: 'new' }
  | { readonly kind: 'already-appended'; readonly lastRevision: bigint };

export const idempotencyVerdict = (
  stream: string,
  events: readonly NewEvent[],
  revisionOfId: (id: string) => bigint | undefined,
): IdempotencyVerdict => {
  if (events.length === 0) return { kind: 'new' };
  const first = revisionOfId(events[0]!.id);
  const known = events.filter((e) => revisionOfId(e.id) !== undefined);
  if (known.length === 0) return { kind: 'new' };
  if (first === undefined || known.length !== events.length) {
    throw new DuplicateEventIdError(stream, known[0]!.id, 'is already stored, but the batch is not a retry of a stored batch');
  }
  events.forEach((e, i) => {
    if (revisionOfId(e.id) !== first + BigInt(i)) {
      throw new DuplicateEventIdError(stream, e.id, 'is already stored at another position');
    }
  });
  return { kind: 'already-appended', lastRevision: first + BigInt(events.length - 1) };
};

export const concurrencyError = (stream: string, expected: ExpectedRevision, actual: ActualRevision): ConcurrencyError =>
  new ConcurrencyError(stream, expected, actual);
