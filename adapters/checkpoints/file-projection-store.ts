import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ProjectionFencedError,
  ProjectionPartitionsMismatchError,
  ProjectionStoreLayoutError,
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
import { PartitionLog, type LogEntry, type PartitionState } from './file-partition-log.js';
import { writeFileSynced } from './write-file.js';

/** Options of {@link FileProjectionStore}. */
export interface FileProjectionStoreOptions {
  /** fsync each log entry (and each lease renewal) before it counts. Turn off only for tests. @defaultValue true */
  readonly fsync?: boolean;
  /** The clock of lease expiry (ms since the epoch). @defaultValue Date.now */
  readonly now?: () => number;
  /** Replace a partition's log entries by one snapshot entry once this many follow the last snapshot. @defaultValue 64 */
  readonly compactEntries?: number;
}

const versionDir = (name: string, version: number): string => `${encodeURIComponent(name)}@${version}`;

/**
 * Projection leases, checkpoints, keyed documents and parked events in a directory, for the JSONL store (one machine),
 * with no lock held by workers: each partition is a log of entries (`PartitionLog`: a take of the lease, a commit, a
 * release, a snapshot), each entry a file created complete with an atomic no-overwrite `link` at the next number. A
 * writer checks the entries before the number it links — the lease's owner and epoch, the checkpoint moving only
 * forward — so a stale worker (paused, or whose lease was taken) cannot place a commit after a take: its link fails
 * and its next read refuses the commit with `ProjectionFencedError`. A worker frozen at any point (`SIGSTOP`) blocks
 * nobody: the others take its partitions once its leases run out.
 *
 * Layout: `<dir>/<name>@<version>/meta.json` (partition count, created once), `p<k>/e<seq>.json` (the log entries),
 * `p<k>/snap-<seq>` (the last snapshot's mark), `p<k>/renew-<epoch>.json` (the lease's latest expiry), `workers/<id>.json`
 * (each live worker's heartbeat, written by that worker only). `live.json` and dropping a version (admin commands,
 * not workers) run under the directory's cross-process lock (`<dir>/locks`).
 */
export class FileProjectionStore implements ProjectionStore<never> {
  readonly supportsTables = false;
  /** The `db.system.name` of its operations (telemetry). */
  readonly dbSystem = 'steerlog.file';
  readonly #dir: string;
  readonly #fsync: boolean;
  readonly #now: () => number;
  readonly #compactEntries: number;
  readonly #logs = new Map<string, PartitionLog>();
  /** Version directories already checked for files of the older layout. */
  readonly #layoutChecked = new Set<string>();
  #lock: DirectoryLock | null = null;
  #mutex: Promise<void> = Promise.resolve();

  constructor(directory: string, options: FileProjectionStoreOptions = {}) {
    this.#dir = directory;
    this.#fsync = options.fsync ?? true;
    this.#now = options.now ?? Date.now;
    this.#compactEntries = Math.max(2, options.compactEntries ?? 64);
  }

  /** The directory it keeps everything in. */
  get directory(): string {
    return this.#dir;
  }

  /** Runs `work` holding the directory's cross-process mutex (and this instance's): `swap` and `drop` only. */
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
    await writeFileSynced(temp, `${JSON.stringify(value)}\n`, this.#fsync);
    await rename(temp, path);
  }

