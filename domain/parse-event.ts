import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import type { EventId } from './brand.js';
import { EventParseError } from './errors.js';
import { isChainHash } from './event-chain.js';
import { EventMetadataSchema, type EventMetadata } from './event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType, type EventType, type LogEvent } from './events.js';
import { fastEventData, isCommonMetadata } from './fast-event-data.js';
import { compiledEventValidator } from './event-validators.js';
import { deepFreeze, findNonJsonPath, isFrozenPlainJson } from './json.js';

/**
 * Is `s` a UUID (8-4-4-4-12 hex digits, either case)? The same answer as
 * `/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i`, without a regex run per event.
 */
export const isUuid = (s: string): boolean =>
  s.length === 36 &&
  s.charCodeAt(8) === 45 &&
  s.charCodeAt(13) === 45 &&
  s.charCodeAt(18) === 45 &&
  s.charCodeAt(23) === 45 &&
  hexRun(s, 0, 8) &&
  hexRun(s, 9, 13) &&
  hexRun(s, 14, 18) &&
  hexRun(s, 19, 23) &&
  hexRun(s, 24, 36);

/** 1 at the char codes of 0-9, a-f and A-F, else 0. */
const HEX_DIGIT = (() => {
  const t = new Uint8Array(128);
  for (const c of '0123456789abcdefABCDEF') t[c.charCodeAt(0)] = 1;
  return t;
})();
/** Is every character of `s` from `from` to `to` (exclusive) a hex digit, in either case? */
const hexRun = (s: string, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || HEX_DIGIT[c] === 0) return false;
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

/** The first own key of `env` that is not an envelope field, or null (for…in: no array of the keys). */
const extraEnvelopeKey = (env: Record<string, unknown>): string | null => {
  for (const key in env) if (Object.hasOwn(env, key) && !isEnvelopeKey(key)) return key;
  return null;
};

/** How many enumerable keys `o` has (own and inherited). */
const keyCount = (o: object): number => {
  let n = 0;
  for (const _ in o) n++;
  return n;
};

const zodPath = (issue: z.ZodIssue): string =>
  issue.path.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), 'data');

/** A refusal of parseEvent. */
const refuse = (code: EventParseError['code'], seq: number | null, type: string | null, path: string, detail: string): E.Either<EventParseError, LogEvent> =>
  E.left(new EventParseError(code, seq, type, path, detail));

/** fastEventData's options, made once. */
const IN_PLACE = { inPlace: true } as const;
const SHARED = { shared: true } as const;
const COPY = {} as const;

