import type { EventStore } from '../../runtime/ports/event-store.js';
import { readAllPages } from '../../runtime/ports/paged-reads.js';
import { envelopeOfRecorded, type RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { LOG_BATCH_BYTES, lineValue, readLineBatches } from './read-lines.js';

/**
 * The raw events of a JSONL session log (one envelope per line), streamed: each line parsed as JSON (a line that
 * is not JSON yields the line itself, which every consumer refuses as "not a JSON object"). Blank lines are skipped.
 * Lines end at `\n`, `\r\n` or a lone `\r` (as `node:readline` splits them); the file is read in batches
 * (`readLineBatches`, `LOG_BATCH_BYTES` at a time), and a line with a carriage return inside is split there.
 * `range` reads the lines of one byte range (it starts at a line's first byte and ends after a `\n`).
 */
export async function* fileEnvelopes(file: string, range: { readonly start?: number; readonly end?: number } = {}): AsyncIterable<unknown> {
  for await (const batch of readLineBatches(file, { chunkBytes: LOG_BATCH_BYTES, ...range })) {
    for (const text of batch) {
      // readLineBatches ends lines at \n (dropping a \r before it); a \r left inside ends a line too
      for (const line of text.includes('\r') ? text.split('\r') : [text]) if (line.trim() !== '') yield lineValue(line);
    }
  }
}

/** The envelopes of one session stream in a store (seq = revision), streamed. */
export async function* storeEnvelopes(store: EventStore, stream: string): AsyncIterable<RawEnvelope> {
  for await (const e of store.read(stream)) yield envelopeOfRecorded(e);
}

/** Every stream of a store, in the order of its first event (one pass over the global order). */
export const listStreams = async (store: EventStore): Promise<string[]> => {
  const seen = new Set<string>();
  for await (const page of readAllPages(store)) for (const e of page) seen.add(e.stream);
  return [...seen];
};
