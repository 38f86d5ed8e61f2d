import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import { createKeyring, openEnvelopeNow } from '../../runtime/content-opener.js';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { openDshLog } from '../../formats/dsh/dsh-source.js';
import { SessionNotFoundError } from './cli-failure.js';
import { sourceErrorOf } from '../../audit/audit-source.js';
import { untilRefusal } from '../../audit/dsh-audit.js';
import { batchesOfOne, fileEnvelopeBatches, storeEnvelopeBatches } from '../../audit/log-sources.js';
import { resolveFileFormat, type FormatOption } from '../../audit/log-format.js';
import { openReaderKeys } from './reader-keys.js';
import { assertReadableFile, readingFile, readingStore } from './reading-store.js';

/** A whole session log as a reading command loads it: its events (sealed content opened where a key allows) and where reading stopped. */
export interface LoadedLog {
  readonly events: readonly LogEvent[];
  /** The first event that is not valid (the events before it are loaded), or null. */
  readonly error: { readonly seq: number | null; readonly code: string; readonly message: string } | null;
}

/** Where a reading command takes a log from: a file (steerlog or harness format) or a session in a store. */
export interface LogSource {
  /** A file path, or the session id when `store` is given. */
  readonly target: string;
  readonly store?: string;
  /** @defaultValue 'auto' */
  readonly format?: FormatOption;
  /** The key store of sealed content (default with `store`: the one that goes with it). */
  readonly keys?: string;
}

/** Loads a whole log into memory, parsed event by event (a command that needs every event at once: context, diff, replay). */
export const loadLog = async (source: LogSource): Promise<LoadedLog> => {
  if (source.store === undefined) await assertReadableFile(source.target);
  const keys = await openReaderKeys(source.store, source.keys);
  const keyring = keys.keyring ?? createKeyring(null);
  const collect = async (batches: AsyncIterable<readonly unknown[]>): Promise<LoadedLog> => {
    const events: LogEvent[] = [];
    for await (const batch of batches) {
      for (const raw of batch) {
        const opening = openEnvelopeNow(raw, keyring);
        const parsed = parseEvent(opening instanceof Promise ? await opening : opening, { expectedSeq: events.length, owned: true });
        if (E.isLeft(parsed)) return { events, error: { seq: parsed.left.seq, code: parsed.left.code, message: parsed.left.message } };
        events.push(parsed.right);
      }
    }
    return { events, error: null };
  };
  try {
    const { store, target } = source;
    if (store !== undefined) {
      return await readingStore(store, async (s) => {
        const loaded = await collect(storeEnvelopeBatches(s, target));
        if (loaded.events.length === 0 && loaded.error === null) throw new SessionNotFoundError(target, store);
        return loaded;
      });
    }
    return await readingFile(target, async () => {
      if ((await resolveFileFormat(target, source.format ?? 'auto')) !== 'dsh') return collect(fileEnvelopeBatches(target));
      const read = untilRefusal(openDshLog(target).envelopes);
      const loaded = await collect(batchesOfOne<RawEnvelope>(read.envelopes));
      const refusal = read.error();
      return refusal && loaded.error === null ? { ...loaded, error: sourceErrorOf(refusal) } : loaded;
    });
  } finally {
    await keys.close();
  }
};
