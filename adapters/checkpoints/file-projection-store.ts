import { mkdir, open, readdir, readFile, rename, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ProjectionFencedError,
  ProjectionPartitionsMismatchError,
  type ParkedEvent,
  type ParkedRecord,
  type PartitionCommit,
  type PartitionKey,
  type PartitionSnapshot,
  type PartitionStatus,
  type ProjectionLease,
  type ProjectionStore,
} from '../../projections/index.js';
import { DirectoryLock } from '../store/jsonl/dir-lock.js';

/** Options of {@link FileProjectionStore}. */
export interface FileProjectionStoreOptions {
  /** fsync each commit's journal line (and each lease file) before it counts. Turn off only for tests. @defaultValue true */
  readonly fsync?: boolean;
  /** The clock of lease expiry (ms since the epoch). @defaultValue Date.now */
  readonly now?: () => number;
  /** Rewrite a partition's journal as one snapshot line once it is this many bytes and 4× its live size. @defaultValue 4 MiB */
  readonly compactBytes?: number;
}

interface LeaseFile {
  readonly owner: string | null;
  readonly epoch: number;
  readonly expiresAt: number;
}

interface JournalLine {
  readonly epoch: number;
  readonly position: string;
  readonly applied: number;
  readonly at: number;
  readonly docs?: Record<string, unknown>;
  readonly parked?: { position: string; stream: string; revision: string; error: string; at: number }[];
  readonly unparked?: string[];
  /** A compacted journal's first line: the whole state, replacing everything before it. */
  readonly snapshot?: true;
}

interface Folded {
  position: bigint | null;
  epoch: number;
  applied: bigint;
  committedAt: number | null;
  docs: Map<string, string>;
  parked: Map<string, { position: string; stream: string; revision: string; error: string; at: number }>;
  /** Bytes of the journal's complete lines (a torn last line is cut at the next commit). */
  validBytes: number;
  totalBytes: number;
}

const versionDir = (name: string, version: number): string => `${encodeURIComponent(name)}@${version}`;

/**
 * Projection leases, checkpoints, keyed documents and parked events in a directory, for the JSONL store (one
 * machine). Every lease change and every commit runs under a cross-process mutex of the directory (the JSONL
 * store's generation lock, `<dir>/locks`), which checks the partition's lease epoch first: a stale worker's commit
 * is refused with `ProjectionFencedError` and nothing of it is written.
 *
 * Layout: `<dir>/<name>@<version>/meta.json` (partition count), `p<k>.lease.json` (owner, epoch, expiry; replaced
 * atomically), `p<k>.journal` (one JSON line per commit: epoch, position, the documents that changed, parked and
 * replayed events; appended and fsynced, so a commit costs the changed documents only; a torn last line is not a
 * commit and is cut), `workers.json` (the live workers' heartbeats). A journal grown past `compactBytes` and 4× its
 * live size is rewritten as one snapshot line (temporary file, fsync, rename).
 */
export class FileProjectionStore implements ProjectionStore<never> {
  readonly supportsTables = false;
  /** The `db.system.name` of its operations (telemetry). */
  readonly dbSystem = 'steerlog.file';
  readonly #dir: string;
  readonly #fsync: boolean;
  readonly #now: () => number;
  readonly #compactBytes: number;
  #lock: DirectoryLock | null = null;
  #mutex: Promise<void> = Promise.resolve();

  constructor(directory: string, options: FileProjectionStoreOptions = {}) {
    this.#dir = directory;
    this.#fsync = options.fsync ?? true;
    this.#now = options.now ?? Date.now;
    this.#compactBytes = options.compactBytes ?? 4 * 1024 * 1024;
  }

  /** The directory it keeps everything in. */
  get directory(): string {
    return this.#dir;
  }