  #log(name: string, version: number, partition: number): PartitionLog {
    const dir = this.#path(name, version, `p${partition}`);
    let log = this.#logs.get(dir);
    if (!log) this.#logs.set(dir, (log = new PartitionLog(dir, this.#fsync)));
    return log;
  }

  /** The version's partition count, created once (atomic no-overwrite link) and compared afterwards. */
  /**
   * Refuses a version directory that holds the older layout's files (`p<k>.journal`, `p<k>.lease.json`: one journal and
   * one lease file per partition), which this build would otherwise not see, so its checkpoints would silently restart.
   */
  async #checkLayout(key: PartitionKey): Promise<void> {
    const dir = join(this.#dir, versionDir(key.name, key.version));
    if (this.#layoutChecked.has(dir)) return;
    const names = await readdir(dir).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [] as string[];
      throw e;
    });
    const old = names.find((n) => /^p\d+\.(journal|lease\.json)$/.test(n));
    if (old !== undefined) throw new ProjectionStoreLayoutError(dir, old);
    this.#layoutChecked.add(dir);
  }

  async #meta(key: PartitionKey): Promise<void> {
    await this.#checkLayout(key);
    const path = this.#path(key.name, key.version, 'meta.json');
    let meta = await this.#readJson<{ partitions: number }>(path);
    if (!meta) {
      await mkdir(join(this.#dir, versionDir(key.name, key.version)), { recursive: true });
      const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFileSynced(temp, `${JSON.stringify({ partitions: key.partitions })}\n`, this.#fsync);
      await link(temp, path).catch((e: unknown) => {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      });
      await unlink(temp).catch(() => undefined);
      meta = await this.#readJson<{ partitions: number }>(path);
    }
    if (meta && meta.partitions !== key.partitions) throw new ProjectionPartitionsMismatchError(key.name, key.version, meta.partitions, key.partitions);
  }

  async acquire(key: PartitionKey, owner: string, leaseMs: number): Promise<ProjectionLease | null> {
    await this.#meta(key);
    const log = this.#log(key.name, key.version, key.partition);
    let epoch = 0;
    const { seq } = await log.append((s) => {
      const now = this.#now();
      if (s.owner !== null && s.owner !== owner && s.expiresAt >= now) return null; // held by another
      epoch = s.owner === owner ? s.epoch : s.epoch + 1;
      return { kind: 'take', owner, epoch, expiresAt: now + leaseMs, at: now };
    });
    if (seq === null) return null;
    return { key, owner, epoch };
  }

  async renew(lease: ProjectionLease, leaseMs: number): Promise<boolean> {
    const log = this.#log(lease.key.name, lease.key.version, lease.key.partition);
    if (!holds(await log.read(), lease)) return false;
    await log.renew(lease.epoch, this.#now() + leaseMs);
    // taken meanwhile? then the renewal (of an epoch that is not the current one) counts for nothing
    return holds(await log.read(), lease);
  }

  async release(lease: ProjectionLease): Promise<void> {
    await this.#log(lease.key.name, lease.key.version, lease.key.partition).append((s) =>
      holds(s, lease) ? { kind: 'release', epoch: lease.epoch, at: this.#now() } : null,
    );
  }

  async load(lease: ProjectionLease): Promise<PartitionSnapshot> {
    const state = await this.#log(lease.key.name, lease.key.version, lease.key.partition).read();
    return { position: state.position, documents: new Map(state.docs) };
  }

  async commit(lease: ProjectionLease, commit: PartitionCommit<never>): Promise<void> {
    const { key } = lease;
    if (commit.write) throw new TypeError('a file projection store holds no tables');
    const log = this.#log(key.name, key.version, key.partition);
    const at = this.#now();
    const docs: Record<string, unknown> = {};
    for (const [k, text] of commit.documents) docs[k] = text === null ? null : (JSON.parse(text) as unknown);
    const entry: LogEntry = {
      kind: 'commit',
      epoch: lease.epoch,
      position: commit.position.toString(),
      applied: commit.applied,
      at,
      ...(commit.documents.size > 0 ? { docs } : {}),
      ...(commit.parked.length > 0 ? { parked: commit.parked.map((p) => parkedLine(p, at)) } : {}),
      ...(commit.unparked && commit.unparked.length > 0 ? { unparked: commit.unparked.map(String) } : {}),
    };
    await log.append((s) => {
      if (!holds(s, lease)) {
        throw new ProjectionFencedError(key.name, key.version, key.partition, lease.epoch, s.epoch > 0 ? `the lease is at epoch ${s.epoch}, held by ${s.owner ?? 'nobody'}` : 'no lease');
      }
      if (s.position !== null && commit.position < s.position) {
        throw new ProjectionFencedError(key.name, key.version, key.partition, lease.epoch, `it would move the checkpoint from ${s.position} back to ${commit.position}`);
      }
      return entry;
    });
    await log.compact(lease.owner, lease.epoch, this.#compactEntries, this.#now());
  }

  async migrate(name: string): Promise<Readonly<Record<string, string>>> {
    throw new TypeError(`projection "${name}": a file projection store holds no tables (use a PostgreSQL projection store)`);
  }

  /** Each worker writes only its own heartbeat file (replaced atomically): no lock, nothing shared to rewrite. */
  async heartbeat(name: string, version: number, owner: string, leaseMs: number): Promise<readonly string[]> {
    const dir = this.#path(name, version, 'workers');
    await mkdir(dir, { recursive: true });
    const now = this.#now();
    await this.#writeJson(join(dir, `${encodeURIComponent(owner)}.json`), { expiresAt: now + leaseMs });
    const live: string[] = [];
    for (const file of await readdir(dir)) {
      if (!file.endsWith('.json')) continue;
      const beat = await this.#readJson<{ expiresAt: number }>(join(dir, file)).catch(() => null);
      if (beat && beat.expiresAt >= now) live.push(decodeURIComponent(file.slice(0, -'.json'.length)));
      // a worker gone for a minute (killed): its file goes
      else if (beat && beat.expiresAt < now - 60_000) await unlink(join(dir, file)).catch(() => undefined);
    }
    return live.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async leave(name: string, version: number, owner: string): Promise<void> {
    await unlink(join(this.#path(name, version, 'workers'), `${encodeURIComponent(owner)}.json`)).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
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
      await this.#checkLayout({ name: v.name, version: v.version, partition: 0, partitions: v.partitions });
      for (let partition = 0; partition < v.partitions; partition++) {
        const state = await this.#log(v.name, v.version, partition).read();
        const live = state.owner !== null && state.expiresAt >= now;
        out.push({
          key: { name: v.name, version: v.version, partition, partitions: v.partitions },
          owner: live ? state.owner : null,
          epoch: state.epoch,
          leaseExpiresAt: live ? new Date(state.expiresAt) : null,
          position: state.position,
          committedAt: state.committedAt === null ? null : new Date(state.committedAt),
          applied: state.applied,
          parked: state.parked.size,
        });
      }
    }
    return out;
  }

  async parked(name: string, version: number): Promise<readonly ParkedRecord[]> {
    const out: ParkedRecord[] = [];
    for (const v of await this.#versions(name)) {
      if (v.version !== version) continue;
      await this.#checkLayout({ name, version, partition: 0, partitions: v.partitions });
      for (let partition = 0; partition < v.partitions; partition++) {
        for (const p of (await this.#log(name, version, partition).read()).parked.values()) {
          out.push({ partition, position: BigInt(p.position), stream: p.stream, revision: BigInt(p.revision), error: p.error, parkedAt: new Date(p.at) });
        }
      }
    }
    return out.sort((a, b) => (a.position < b.position ? -1 : 1));
  }

  async drop(name: string, version: number): Promise<void> {
    await this.#locked(async () => {
      await rm(join(this.#dir, versionDir(name, version)), { recursive: true, force: true });
      for (const key of [...this.#logs.keys()]) if (key.startsWith(join(this.#dir, versionDir(name, version)))) this.#logs.delete(key);
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

const holds = (state: PartitionState, lease: ProjectionLease): boolean => state.owner === lease.owner && state.epoch === lease.epoch;

const parkedLine = (p: ParkedEvent, at: number): { position: string; stream: string; revision: string; error: string; at: number } => ({
  position: p.position.toString(),
  stream: p.stream,
  revision: p.revision.toString(),
  error: p.error,
  at,
});
