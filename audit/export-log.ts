import type { EventStore, RecordedEvent } from '../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';

/** A stored event as the envelope line of the exchange format (`seq` = stream revision). */
export const envelopeLine = (e: RecordedEvent): string => JSON.stringify(envelopeOfRecorded(e));

/** What {@link exportLog} wrote: how many events; `found` is false when the store has no such session (nothing written). */
export interface ExportLogResult {
  readonly found: boolean;
  readonly events: number;
}

/**
 * The export use case: a stored session as the plain envelope log (the exchange format `audit <log.jsonl>` reads),
 * one envelope line at a time to `write` (without its newline), streamed from the store.
 */
export const exportLog = async (store: EventStore, session: string, write: (line: string) => void): Promise<ExportLogResult> => {
  let events = 0;
  for await (const e of store.read(session)) {
    write(envelopeLine(e));
    events++;
  }
  return { found: events > 0, events };
};
