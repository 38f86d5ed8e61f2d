import { join } from 'node:path';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { InvalidStoreSpecError, requireStoreDriver, STORE_DRIVER_PACKAGES } from '../store/open-store.js';
import { FileKeyStore } from './file-key-store.js';
import { MemoryKeyStore } from './memory-key-store.js';

/**
 * Where data keys live, as one string: `file:<path>` (a {@link FileKeyStore}), `postgres://…[?schema=name]` (the
 * `steerlog_data_keys` table, `PostgresKeyStore`) or `memory:`. A key store object is returned as it is.
 */
export type KeyStoreSpec = KeyStore | string;

/** The key store that goes with a store spec: `file:<dir>/keys.json` for `jsonl:<dir>`, the same database for `postgres://`; null for others. */
export const defaultKeyStoreSpec = (storeSpec: string): string | null => {
  if (storeSpec.startsWith('jsonl:')) return `file:${join(storeSpec.slice('jsonl:'.length), 'keys.json')}`;
  if (/^postgres(ql)?:\/\//.test(storeSpec)) return storeSpec;
  return null;
};

const isKeyStore = (x: unknown): x is KeyStore =>
  typeof x === 'object' && x !== null && ['put', 'get', 'destroy'].every((m) => typeof (x as Record<string, unknown>)[m] === 'function');

/** Opens the key store a spec names (`readOnly`: nothing is created or written; a missing file or table holds no keys). */
export const openKeyStore = async (spec: KeyStoreSpec, options: { readonly readOnly?: boolean } = {}): Promise<KeyStore> => {
  if (isKeyStore(spec)) return spec;
  if (typeof spec !== 'string') throw new InvalidStoreSpecError(String(spec), 'expected a key store object or a string');
  const readOnly = options.readOnly === true;
  if (spec === 'memory:') return new MemoryKeyStore();
  if (spec.startsWith('file:') && spec.length > 'file:'.length) return new FileKeyStore(spec.slice('file:'.length), { readOnly });
  if (/^postgres(ql)?:\/\//.test(spec)) {
    const url = new URL(spec);
    const schema = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    await requireStoreDriver('postgres://', STORE_DRIVER_PACKAGES.postgres);
    const { PostgresKeyStore } = await import('./postgres-key-store.js');
    return new PostgresKeyStore({ connection: url.toString(), readOnly, ...(schema ? { schema } : {}) });
  }
  throw new InvalidStoreSpecError(spec, 'expected a key store: file:<path>, postgres://… or memory:');
};
