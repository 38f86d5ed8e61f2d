import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import type { EventId } from './brand.js';
import { EventParseError } from './errors.js';
import { isChainHash } from './event-chain.js';
import { EventMetadataSchema, type EventMetadata } from './event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType, type LogEvent } from './events.js';
import { fastEventData } from './fast-event-data.js';
import { deepFreeze, findNonJsonPath } from './json.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENVELOPE_KEYS = new Set(['seq', 'id', 'time', 'type', 'data', 'ignorable', 'metadata', 'hash']);

const zodPath = (issue: z.ZodIssue): string =>
  issue.path.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), 'data');

/** Options of {@link parseEvent}. */
export interface ParseEventOptions {
  /** The seq this event must carry (contiguous logs). Omit to accept any. */
  readonly expectedSeq?: number;
  /**
   * The caller owns `raw` (nobody else holds it, as with what JSON.parse just returned): a valid event is frozen in
   * place instead of copied. @defaultValue false
   */
  readonly owned?: boolean;
  /**
   * `raw` may be held by others, and its data is deep-frozen already when it comes from a store (every store
   * freezes what it returns): the data is then used as is instead of copied; data with any unfrozen part is copied
   * as without this option. @defaultValue false
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
  if (typeof env.id !== 'string' || !UUID.test(env.id)) return fail('malformed-envelope', 'id', 'id must be a UUID');
  if (typeof env.time !== 'number' || !Number.isFinite(env.time)) return fail('malformed-envelope', 'time', 'time must be epoch milliseconds');
  if (!('data' in env)) return fail('malformed-envelope', 'data', 'data is missing');
  if (env.ignorable !== undefined && env.ignorable !== true) return fail('malformed-envelope', 'ignorable', 'ignorable must be true or absent');
  for (const key of Object.keys(env)) {
    if (!ENVELOPE_KEYS.has(key)) return fail('malformed-envelope', key, `unexpected envelope field "${key}"`);
  }
  let metadata: EventMetadata | undefined;
  if (env.metadata !== undefined) {
    if (typeof env.metadata !== 'object' || env.metadata === null || Array.isArray(env.metadata)) {
      return fail('malformed-envelope', 'metadata', 'metadata must be an object');
    }
    const m = EventMetadataSchema.safeParse(env.metadata);
    if (!m.success) {
      const issue = m.error.issues[0]!;
      return fail('malformed-envelope', ['metadata', ...issue.path].join('.'), issue.message);
    }
    metadata = deepFreeze(structuredClone(env.metadata) as EventMetadata);
  }
  if (env.hash !== undefined && !isChainHash(env.hash)) {
    return fail('malformed-envelope', 'hash', 'hash must be 64 lowercase hex digits (SHA-256)');
  }
  const trailer = {
    ...(env.ignorable === true ? { ignorable: true as const } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(typeof env.hash === 'string' ? { hash: env.hash } : {}),
  };
  if (options.expectedSeq !== undefined && seq !== options.expectedSeq) {
    return fail('seq-out-of-order', 'seq', `expected seq ${options.expectedSeq}`);
  }
  if (env.ignorable !== true && isEventType(type)) {
    // the common shapes: checked and copied by hand (a strict subset of what the schema accepts, every leaf checked)
    const fast = fastEventData(type, env.data, { inPlace: options.owned === true, shared: options.shared === true });
    if (fast !== null) return E.right(Object.freeze({ seq, id: env.id as EventId, time: env.time, type, data: fast, ...trailer }) as LogEvent);
  }
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
