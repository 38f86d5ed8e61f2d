import { createKeyring, type Keyring } from '../../runtime/content-opener.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { defaultKeyStoreSpec, openKeyStore } from '../keys/open-key-store.js';

/** The keys a reading command opens sealed content with, and how to release them. */
export interface ReaderKeys {
  /** null: no key store (sealed content reads `[encrypted]`, or `[erased]` where the log records it). */
  readonly keyring: Keyring | null;
  close(): Promise<void>;
}

/**
 * The key store of a reading command, opened read-only: `--keys` when given, else the one that goes with
 * `--store` (a missing key file or table holds no keys), else none.
 */
export const openReaderKeys = async (storeSpec: string | undefined, keysSpec: string | undefined): Promise<ReaderKeys> => {
  const spec = keysSpec ?? (storeSpec !== undefined ? defaultKeyStoreSpec(storeSpec) : null);
  if (spec === null) return { keyring: null, close: async () => undefined };
  const keys: KeyStore = await openKeyStore(spec, { readOnly: true });
  return { keyring: createKeyring(keys), close: () => keys.close() };
};
