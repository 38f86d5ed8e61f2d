import { KeyStoreError, type DataKeyLookup, type DestroyedKey, type KeySelector, type KeyStore, type NewDataKey } from '../../runtime/ports/key-store.js';

/** One stored key: its bytes while active, `destroyedAt` (and no bytes) once destroyed. */
export interface KeyRecord {
  readonly keyId: string;
  readonly session: string;
  readonly actor?: string;
  readonly createdAt: number;
  readonly key?: Uint8Array;
  readonly destroyedAt?: number;
}

/** What a record says of its key. */
export const lookupOf = (r: KeyRecord): DataKeyLookup => {
  const who = { keyId: r.keyId, session: r.session, ...(r.actor !== undefined ? { actor: r.actor } : {}) };
  return r.key !== undefined ? { state: 'active', ...who, key: r.key } : { state: 'destroyed', ...who, destroyedAt: r.destroyedAt ?? 0 };
};

/** Does the selector name this record? */
export const selects = (selector: KeySelector, r: KeyRecord): boolean =>
  'session' in selector ? r.session === selector.session : r.actor === selector.actor;

/** Data keys in memory (tests and demos): destroying a key drops its bytes. */
export class MemoryKeyStore implements KeyStore {
  readonly #records = new Map<string, KeyRecord>();

  put(key: NewDataKey): Promise<void> {
    if (this.#records.has(key.keyId)) return Promise.reject(new KeyStoreError('key-exists', 'memory key store', `key ${key.keyId} exists`));
    this.#records.set(key.keyId, { ...key, key: new Uint8Array(key.key) });
    return Promise.resolve();
  }

  get(keyIds: readonly string[]): Promise<ReadonlyMap<string, DataKeyLookup>> {
    const out = new Map<string, DataKeyLookup>();
    for (const id of keyIds) {
      const r = this.#records.get(id);
      if (r) out.set(id, lookupOf(r));
    }
    return Promise.resolve(out);
  }

  destroy(selector: KeySelector, at: number): Promise<readonly DestroyedKey[]> {
    const out: DestroyedKey[] = [];
    for (const r of this.#records.values()) {
      if (r.key === undefined || !selects(selector, r)) continue;
      r.key.fill(0);
      const { key: _gone, ...rest } = r;
      this.#records.set(r.keyId, { ...rest, destroyedAt: at });
      out.push({ keyId: r.keyId, session: r.session, ...(r.actor !== undefined ? { actor: r.actor } : {}) });
    }
    return Promise.resolve(out);
  }

  keysOf(selector: KeySelector): Promise<readonly DataKeyLookup[]> {
    return Promise.resolve([...this.#records.values()].filter((r) => selects(selector, r)).map(lookupOf));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
