import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages, readStreamPages } from '../runtime/ports/paged-reads.js';
import { envelopeOfRecorded, type RawEnvelope } from '../runtime/ports/recorded-envelope.js';
import { LOG_BATCH_BYTES, lineValue, readLineBatches } from './read-lines.js';

/**
 * The raw events of a JSONL session log (one envelope per line), streamed: each line parsed as JSON (a line that
 * is not JSON yields the line itself, which every consumer refuses as "not a JSON object"). Blank lines are skipped.
 * Lines end at `\n`, `\r\n` or a lone `\r` (as `node:readline` splits them); the file is read in batches
 * (`readLineBatches`, `LOG_BATCH_BYTES` at a time), and a line with a carriage return inside is split there.
 * `range` reads the lines of one byte range (it starts at a line's first byte and ends after a `\n`).
 */
export async function* fileEnvelopes(file: string, range: { readonly start?: number; readonly end?: number } = {}): AsyncIterable<unknown> {
  for await (const batch of fileEnvelopeBatches(file, range)) yield* batch;
}

/**
 * `fileEnvelopes` a read's batch at a time: a reader that takes a whole batch in one step pays one asynchronous
 * step per batch instead of one per event.
 */
export async function* fileEnvelopeBatches(file: string, range: { readonly start?: number; readonly end?: number } = {}): AsyncIterable<readonly unknown[]> {
  for await (const lines of readLineBatches(file, { chunkBytes: LOG_BATCH_BYTES, ...range })) {
    const batch: unknown[] = [];
    for (const text of lines) {
      // readLineBatches ends lines at \n (dropping a \r before it); a \r left inside ends a line too
      if (text.includes('\r')) {
        for (const line of text.split('\r')) if (line.trim() !== '') batch.push(lineValue(line));
      } else if (text.trim() !== '') batch.push(lineValue(text));
    }
    if (batch.length > 0) yield batch;
  }
}

/** The envelopes of one session stream in a store (seq = revision), a stored page at a time. */
export async function* storeEnvelopeBatches(store: EventStore, stream: string): AsyncIterable<readonly RawEnvelope[]> {
  for await (const page of readStreamPages(store, stream)) yield page.map(envelopeOfRecorded);
}

/** Per-event envelopes as batches of one (for a source that has no batches of its own). */
export async function* batchesOfOne<T>(events: AsyncIterable<T> | Iterable<T>): AsyncIterable<readonly T[]> {
  for await (const e of events) yield [e];
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
