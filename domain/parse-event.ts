import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import type { EventId } from './brand.js';
import { EventParseError } from './errors.js';
import { isChainHash } from './event-chain.js';
import { EventMetadataSchema, type EventMetadata } from './event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType, type LogEvent } from './events.js';
import { fastEventData, isCommonMetadata } from './fast-event-data.js';
import { compiledEventValidator } from './event-validators.js';
import { deepFreeze, findNonJsonPath, isFrozenPlainJson } from './json.js';

/**
 * Is `s` a UUID (8-4-4-4-12 hex digits, either case)? The same answer as
 * `/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i`, without a regex run per event.
 */
export const isUuid = (s: string): boolean => {
  if (s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
};

/**
 * The common metadata (`isCommonMetadata`: only actor/correlationId/causationId, non-empty strings) as the event's:
 * frozen in place when the caller owns it, used as is when it is shared and frozen already, else copied (its values
 * are strings: a shallow copy is a deep one).
 */
const commonMetadata = (m: EventMetadata, options: ParseEventOptions): EventMetadata => {
  if (options.owned === true) return Object.freeze(m);
  if (options.shared === true && Object.isFrozen(m)) return m;
  return Object.freeze({ ...m });
};

/** The envelope's fields: any other is refused. */
const isEnvelopeKey = (key: string): boolean => {
  switch (key) {
    case 'seq':
    case 'id':
    case 'time':
    case 'type':
    case 'data':
    case 'ignorable':
    case 'metadata':
    case 'hash':
      return true;
    default:
      return false;
  }
};

const zodPath = (issue: z.ZodIssue): string =>
  issue.path.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), 'data');

/** Options of {@link parseEvent}. */
export interface ParseEventOptions {
  /** The seq this event must carry (contiguous logs). Omit to accept any. */
  readonly expectedSeq?: number;
  /**
   * The caller owns `raw` (nobody else holds it, as with what JSON.parse just returned): a valid event is frozen in
   * place instead of copied. `raw` must then be JSON.parse output (plain objects and arrays, no symbol keys, no
   * accessors), which is not checked again. @defaultValue false
   */
  readonly owned?: boolean;
  /**
   * `raw` may be held by others, and its data is deep-frozen already when it comes from a store (every store
   * freezes what it returns): the data is then used as is instead of copied — checked by the fast path, or else by
   * the type's compiled predicate, which only reads a deep-frozen plain value; data with any unfrozen part is copied
   * and checked by the schema as without this option. @defaultValue false
   */
  readonly shared?: boolean;
}

/**
 * Turns an untrusted JSON value into a typed, deep-frozen log event, or a typed error naming the seq,
 * the event type and the failing path. Unknown types are errors unless the event is marked `ignorable: true`.
 */
