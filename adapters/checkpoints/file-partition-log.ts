import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileSynced } from './write-file.js';

/** A parked event as a partition log keeps it. */
export interface ParkedLine {
  readonly position: string;
  readonly stream: string;
  readonly revision: string;
  readonly error: string;
  readonly at: number;
}

/** One entry of a partition's log: a take of the lease, a release, a commit, or a snapshot replacing what precedes it. */
export type LogEntry =
  | { readonly kind: 'take'; readonly owner: string; readonly epoch: number; readonly expiresAt: number; readonly at: number }
  | { readonly kind: 'release'; readonly epoch: number; readonly at: number }
  | {
      readonly kind: 'commit';
      readonly epoch: number;
      readonly position: string;
      readonly applied: number;
      readonly at: number;
      readonly docs?: Record<string, unknown>;
      readonly parked?: readonly ParkedLine[];
      readonly unparked?: readonly string[];
    }
  | {
      readonly kind: 'snapshot';
      readonly owner: string | null;
      readonly epoch: number;
      readonly expiresAt: number;
      readonly position: string | null;
      readonly applied: string;
      readonly committedAt: number | null;
      readonly docs: Record<string, unknown>;
      readonly parked: readonly ParkedLine[];
      readonly at: number;
    };

/** A partition as its log says, folded. */
export interface PartitionState {
  /** The lease's holder (null: never taken, or released). */
  owner: string | null;
  epoch: number;
  /** When the lease runs out (the take's expiry, or a later renewal's), ms since the epoch. */
  expiresAt: number;
  position: bigint | null;
  applied: bigint;
  committedAt: number | null;
  /** Keyed documents, JSON text by key. */
  docs: Map<string, string>;
  parked: Map<string, ParkedLine>;
  /** The last entry folded (0: none). */
  seq: number;
}

const emptyState = (): PartitionState => ({
  owner: null,
  epoch: 0,
  expiresAt: 0,
  position: null,
  applied: 0n,
  committedAt: null,
  docs: new Map(),
  parked: new Map(),
  seq: 0,
});

const ENTRY = /^e(\d{12})\.json$/;
const MARK = /^snap-(\d{12})$/;
const RENEW = /^renew-(\d+)\.json$/;
const TEMP = /^tmp-(\d+)-/;
const pad = (seq: number): string => String(seq).padStart(12, '0');

/** Folds one entry into the state (entries are facts: each was checked against everything before it when written). */
const fold = (state: PartitionState, entry: LogEntry, seq: number): void => {
  state.seq = seq;
  switch (entry.kind) {
    case 'take':
      state.owner = entry.owner;
      state.epoch = entry.epoch;
      state.expiresAt = entry.expiresAt;
      return;
    case 'release':
      if (entry.epoch === state.epoch) {
        state.owner = null;
        state.expiresAt = 0;
      }
      return;
    case 'commit':
      // written only by the lease's holder of that epoch; anything else is not a commit
      if (entry.epoch !== state.epoch || state.owner === null) return;
      state.position = BigInt(entry.position);
      state.applied += BigInt(entry.applied);
      state.committedAt = entry.at;
      for (const [k, v] of Object.entries(entry.docs ?? {})) {
        if (v === null) state.docs.delete(k);
        else state.docs.set(k, JSON.stringify(v));
      }
      for (const p of entry.parked ?? []) state.parked.set(p.position, p);
      for (const u of entry.unparked ?? []) state.parked.delete(u);
      return;
    case 'snapshot':
      state.owner = entry.owner;
      state.epoch = entry.epoch;
      state.expiresAt = entry.expiresAt;
      state.position = entry.position === null ? null : BigInt(entry.position);
      state.applied = BigInt(entry.applied);
      state.committedAt = entry.committedAt;
      state.docs = new Map(Object.entries(entry.docs).map(([k, v]) => [k, JSON.stringify(v)]));
      state.parked = new Map(entry.parked.map((p) => [p.position, p]));
      return;
  }
};

