import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { envelopeOfRecorded, type RawEnvelope } from '../../runtime/ports/recorded-envelope.js';

/**
 * The raw events of a JSONL session log (one envelope per line), streamed: each line parsed as JSON (a line that
 * is not JSON yields the line itself, which every consumer refuses as "not a JSON object"). Blank lines are skipped.
 */
export async function* fileEnvelopes(file: string): AsyncIterable<unknown> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as unknown;
    } catch {
      yield line;
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
  for await (const e of store.readAll()) seen.add(e.stream);
  return [...seen];
};
