/**
 * The data-key store port: where the keys that encrypt message content and tool payloads live, so that destroying a
 * key erases the content it sealed (crypto-shredding) while the log and its hash chain stay as they are.
 *
 * One key per session (`actor` absent) and one per actor within a session (`actor` set). Keys are 32 random bytes
 * (AES-256-GCM). A destroyed key leaves a tombstone (its id, session, actor and `destroyedAt`, no key bytes), so a
 * reader can say "erased" rather than "unknown". steerlog ships a file store (`FileKeyStore`), a PostgreSQL table
 * (`PostgresKeyStore`) and a memory store (`MemoryKeyStore`, tests).
 */

/** A new data key. */
export interface NewDataKey {
  /** Unique, never reused (a destroyed id stays destroyed). */
  readonly keyId: string;
  readonly session: string;
  /** Present for an actor's key: content that actor sent to `session`. */
  readonly actor?: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** 32 bytes. */
  readonly key: Uint8Array;
}

/** What the store knows of a key id: its bytes, or that it was destroyed (and when). */
export type DataKeyLookup =
  | { readonly state: 'active'; readonly keyId: string; readonly session: string; readonly actor?: string; readonly key: Uint8Array }
  | { readonly state: 'destroyed'; readonly keyId: string; readonly session: string; readonly actor?: string; readonly destroyedAt: number };

/** Which keys to destroy: every key of one session, or every key of one actor (in every session). */
export type KeySelector = { readonly session: string } | { readonly actor: string };

/** A key that `destroy` destroyed now (keys already destroyed are not listed again). */
export interface DestroyedKey {
  readonly keyId: string;
  readonly session: string;
  readonly actor?: string;
}

/** Stores data keys. Every method resolves once the change is durable (fsynced, committed). */
export interface KeyStore {
  /** Stores a new key; refuses (`KeyStoreError` `key-exists`) an id the store already has, active or destroyed. */
  put(key: NewDataKey): Promise<void>;
  /** What the store knows of each id; ids it never had are absent from the map. */
  get(keyIds: readonly string[]): Promise<ReadonlyMap<string, DataKeyLookup>>;
  /**
   * Destroys every active key the selector names: afterwards no copy of their bytes is left in the store (see
   * each adapter's notes), and each is a tombstone with `destroyedAt = at`. Returns what it destroyed.
   */
  destroy(selector: KeySelector, at: number): Promise<readonly DestroyedKey[]>;
  /** Every key the selector names, active or destroyed (so an interrupted erase can be completed). */
  keysOf(selector: KeySelector): Promise<readonly DataKeyLookup[]>;
  /** Releases connections or handles. */
  close(): Promise<void>;
}

/** Stable codes of {@link KeyStoreError}. */
export type KeyStoreErrorCode = 'key-exists' | 'key-store-corrupt' | 'key-store-unavailable' | 'key-store-read-only';

/** A key store refused or failed an operation; `where` names the store (a file path, a table). */
export class KeyStoreError extends Error {
  readonly code: KeyStoreErrorCode;
  constructor(code: KeyStoreErrorCode, where: string, detail: string, options?: { cause?: unknown }) {
    super(`${where}: ${detail}`, options);
    this.name = 'KeyStoreError';
    this.code = code;
  }
}
/** Is this a {@link KeyStoreError}? (by its name and stable `code`) */
export const isKeyStoreError = (e: unknown): e is KeyStoreError =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'KeyStoreError' && typeof (e as { code?: unknown }).code === 'string';