/** Thrown by {@link PartitionLog.append} when its entry could not be placed after many tries (a log changing nonstop). */
export class PartitionLogContendedError extends Error {
  readonly code = 'projection-log-contended';
  constructor(dir: string) {
    super(`${dir}: the partition's log kept changing under 100 attempts to append to it`);
  }
}

/**
 * One partition's log in a directory, without any lock: each entry is a file `e<seq>.json`, created complete with an
 * atomic no-overwrite `link` at the next sequence number, so exactly one writer places a given entry, and a writer
 * whose view of the log is stale (it was paused, or it lost a race) fails to link and reads again — where its checks
 * (the lease's owner and epoch, the checkpoint only moving forward) refuse what it meant to write. Nothing a paused
 * process writes later can land behind a newer entry. Every `compactEvery` entries, a snapshot entry replaces those
 * before it: the marker `snap-<seq>` is created once the snapshot is linked, then the older entries are deleted; an
 * entry re-created under a deleted number (a very stale writer) lies below the marker, is not read, and its writer
 * sees the marker and reads again. Lease renewals are `renew-<epoch>.json` (replaced atomically; only the renewal of
 * the current epoch counts), so renewing adds no entries.
 */
export class PartitionLog {
  readonly #dir: string;
  readonly #fsync: boolean;
  #cache: PartitionState | null = null;
  /** Reads of this log in this process run one after another (they fold into the shared cache). */
  #reading: Promise<unknown> = Promise.resolve();

  constructor(dir: string, fsync: boolean) {
    this.#dir = dir;
    this.#fsync = fsync;
  }

  /** The log's directory. */
  get dir(): string {
    return this.#dir;
  }