/** Options of {@link parseEvent}. */
export interface ParseEventOptions {
  /** The seq this event must carry (contiguous logs). Omit to accept any. */
  readonly expectedSeq?: number;
  /**
   * The caller owns `raw` (nobody else holds it, as with what JSON.parse just returned): a valid event is frozen in
   * place instead of copied (`raw` itself is returned when it has the event's shape). `raw` must then be JSON.parse output (plain objects and arrays, no symbol keys, no
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

  if (seq === null) return refuse('malformed-envelope', seq ?? position, type, 'seq', 'seq must be a non-negative safe integer');
  if (type === null) return refuse('malformed-envelope', seq ?? position, type, 'type', 'type must be a non-empty string');
  if (typeof env.id !== 'string' || !isUuid(env.id)) return refuse('malformed-envelope', seq ?? position, type, 'id', 'id must be a UUID');
  if (typeof env.time !== 'number' || !Number.isFinite(env.time)) return refuse('malformed-envelope', seq ?? position, type, 'time', 'time must be epoch milliseconds');
  if (!('data' in env)) return refuse('malformed-envelope', seq ?? position, type, 'data', 'data is missing');
  if (env.ignorable !== undefined && env.ignorable !== true) return refuse('malformed-envelope', seq ?? position, type, 'ignorable', 'ignorable must be true or absent');
  // owned (JSON.parse output: no inherited keys, no key with `undefined`): seq, id, time, type and data are own keys,
  // so as many keys as those and the optional fields present means no other key; otherwise each key is looked at
  if (options.owned !== true || keyCount(env) !== 5 + (env.ignorable !== undefined ? 1 : 0) + (env.metadata !== undefined ? 1 : 0) + (env.hash !== undefined ? 1 : 0)) {
    const extra = extraEnvelopeKey(env);
    if (extra !== null) return refuse('malformed-envelope', seq ?? position, type, extra, `unexpected envelope field "${extra}"`);
  }
  let metadata: EventMetadata | undefined;
  if (env.metadata !== undefined) {
    if (typeof env.metadata !== 'object' || env.metadata === null || Array.isArray(env.metadata)) {
      return refuse('malformed-envelope', seq ?? position, type, 'metadata', 'metadata must be an object');
    }
    if (isCommonMetadata(env.metadata)) metadata = commonMetadata(env.metadata as EventMetadata, options);
    else {
      const m = EventMetadataSchema.safeParse(env.metadata);
      if (!m.success) {
        const issue = m.error.issues[0]!;
        return refuse('malformed-envelope', seq ?? position, type, ['metadata', ...issue.path].join('.'), issue.message);
      }
      metadata = deepFreeze(structuredClone(env.metadata) as EventMetadata);
    }
  }
  if (env.hash !== undefined && !isChainHash(env.hash)) {
    return refuse('malformed-envelope', seq ?? position, type, 'hash', 'hash must be 64 lowercase hex digits (SHA-256)');
  }
  if (options.expectedSeq !== undefined && seq !== options.expectedSeq) {
    return refuse('seq-out-of-order', seq ?? position, type, 'seq', `expected seq ${options.expectedSeq}`);
  }
  if (env.ignorable !== true) {
    // the common shapes of known types: checked and copied by hand (a strict subset of what the schema accepts, every
    // leaf checked); null for any other type, known or not
    const fast = fastEventData(type as EventType, env.data, options.owned === true ? IN_PLACE : options.shared === true ? SHARED : COPY);
    if (fast !== null) {
      if (options.owned === true && ownedAsEvent(env, fast, metadata)) return E.right(Object.freeze(env) as unknown as LogEvent);
      return E.right(envelope(seq, env.id as EventId, env.time, type, fast, env.ignorable === true, metadata, env.hash as string | undefined));
    }
  }
  if (env.ignorable !== true && (options.owned === true || (options.shared === true && isFrozenPlainJson(env.data)))) {
    // any other shape the caller owns (JSON.parse output: lossless and acyclic), or shares deep-frozen (a store's
    // recorded data, which the predicate then only reads): the type's predicate compiled from its zod schema (true
    // only for data zod accepts unchanged) checks it and freezes it in place; zod only refuses
    const compiled = compiledEventValidator(type);
    if (compiled !== null && compiled(env.data)) {
      if (ownedAsEvent(env, env.data, metadata)) return E.right(Object.freeze(env) as unknown as LogEvent);
      return E.right(envelope(seq, env.id as EventId, env.time, type, env.data, false, metadata, env.hash as string | undefined));
    }
  }
  const trailer = {
    ...(env.ignorable === true ? { ignorable: true as const } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(typeof env.hash === 'string' ? { hash: env.hash } : {}),
  };
  const nonJson = findNonJsonPath(env.data);
  if (nonJson !== null) return refuse('invalid-event-data', seq ?? position, type, nonJson.replace(/^\$/, 'data'), 'not lossless JSON');

  if (!isEventType(type)) {
    if (env.ignorable === true) {
      return E.right(deepFreeze({ seq, id: env.id as EventId, time: env.time, type, data: structuredClone(env.data), ...trailer, ignorable: true as const }));
    }
    return refuse('unknown-event-type', seq ?? position, type, 'type', `unknown event type "${type}" (not marked ignorable)`);
  }
  const result = EVENT_DATA_SCHEMAS[type].safeParse(env.data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    return refuse('invalid-event-data', seq ?? position, type, zodPath(issue), issue.message);
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
 * Can the caller's own envelope (owned: checked above, every key an envelope field) be the event itself, frozen in
 * place instead of copied into a new object? When its data and metadata are the checked ones (not copies) and no
 * optional field is present with `undefined` (which the copy would drop; JSON.parse makes none): the event is then
 * what {@link envelope} would build, field for field.
 */
const ownedAsEvent = (env: Record<string, unknown>, data: unknown, metadata: EventMetadata | undefined): boolean =>
  env.data === data &&
  env.metadata === metadata &&
  (metadata !== undefined || !('metadata' in env)) &&
  (env.ignorable !== undefined || !('ignorable' in env)) &&
  (env.hash !== undefined || !('hash' in env));

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
