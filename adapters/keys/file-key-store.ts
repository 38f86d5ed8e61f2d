import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyStoreError, type DataKeyLookup, type DestroyedKey, type KeySelector, type KeyStore, type NewDataKey } from '../../runtime/ports/key-store.js';
import { lookupOf, selects, type KeyRecord } from './memory-key-store.js';

/** Options of {@link FileKeyStore}. */
export interface FileKeyStoreOptions {
  /** Refuse `put` and `destroy` (`key-store-read-only`); a missing file holds no keys. @defaultValue false */
  readonly readOnly?: boolean;
  /** fsync the file before the rename and the directory after it. Turn off only for tests. @defaultValue true */
  readonly fsync?: boolean;
  /** How long a writer waits for another one's lock file before it gives up (`key-store-unavailable`). @defaultValue 5000 */
  readonly lockTimeoutMs?: number;
}

interface FileRecord {
  readonly keyId: string;
  readonly session: string;
  readonly actor?: string;
  readonly createdAt: number;
  /** base64, while active. */
  readonly key?: string;
  readonly destroyedAt?: number;
}

const FORMAT = 'steerlog-keys';

/**
 * Data keys in one JSON file (`{"format":"steerlog-keys","version":1,"keys":[…]}`, mode 0600). Every change
 * rewrites the whole file atomically under a lock file (`<file>.lock`, created exclusively): read, change, write a
 * temporary file, fsync it, rename it over the old one, fsync the directory. A crash leaves the old file or the new
 * one. Destroying a key writes a file without its bytes (the record stays as a tombstone) and removes the old
 * file; see docs/audit.md for what the file system may still hold (old blocks are not overwritten).
 */
export class FileKeyStore implements KeyStore {
  readonly #opts: FileKeyStoreOptions;
  #counter = 0;
  /** Changes from this process, one at a time (the lock file orders them with other processes). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string, options: FileKeyStoreOptions = {}) {
    this.#opts = options;
  }

  async get(keyIds: readonly string[]): Promise<ReadonlyMap<string, DataKeyLookup>> {
    const records = await this.#read();
    const out = new Map<string, DataKeyLookup>();
    for (const id of keyIds) {
      const r = records.get(id);
      if (r) out.set(id, lookupOf(r));
    }
    return out;
  }

  put(key: NewDataKey): Promise<void> {
    return this.#change((records) => {
      if (records.has(key.keyId)) throw new KeyStoreError('key-exists', this.file, `key ${key.keyId} exists`);
      records.set(key.keyId, { ...key, key: new Uint8Array(key.key) });
      return undefined;
    });
  }

  destroy(selector: KeySelector, at: number): Promise<readonly DestroyedKey[]> {
    return this.#change((records) => {
      const out: DestroyedKey[] = [];
      for (const r of records.values()) {
        if (r.key === undefined || !selects(selector, r)) continue;
        const { key: _gone, ...rest } = r;
        records.set(r.keyId, { ...rest, destroyedAt: at });
        out.push({ keyId: r.keyId, session: r.session, ...(r.actor !== undefined ? { actor: r.actor } : {}) });
      }
      return out;
    });
  }

  async keysOf(selector: KeySelector): Promise<readonly DataKeyLookup[]> {
    return [...(await this.#read()).values()].filter((r) => selects(selector, r)).map(lookupOf);
  }

  close(): Promise<void> {
    return this.#queue.then(
      () => undefined,
      () => undefined,
    );
  }

  #change<T>(f: (records: Map<string, KeyRecord>) => T): Promise<T> {
    if (this.#opts.readOnly) return Promise.reject(new KeyStoreError('key-store-read-only', this.file, 'opened read-only'));
    const run = this.#queue.then(
      () => this.#locked(f),
      () => this.#locked(f),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #locked<T>(f: (records: Map<string, KeyRecord>) => T): Promise<T> {
    await mkdir(dirname(this.file), { recursive: true });
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + (this.#opts.lockTimeoutMs ?? 5000);
    for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
      try {
        await (await open(lock, 'wx')).close();
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        if (Date.now() > deadline) throw new KeyStoreError('key-store-unavailable', this.file, `locked by ${lock} (another writer, or a crashed one: remove the lock file if no steerlog process is running)`);
        await sleep(wait);
      }
    }
    try {
      const records = await this.#read();
      const result = f(records);
      await this.#write(records);
      return result;
    } finally {
      await rm(lock, { force: true });
    }
  }

  async #read(): Promise<Map<string, KeyRecord>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw new KeyStoreError('key-store-unavailable', this.file, (e as Error).message, { cause: e });
    }
    let parsed: { format?: unknown; version?: unknown; keys?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch (e) {
      throw new KeyStoreError('key-store-corrupt', this.file, 'not JSON', { cause: e });
    }
    if (parsed.format !== FORMAT || parsed.version !== 1 || !Array.isArray(parsed.keys)) {
      throw new KeyStoreError('key-store-corrupt', this.file, `not a ${FORMAT} version 1 file`);
    }
    const out = new Map<string, KeyRecord>();
    for (const r of parsed.keys as FileRecord[]) {
      if (typeof r?.keyId !== 'string' || typeof r.session !== 'string') throw new KeyStoreError('key-store-corrupt', this.file, 'a key without keyId or session');
      out.set(r.keyId, { ...r, key: r.key === undefined ? undefined : new Uint8Array(Buffer.from(r.key, 'base64')) } as KeyRecord);
    }
    return out;
  }

  async #write(records: Map<string, KeyRecord>): Promise<void> {
    const keys: FileRecord[] = [...records.values()].map((r) => ({
      keyId: r.keyId,
      session: r.session,
      ...(r.actor !== undefined ? { actor: r.actor } : {}),
      createdAt: r.createdAt,
      ...(r.key !== undefined ? { key: Buffer.from(r.key).toString('base64') } : {}),
      ...(r.destroyedAt !== undefined ? { destroyedAt: r.destroyedAt } : {}),
    }));
    const temp = `${this.file}.${process.pid}.${this.#counter++}.tmp`;
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify({ format: FORMAT, version: 1, keys })}\n`, 'utf8');
      if (this.#opts.fsync ?? true) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.file);
    if (this.#opts.fsync ?? true) {
      const dir = await open(dirname(this.file), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
  }
}