  async #names(): Promise<string[]> {
    try {
      return await readdir(this.#dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  async #entry(seq: number): Promise<LogEntry | null> {
    let text: string;
    try {
      text = await readFile(join(this.#dir, `e${pad(seq)}.json`), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null; // compacted meanwhile
      throw e;
    }
    try {
      return JSON.parse(text) as LogEntry;
    } catch (e) {
      // an entry is linked complete (written and synced under a temporary name first): a damaged one is damage
      throw new Error(`${join(this.#dir, `e${pad(seq)}.json`)}: not a log entry (${(e as Error).message})`);
    }
  }

  /**
   * The partition, folded from its last snapshot (entries already folded are kept between calls: entries never
   * change once linked). The result is shared with later calls: read it, do not change it.
   */
  read(): Promise<PartitionState> {
    const run = this.#reading.then(() => this.#read());
    this.#reading = run.catch(() => undefined);
    return run;
  }

  async #read(): Promise<PartitionState> {
    for (let attempt = 0; ; attempt++) {
      const names = await this.#names();
      let mark = 0;
      const seqs: number[] = [];
      const renewals = new Map<number, string>();
      for (const name of names) {
        const e = ENTRY.exec(name);
        if (e) seqs.push(Number(e[1]));
        const m = MARK.exec(name);
        if (m) mark = Math.max(mark, Number(m[1]));
        const r = RENEW.exec(name);
        if (r) renewals.set(Number(r[1]), name);
      }
      seqs.sort((a, b) => a - b);
      let state = this.#cache ?? emptyState();
      // entries from the last mark on are never deleted: the last one folded missing means the log was dropped
      if (state.seq > 0 && state.seq >= mark && !seqs.includes(state.seq)) state = emptyState();
      // from the snapshot marked last when the state is older than it (the snapshot replaces everything before it)
      const base = state.seq >= mark ? state.seq + 1 : mark;
      const next = seqs.filter((s) => s >= base);
      let ok = true;
      for (let i = 0; i < next.length && ok; i++) {
        const entry = next[i] === base + i ? await this.#entry(next[i]!) : null;
        if (entry === null) ok = false; // a gap: compacted while we listed
        else fold(state, entry, next[i]!);
      }
      if (!ok) {
        this.#cache = null;
        if (attempt >= 100) throw new PartitionLogContendedError(this.#dir);
        continue;
      }
      this.#cache = state;
      const renewal = renewals.get(state.epoch);
      if (renewal !== undefined && state.owner !== null) {
        const until = await readJsonQuietly<{ expiresAt: number }>(join(this.#dir, renewal));
        if (until && until.expiresAt > state.expiresAt) return { ...state, expiresAt: until.expiresAt };
      }
      return state;
    }
  }

  async #writeTemp(value: unknown): Promise<string> {
    await mkdir(this.#dir, { recursive: true });
    const temp = join(this.#dir, `tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
    await writeFileSynced(temp, `${JSON.stringify(value)}\n`, this.#fsync);
    return temp;
  }

  async #syncDir(): Promise<void> {
    if (!this.#fsync) return;
    const handle = await open(this.#dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /**
   * Appends the entry `decide` makes from the current state (null: nothing to write); `decide` may throw to refuse.
   * Tried again from a fresh read when another entry took the number. Resolves to the number the entry was written
   * at (null: `decide` wrote nothing). `decide` must not keep the state: later reads change it.
   */
  async append(decide: (state: PartitionState) => LogEntry | null): Promise<{ readonly seq: number | null }> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const state = await this.read();
      const entry = decide(state);
      if (entry === null) return { seq: null };
      const seq = state.seq + 1;
      const temp = await this.#writeTemp(entry);
      const name = join(this.#dir, `e${pad(seq)}.json`);
      try {
        await link(temp, name);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue; // another entry took the number: read again
        throw e;
      } finally {
        await unlink(temp).catch(() => undefined);
      }
      if ((await this.#names()).some((n) => Number(MARK.exec(n)?.[1] ?? -1) > seq)) {
        // a number compacted away long ago: not part of the log; read again
        await unlink(name).catch(() => undefined);
        this.#cache = null;
        continue;
      }
      await this.#syncDir();
      return { seq };
    }
    throw new PartitionLogContendedError(this.#dir);
  }

  /** Extends the lease of `epoch` (counts only while `epoch` is the current one). */
  async renew(epoch: number, expiresAt: number): Promise<void> {
    const temp = await this.#writeTemp({ expiresAt });
    await rename(temp, join(this.#dir, `renew-${epoch}.json`));
  }

  /**
   * When `everyEntries` or more entries follow the last snapshot, appends a snapshot of the current state (only if
   * `owner` still holds the lease under `epoch`), marks it and deletes what it replaces.
   */
  async compact(owner: string, epoch: number, everyEntries: number, now: number): Promise<void> {
    const names = await this.#names();
    let mark = 0;
    for (const n of names) mark = Math.max(mark, Number(MARK.exec(n)?.[1] ?? 0));
    const count = names.filter((n) => Number(ENTRY.exec(n)?.[1] ?? -1) >= mark).length;
    if (count < everyEntries) return;
    const { seq } = await this.append((s) =>
      s.owner !== owner || s.epoch !== epoch
        ? null
        : {
            kind: 'snapshot',
            owner: s.owner,
            epoch: s.epoch,
            expiresAt: s.expiresAt,
            position: s.position === null ? null : s.position.toString(),
            applied: s.applied.toString(),
            committedAt: s.committedAt,
            docs: Object.fromEntries([...s.docs].map(([k, v]) => [k, JSON.parse(v) as unknown])),
            parked: [...s.parked.values()],
            at: now,
          },
    );
    if (seq === null) return;
    const markHandle = await open(join(this.#dir, `snap-${pad(seq)}`), 'a');
    await markHandle.close();
    await this.#syncDir();
    for (const n of await this.#names()) {
      const e = ENTRY.exec(n);
      const m = MARK.exec(n);
      const r = RENEW.exec(n);
      const t = TEMP.exec(n);
      const orphan = t !== null && Number(t[1]) !== process.pid && !isAlive(Number(t[1])); // left by a killed writer
      if ((e && Number(e[1]) < seq) || (m && Number(m[1]) < seq) || (r && Number(r[1]) < epoch) || orphan) await unlink(join(this.#dir, n)).catch(() => undefined);
    }
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
};

const readJsonQuietly = async <T>(path: string): Promise<T | null> => {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
};
