import type { LogEvent } from '../../domain/events.js';
import type { NewEvent, RecordedEvent } from './event-store.js';

/** The raw envelope a stored event carries (seq = its stream revision), ready for `parseEvent` or a chain check. */
export interface RawEnvelope {
  readonly seq: number;
  readonly id: string;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly ignorable?: true;
  readonly metadata?: NonNullable<NewEvent['metadata']>;
  readonly hash?: string;
}

/** A recorded event as its session envelope: every field a store keeps, nothing it adds (stream, position). */
export const envelopeOfRecorded = (r: RecordedEvent): RawEnvelope => ({
  seq: Number(r.revision),
  id: r.id,
  time: r.time,
  type: r.type,
  data: r.data,
  ...(r.ignorable ? { ignorable: true as const } : {}),
  ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
  ...(r.hash !== undefined ? { hash: r.hash } : {}),
});

/** A session event as the store receives it (the store assigns revision and position). */
export const newEventOf = (e: LogEvent): NewEvent => ({
  id: e.id,
  type: e.type,
  time: e.time,
  data: e.data,
  ...(e.ignorable ? { ignorable: true as const } : {}),
  ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
  ...(e.hash !== undefined ? { hash: e.hash } : {}),
});
