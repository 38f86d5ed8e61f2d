import { loadLog, type LoadedLog } from '../../audit/load-log.js';
import { fileSource, storeSource } from '../../audit/log-source.js';
import type { FormatOption } from '../../audit/log-format.js';
import { SessionNotFoundError } from './cli-failure.js';
import { openReaderKeys } from './reader-keys.js';
import { assertReadableFile, readingFile, readingStore } from './reading-store.js';

export type { LoadedLog } from '../../audit/load-log.js';

/** What a whole-log command names on its command line: a file (steerlog or harness format) or a session in a store. */
export interface LogArgument {
  /** A file path, or the session id when `store` is given. */
  readonly target: string;
  /** The store's spec (opened read-only). @defaultValue none: `target` is a file */
  readonly store?: string;
  /** @defaultValue 'auto' */
  readonly format?: FormatOption;
  /** The key store of sealed content. @defaultValue with `store`: the one that goes with it; else none */
  readonly keys?: string;
}

/**
 * Opens what a whole-log command (context, diff) names — the file or the store read-only, and the key store —
 * and asks `loadLog` (audit/load-log.ts) for its events; a store without the session is `SessionNotFoundError`.
 */
export const readingLog = async (arg: LogArgument): Promise<LoadedLog> => {
  if (arg.store === undefined) await assertReadableFile(arg.target);
  const keys = await openReaderKeys(arg.store, arg.keys);
  try {
    const { store, target } = arg;
    if (store !== undefined) {
      return await readingStore(store, async (s) => {
        const loaded = await loadLog(storeSource(s, target), keys.keyring);
        if (loaded === undefined) throw new SessionNotFoundError(target, store);
        return loaded;
      });
    }
    return await readingFile(target, () => loadLog(fileSource(target, arg.format ?? 'auto'), keys.keyring));
  } finally {
    await keys.close();
  }
};