export const parseEvent = (raw: unknown, options: ParseEventOptions = {}): E.Either<EventParseError, LogEvent> => {
  // an event whose own seq is unusable is named by the position it stands at, when the reader knows it
  const position = options.expectedSeq ?? null;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return E.left(new EventParseError('malformed-envelope', position, null, '', 'an event is a JSON object'));
  }
  const env = raw as Record<string, unknown>;
  const seq = typeof env.seq === 'number' && Number.isSafeInteger(env.seq) && env.seq >= 0 ? env.seq : null;
  const type = typeof env.type === 'string' && env.type.length > 0 ? env.type : null;
  const fail = (code: EventParseError['code'], path: string, detail: string) =>
    E.left(new EventParseError(code, seq ?? position, type, path, detail));

  if (seq === null) return fail('malformed-envelope', 'seq', 'seq must be a non-negative safe integer');
  if (type === null) return fail('malformed-envelope', 'type', 'type must be a non-empty string');
  if (typeof env.id !== 'string' || !isUuid(env.id)) return fail('malformed-envelope', 'id', 'id must be a UUID');
  if (typeof env.time !== 'number' || !Number.isFinite(env.time)) return fail('malformed-envelope', 'time', 'time must be epoch milliseconds');
  if (!('data' in env)) return fail('malformed-envelope', 'data', 'data is missing');
  if (env.ignorable !== undefined && env.ignorable !== true) return fail('malformed-envelope', 'ignorable', 'ignorable must be true or absent');
  // JSON.parse makes no inherited enumerable keys, so for…in sees the own keys (without an array of them)
  for (const key in env) {
    if (Object.hasOwn(env, key) && !isEnvelopeKey(key)) return fail('malformed-envelope', key, `unexpected envelope field "${key}"`);
  }
  let metadata: EventMetadata | undefined;
  if (env.metadata !== undefined) {
    if (typeof env.metadata !== 'object' || env.metadata === null || Array.isArray(env.metadata)) {
      return fail('malformed-envelope', 'metadata', 'metadata must be an object');
    }
    if (isCommonMetadata(env.metadata)) metadata = commonMetadata(env.metadata as EventMetadata, options);
    else {
      const m = EventMetadataSchema.safeParse(env.metadata);
      if (!m.success) {
        const issue = m.error.issues[0]!;
        return fail('malformed-envelope', ['metadata', ...issue.path].join('.'), issue.message);
      }
      metadata = deepFreeze(structuredClone(env.metadata) as EventMetadata);
    }
  }
  if (env.hash !== undefined && !isChainHash(env.hash)) {
    return fail('malformed-envelope', 'hash', 'hash must be 64 lowercase hex digits (SHA-256)');
  }
  if (options.expectedSeq !== undefined && seq !== options.expectedSeq) {
    return fail('seq-out-of-order', 'seq', `expected seq ${options.expectedSeq}`);
  }
  if (env.ignorable !== true && isEventType(type)) {
    // the common shapes: checked and copied by hand (a strict subset of what the schema accepts, every leaf checked)
    const fast = fastEventData(type, env.data, { inPlace: options.owned === true, shared: options.shared === true });
    if (fast !== null) return E.right(envelope(seq, env.id as EventId, env.time, type, fast, env.ignorable === true, metadata, env.hash as string | undefined));
  }
  if (env.ignorable !== true && (options.owned === true || (options.shared === true && isFrozenPlainJson(env.data)))) {
    // any other shape the caller owns (JSON.parse output: lossless and acyclic), or shares deep-frozen (a store's
    // recorded data, which the predicate then only reads): the type's predicate compiled from its zod schema (true
    // only for data zod accepts unchanged) checks it and freezes it in place; zod only refuses
    const compiled = compiledEventValidator(type);
    if (compiled !== null && compiled(env.data)) return E.right(envelope(seq, env.id as EventId, env.time, type, env.data, false, metadata, env.hash as string | undefined));
  }
  const trailer = {
    ...(env.ignorable === true ? { ignorable: true as const } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(typeof env.hash === 'string' ? { hash: env.hash } : {}),
  };
  const nonJson = findNonJsonPath(env.data);
  if (nonJson !== null) return fail('invalid-event-data', nonJson.replace(/^\$/, 'data'), 'not lossless JSON');

  if (!isEventType(type)) {
    if (env.ignorable === true) {
      return E.right(deepFreeze({ seq, id: env.id as EventId, time: env.time, type, data: structuredClone(env.data), ...trailer, ignorable: true as const }));
    }
    return fail('unknown-event-type', 'type', `unknown event type "${type}" (not marked ignorable)`);
  }
  const result = EVENT_DATA_SCHEMAS[type].safeParse(env.data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    return fail('invalid-event-data', zodPath(issue), issue.message);
  }
  return E.right(
    deepFreeze({
      seq,
      id: env.id as EventId,
      time: env.time,
      type,
      data: result.data,
      ...trailer,
    }) as LogEvent,
  );
};

/**
 * The typed event, frozen: its fields in one order, the optional ones only when present (the same object the
 * general path builds, without spreading a trailer into it on every event).
 */
const envelope = (
  seq: number,
  id: EventId,
  time: number,
  type: string,
  data: unknown,
  ignorable: boolean,
  metadata: EventMetadata | undefined,
  hash: string | undefined,
): LogEvent => {
  const e: { seq: number; id: EventId; time: number; type: string; data: unknown; ignorable?: true; metadata?: EventMetadata; hash?: string } = { seq, id, time, type, data };
  if (ignorable) e.ignorable = true;
  if (metadata !== undefined) e.metadata = metadata;
  if (hash !== undefined) e.hash = hash;
  return Object.freeze(e) as LogEvent;
};

/** Parses one line of a JSONL log. */
export const parseLogLine = (line: string, options: ParseEventOptions = {}): E.Either<EventParseError, LogEvent> => {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    return E.left(new EventParseError('invalid-json', options.expectedSeq ?? null, null, '', `not JSON (${(e as Error).message})`));
  }
  return parseEvent(raw, { ...options, owned: true });
};
