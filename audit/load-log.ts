import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import { createKeyring, openEnvelopeNow, type Keyring } from '../runtime/content-opener.js';
import type { RawEnvelope } from '../runtime/ports/recorded-envelope.js';
import { openDshLog } from '../formats/dsh/dsh-source.js';
import { sourceErrorOf } from './audit-source.js';
import { untilRefusal } from './dsh-audit.js';
import { batchesOfOne, fileEnvelopeBatches, storeEnvelopeBatches } from './log-sources.js';
import { resolveFileFormat } from './log-format.js';
import type { LogSource } from './log-source.js';

/** A whole session log as a use case that needs every event at once loads it: its events (sealed content opened where a key allows) and where reading stopped. */
export interface LoadedLog {
  readonly events: readonly LogEvent[];
  /** The first event that is not valid (the events before it are loaded), or null. */
  readonly error: { readonly seq: number | null; readonly code: string; readonly message: string } | null;
}

/**
 * Loads a whole log into memory, parsed event by event (for the use cases that need every event at once: context,
 * diff, replay), from a file (steerlog's or the harness's format) or a store's session; sealed content is opened
 * with `keyring` (null: none). Undefined when the store has no such session.
 */
export function loadLog(source: LogSource & { readonly kind: 'file' }, keyring?: Keyring | null): Promise<LoadedLog>;
export function loadLog(source: LogSource, keyring?: Keyring | null): Promise<LoadedLog | undefined>;
export async function loadLog(source: LogSource, keyring: Keyring | null = null): Promise<LoadedLog | undefined> {
  const keys = keyring ?? createKeyring(null);
  const collect = async (batches: AsyncIterable<readonly unknown[]>): Promise<LoadedLog> => {
    const events: LogEvent[] = [];
    for await (const batch of batches) {
      for (const raw of batch) {
        const opening = openEnvelopeNow(raw, keys);
        const parsed = parseEvent(opening instanceof Promise ? await opening : opening, { expectedSeq: events.length, owned: true });
        if (E.isLeft(parsed)) return { events, error: { seq: parsed.left.seq, code: parsed.left.code, message: parsed.left.message } };
        events.push(parsed.right);
      }
    }
    return { events, error: null };
  };
  if (source.kind === 'store') {
    const loaded = await collect(storeEnvelopeBatches(source.store, source.session));
    return loaded.events.length === 0 && loaded.error === null ? undefined : loaded;
  }
  if ((await resolveFileFormat(source.path, source.format ?? 'auto')) !== 'dsh') return collect(fileEnvelopeBatches(source.path));
  const read = untilRefusal(openDshLog(source.path).envelopes);
  const loaded = await collect(batchesOfOne<RawEnvelope>(read.envelopes));
  const refusal = read.error();
  return refusal && loaded.error === null ? { ...loaded, error: sourceErrorOf(refusal) } : loaded;
}