  /** Runs `work` holding the directory's cross-process mutex (and this instance's, so calls never overlap). */
  async #locked<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#mutex.then(async () => {
      if (!this.#lock) {
        await mkdir(this.#dir, { recursive: true });
        this.#lock = new DirectoryLock(this.#dir);
      }
      await this.#lock.acquire();
      try {
        return await work();
      } finally {
        this.#lock.release();
      }
    });
    this.#mutex = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  #path(name: string, version: number, file: string): string {
    return join(this.#dir, versionDir(name, version), file);
  }

  async #readJson<T>(path: string): Promise<T | null> {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async #writeJson(path: string, value: unknown): Promise<void> {
    const temp = `${path}.${process.pid}.tmp`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(value)}\n`, 'utf8');
      if (this.#fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  }

  async acquire(key: PartitionKey, owner: string, leaseMs: number): Promise<ProjectionLease | null> {
    return this.#locked(async () => {
      await mkdir(join(this.#dir, versionDir(key.name, key.version)), { recursive: true });
      const metaPath = this.#path(key.name, key.version, 'meta.json');
      const meta = await this.#readJson<{ partitions: number }>(metaPath);
      if (meta && meta.partitions !== key.partitions) throw new ProjectionPartitionsMismatchError(key.name, key.version, meta.partitions, key.partitions);
      if (!meta) await this.#writeJson(metaPath, { partitions: key.partitions });
      const path = this.#path(key.name, key.version, `p${key.partition}.lease.json`);
      const lease = await this.#readJson<LeaseFile>(path);
      const now = this.#now();
      if (lease && lease.owner !== null && lease.owner !== owner && lease.expiresAt >= now) return null;
      const epoch = lease === null ? 1 : lease.owner === owner ? lease.epoch : lease.epoch + 1;
      await this.#writeJson(path, { owner, epoch, expiresAt: now + leaseMs } satisfies LeaseFile);
      return { key, owner, epoch };
    });
  }

  async #holds(lease: ProjectionLease): Promise<LeaseFile | null> {
    const current = await this.#readJson<LeaseFile>(this.#path(lease.key.name, lease.key.version, `p${lease.key.partition}.lease.json`));
    return current && current.owner === lease.owner && current.epoch === lease.epoch ? current : null;
  }

  async renew(lease: ProjectionLease, leaseMs: number): Promise<boolean> {
    return this.#locked(async () => {
      if (!(await this.#holds(lease))) return false;
      await this.#writeJson(this.#path(lease.key.name, lease.key.version, `p${lease.key.partition}.lease.json`), {
        owner: lease.owner,
        epoch: lease.epoch,
        expiresAt: this.#now() + leaseMs,
      } satisfies LeaseFile);
      return true;
    });
  }

  async release(lease: ProjectionLease): Promise<void> {
    await this.#locked(async () => {
      if (!(await this.#holds(lease))) return;
      await this.#writeJson(this.#path(lease.key.name, lease.key.version, `p${lease.key.partition}.lease.json`), {
        owner: null,
        epoch: lease.epoch,
        expiresAt: 0,
      } satisfies LeaseFile);
    });
  }

  async #fold(name: string, version: number, partition: number): Promise<Folded> {
    const folded: Folded = { position: null, epoch: 0, applied: 0n, committedAt: null, docs: new Map(), parked: new Map(), validBytes: 0, totalBytes: 0 };
    let text: string;
    try {
      text = await readFile(this.#path(name, version, `p${partition}.journal`), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return folded;
      throw e;
    }
    folded.totalBytes = Buffer.byteLength(text);
    const lines = text.split('\n'); // the last element is what follows the last newline: a torn line, or ''
    for (let i = 0; i < lines.length - 1; i++) {
      const line = lines[i]!;
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        break; // a damaged line: not a commit, and nothing after it is either
      }
      if (entry.snapshot) {
        folded.docs.clear();
        folded.parked.clear();
        folded.applied = 0n;
      }
      folded.position = BigInt(entry.position);
      folded.epoch = entry.epoch;
      folded.applied += BigInt(entry.applied);
      folded.committedAt = entry.at;
      for (const [k, v] of Object.entries(entry.docs ?? {})) {
        if (v === null) folded.docs.delete(k);
        else folded.docs.set(k, JSON.stringify(v));
      }
      for (const p of entry.parked ?? []) folded.parked.set(p.position, p);
      for (const u of entry.unparked ?? []) folded.parked.delete(u);
      folded.validBytes += Buffer.byteLength(line) + 1;
    }
    return folded;
  }

  async load(lease: ProjectionLease): Promise<PartitionSnapshot> {
    const folded = await this.#fold(lease.key.name, lease.key.version, lease.key.partition);
    return { position: folded.position, documents: folded.docs };
  }

  async commit(lease: ProjectionLease, commit: PartitionCommit<never>): Promise<void> {
    const { key } = lease;
    await this.#locked(async () => {
      const held = await this.#readJson<LeaseFile>(this.#path(key.name, key.version, `p${key.partition}.lease.json`));
      if (!held || held.owner !== lease.owner || held.epoch !== lease.epoch) {
        throw new ProjectionFencedError(key.name, key.version, key.partition, lease.epoch, held ? `the lease is at epoch ${held.epoch}, held by ${held.owner ?? 'nobody'}` : 'no lease');
      }
      if (commit.write) throw new TypeError('a file projection store holds no tables');
      const folded = await this.#fold(key.name, key.version, key.partition);
      if (folded.epoch > lease.epoch) throw new ProjectionFencedError(key.name, key.version, key.partition, lease.epoch, `a commit of epoch ${folded.epoch} is stored`);
      if (folded.position !== null && commit.position < folded.position) {
        throw new ProjectionFencedError(key.name, key.version, key.partition, lease.epoch, `it would move the checkpoint from ${folded.position} back to ${commit.position}`);
      }
      const at = this.#now();
      const docs: Record<string, unknown> = {};
      for (const [k, text] of commit.documents) docs[k] = text === null ? null : (JSON.parse(text) as unknown);
      const entry: JournalLine = {
        epoch: lease.epoch,
        position: commit.position.toString(),
        applied: commit.applied,
        at,
        ...(commit.documents.size > 0 ? { docs } : {}),
        ...(commit.parked.length > 0 ? { parked: commit.parked.map((p) => parkedLine(p, at)) } : {}),
        ...(commit.unparked && commit.unparked.length > 0 ? { unparked: commit.unparked.map(String) } : {}),
      };
      const path = this.#path(key.name, key.version, `p${key.partition}.journal`);
      if (folded.validBytes < folded.totalBytes) await truncate(path, folded.validBytes);
      const line = `${JSON.stringify(entry)}\n`;
      const handle = await open(path, 'a');
      try {
        await handle.writeFile(line, 'utf8');
        if (this.#fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      const size = folded.validBytes + Buffer.byteLength(line);
      if (size >= this.#compactBytes) await this.#compact(lease, path, size);
    });
  }

  async #compact(lease: ProjectionLease, path: string, size: number): Promise<void> {
    const folded = await this.#fold(lease.key.name, lease.key.version, lease.key.partition);
    const docs: Record<string, unknown> = {};
    for (const [k, text] of folded.docs) docs[k] = JSON.parse(text) as unknown;
    const line = `${JSON.stringify({
      snapshot: true,
      epoch: folded.epoch,
      position: String(folded.position ?? 0n),
      applied: Number(folded.applied),
      at: folded.committedAt ?? this.#now(),
      docs,
      parked: [...folded.parked.values()],
    } satisfies JournalLine)}\n`;
    if (Buffer.byteLength(line) * 4 > size) return; // mostly live documents: rewriting would not pay
    const temp = `${path}.compact`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(line, 'utf8');
      if (this.#fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  }

  async migrate(name: string): Promise<Readonly<Record<string, string>>> {
    throw new TypeError(`projection "${name}": a file projection store holds no tables (use a PostgreSQL projection store)`);
  }

  async heartbeat(name: string, version: number, owner: string, leaseMs: number): Promise<readonly string[]> {
    return this.#locked(async () => {
      await mkdir(join(this.#dir, versionDir(name, version)), { recursive: true });
      const path = this.#path(name, version, 'workers.json');
      const now = this.#now();
      const workers = (await this.#readJson<Record<string, number>>(path)) ?? {};
      workers[owner] = now + leaseMs;
      for (const [w, until] of Object.entries(workers)) if (until < now) delete workers[w];
      await this.#writeJson(path, workers);
      return Object.keys(workers).sort();
    });
  }

  async leave(name: string, version: number, owner: string): Promise<void> {
    await this.#locked(async () => {
      const path = this.#path(name, version, 'workers.json');
      const workers = await this.#readJson<Record<string, number>>(path);
      if (!workers || !(owner in workers)) return;
      delete workers[owner];
      await this.#writeJson(path, workers);
    });
  }

  async #versions(name?: string): Promise<{ name: string; version: number; partitions: number }[]> {
    let entries: string[];
    try {
      entries = await readdir(this.#dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: { name: string; version: number; partitions: number }[] = [];
    for (const entry of entries) {
      const m = /^(.+)@(\d+)$/.exec(entry);
      if (!m) continue;
      const n = decodeURIComponent(m[1]!);
      if (name !== undefined && n !== name) continue;
      const meta = await this.#readJson<{ partitions: number }>(join(this.#dir, entry, 'meta.json'));
      if (meta) out.push({ name: n, version: Number(m[2]), partitions: meta.partitions });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.version - b.version));
  }

  async status(name?: string): Promise<readonly PartitionStatus[]> {
    const out: PartitionStatus[] = [];
    const now = this.#now();
    for (const v of await this.#versions(name)) {
      for (let partition = 0; partition < v.partitions; partition++) {
        const lease = await this.#readJson<LeaseFile>(this.#path(v.name, v.version, `p${partition}.lease.json`));
        const folded = await this.#fold(v.name, v.version, partition);
        const live = lease !== null && lease.owner !== null && lease.expiresAt >= now;
        out.push({
          key: { name: v.name, version: v.version, partition, partitions: v.partitions },
          owner: live ? lease.owner : null,
          epoch: lease?.epoch ?? 0,
          leaseExpiresAt: live ? new Date(lease.expiresAt) : null,
          position: folded.position,
          committedAt: folded.committedAt === null ? null : new Date(folded.committedAt),
          applied: folded.applied,
          parked: folded.parked.size,
        });
      }
    }
    return out;
  }

  async parked(name: string, version: number): Promise<readonly ParkedRecord[]> {
    const out: ParkedRecord[] = [];
    for (const v of await this.#versions(name)) {
      if (v.version !== version) continue;
      for (let partition = 0; partition < v.partitions; partition++) {
        for (const p of (await this.#fold(name, version, partition)).parked.values()) {
          out.push({ partition, position: BigInt(p.position), stream: p.stream, revision: BigInt(p.revision), error: p.error, parkedAt: new Date(p.at) });
        }
      }
    }
    return out.sort((a, b) => (a.position < b.position ? -1 : 1));
  }

  async drop(name: string, version: number): Promise<void> {
    await this.#locked(async () => {
      await rm(join(this.#dir, versionDir(name, version)), { recursive: true, force: true });
      const live = (await this.#readJson<Record<string, number>>(join(this.#dir, 'live.json'))) ?? {};
      if (live[name] === version) {
        delete live[name];
        await this.#writeJson(join(this.#dir, 'live.json'), live);
      }
    });
  }

  /** Read from `<dir>/live.json` (projection name → live version). */
  async liveVersion(name: string): Promise<number | null> {
    const live = await this.#readJson<Record<string, number>>(join(this.#dir, 'live.json'));
    return live !== null && Object.hasOwn(live, name) ? live[name]! : null;
  }

  /** Written to `<dir>/live.json`, replaced atomically. */
  async swap(name: string, version: number): Promise<void> {
    await this.#locked(async () => {
      const live = (await this.#readJson<Record<string, number>>(join(this.#dir, 'live.json'))) ?? {};
      live[name] = version;
      await this.#writeJson(join(this.#dir, 'live.json'), live);
    });
  }

  async close(): Promise<void> {
    await this.#mutex;
  }
}

const parkedLine = (p: ParkedEvent, at: number): { position: string; stream: string; revision: string; error: string; at: number } => ({
  position: p.position.toString(),
  stream: p.stream,
  revision: p.revision.toString(),
  error: p.error,
  at,
});
