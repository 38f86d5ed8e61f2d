import type { EventType } from '../../domain/events.js';

/**
 * What the span derivation reads of an event. Beside every event's `seq`, `time` and `type`, `createSpanDeriver`
 * (with `validate: false`, the trusted fold the live export runs, and its inbox tracker) reads an event's data, its
 * metadata and its chain hash only for some types, and never an event's `id` or `ignorable`. A reader that hands
 * events to the derivation elsewhere (the live export's worker thread) hands over these fields and no others; a test
 * holds the spans of events stripped to them equal to the spans of the whole events.
 */

/** The fields of an event the span derivation may read beside `seq`, `time` and `type` (bit flags). */
export const SpanSourceField = {
  /** `data`. */
  Data: 1,
  /** `metadata` (the actor of an inbox span event). */
  Metadata: 2,
  /** `hash` (a turn's `steerlog.chain.head`). */
  Hash: 4,
} as const;

const { Data, Metadata, Hash } = SpanSourceField;

/** By type: what the derivation reads of an event of that type (a type not listed: nothing but the envelope's three). */
const READS: ReadonlyMap<string, number> = new Map<EventType, number>([
  ['session/created', Data], // the session id and the seed's length (at seq 0)
  ['agent/inbox/spliced', Data | Metadata], // the splice; the actor of its span events
  ['turn/start', Data],
  ['turn/end', Data | Hash], // the end reason; the chain head
  ['step/start', Data],
  ['request/error', Data],
  ['assistant/message', Data],
  ['tool/call', Data],
  ['tool/result', Data],
  ['subagent/start', Data],
  ['subagent/end', Data],
]);

/**
 * The fields ({@link SpanSourceField}, or-ed) the span derivation reads of an event of `type`. `content`: is there a
 * content hook (`SpanDeriverOptions.content`)? Only then is a `user/message`'s data read (its text, for the model
 * request's input).
 */
export const spanSourceFields = (type: string, content: boolean): number => (type === 'user/message' ? (content ? Data : 0) : (READS.get(type) ?? 0));
