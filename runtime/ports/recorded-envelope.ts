import type { ChainedFields } from '../../domain/event-chain.js';
import type { LogEvent } from '../../domain/events.js';
import type { NewEvent, RecordedEvent } from './event-store.js';

/**
 * The raw envelope a stored event carries (seq = its stream revision), ready for `parseEvent` or a chain check: the
 * fields the chain covers, plus its hash.
 */
export type RawEnvelope = ChainedFields;

/** The optional fields an event carries from append to storage to reads, present only when set. */
export type OptionalEventFields = Pick<RawEnvelope, 'ignorable' | 'metadata' | 'hash'>;

/** Copies an event's optional fields (`ignorable`, `metadata`, `hash`), leaving out the ones it does not have. */
export const optionalEventFields = (e: OptionalEventFields): OptionalEventFields => ({
  ...(e.ignorable ? { ignorable: true as const } : {}),
  ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
  ...(e.hash !== undefined ? { hash: e.hash } : {}),
});

/** A recorded event as its session envelope: every field a store keeps, nothing it adds (stream, position). */
export const envelopeOfRecorded = (r: RecordedEvent): RawEnvelope => {
  // built field by field (no spread of an intermediate object): every event of every read goes through here
  const envelope: { -readonly [K in keyof RawEnvelope]: RawEnvelope[K] } = { seq: Number(r.revision), id: r.id, time: r.time, type: r.type, data: r.data };
  if (r.ignorable) envelope.ignorable = true;
  if (r.metadata !== undefined) envelope.metadata = r.metadata;
  if (r.hash !== undefined) envelope.hash = r.hash;
  return envelope;
};

/** A session event as the store receives it (the store assigns revision and position). */
export const newEventOf = (e: LogEvent): NewEvent => ({
  id: e.id,
  type: e.type,
  time: e.time,
  data: e.data,
  ...optionalEventFields(e),
});
