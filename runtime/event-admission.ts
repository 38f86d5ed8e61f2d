import { EventMetadataSchema, type EventMetadata } from '../domain/event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType } from '../domain/events.js';
import { fastEventData, isCommonMetadata } from '../domain/fast-event-data.js';
import { deepFreeze, snapshotJson } from '../domain/json.js';
import { stripSealed } from './content-sealer.js';
import { RuntimeError } from './errors.js';

/** An event's data and metadata as a session log takes them: plain copies, checked and deep-frozen. */
export interface AdmittedEvent {
  /** The data, without a `sealed` sidecar (only the sealer writes one). */
  readonly data: unknown;
  readonly metadata: EventMetadata | undefined;
}

/**
 * Reads `data` and `options.metadata` once each into lossless JSON copies and checks the copies as a reader of the
 * stored log would: the data against its type's schema (an unknown type only when `ignorable`), the metadata against
 * the metadata schema. Throws a RuntimeError (`non-json-event`, `invalid-event`) naming what is wrong.
 */
export const admitEvent = (type: string, data: unknown, options: { readonly metadata?: EventMetadata; readonly ignorable?: true }): AdmittedEvent => {
  // one read of every property: the copy is what is checked, measured and logged
  const copied = snapshotJson(data);
  if (!copied.ok) throw new RuntimeError('non-json-event', `${type}: data is ${copied.problem} at ${copied.path.replace(/^\$/, 'data')}`);
  // the live log never holds an event that a reader of the stored log would refuse
  // the common shapes are checked by hand on the copy, which is ours (fast-event-data.ts: a strict subset of what
  // the schema accepts, frozen in place); anything else goes through the schema, which names what is wrong
  if (isEventType(type) && fastEventData(type, copied.value, { inPlace: true }) === null) {
    const checked = EVENT_DATA_SCHEMAS[type].safeParse(copied.value);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new RuntimeError('invalid-event', `${type}: ${issue.message} at ${['data', ...issue.path].join('.')}`);
    }
  } else if (!isEventType(type) && !options.ignorable) {
    throw new RuntimeError('invalid-event', `unknown event type "${type}" (only ignorable events of unknown types may be appended)`);
  }
  let metadata: EventMetadata | undefined;
  if (options.metadata !== undefined) {
    // one read of every property, as for the data
    const copiedMeta = snapshotJson(options.metadata);
    if (!copiedMeta.ok) throw new RuntimeError('non-json-event', `${type}: metadata is ${copiedMeta.problem} at ${copiedMeta.path.replace(/^\$/, 'metadata')}`);
    // the common metadata (only actor, correlationId and causationId, as strings) is checked by hand on the copy
    const checkedMeta = isCommonMetadata(copiedMeta.value) ? null : EventMetadataSchema.safeParse(copiedMeta.value);
    if (checkedMeta !== null && !checkedMeta.success) {
      const issue = checkedMeta.error.issues[0]!;
      throw new RuntimeError('invalid-event', `${type}: ${issue.message} at ${['metadata', ...issue.path].join('.')}`);
    }
    metadata = deepFreeze(copiedMeta.value) as EventMetadata;
  }
  // a `sealed` sidecar read from an erased log is dropped: only the sealer writes one, over what it encrypts
  return { data: deepFreeze(stripSealed(type, copied.value)), metadata };
};
