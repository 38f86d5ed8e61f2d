import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StoreIoError } from '../../../runtime/ports/store-errors.js';
import { isErrnoCode } from './fs-ops.js';

/**
 * A cross-process mutex on a store directory, without flock (Node has none).
 *
 * The lock is a sequence of generation files `locks/g<n>.lock`. The highest existing generation is the
 * current lock; it is free once its owner appended `released` or died (same host, pid gone or pid reused by a
 * younger process). To take it, a process creates generation n+1 with an atomic no-overwrite `link` of a
 * complete owner file: exactly one contender can create a given name, and "free" is permanent for a generation,
 * so no two owners overlap — even when several processes break the same stale lock at once. The owner then
 * deletes older generations; if it finds a higher generation than its own (it re-created a deleted one), it backs
 * off. The highest generation is never deleted, so numbers only grow.
 *
 * Owners on another host are never presumed dead: on a directory shared over NFS a crashed remote writer blocks
 * the others until its lock file is removed by hand (see docs/store-jsonl.md).
 */
const GENERATION = /^g(\d+)\.lock$/;
const RELEASED = Buffer.from('released\n');
/**
 * Owner tokens of this process whose generation was released but whose `released` line could not be written (a
 * full disk): free for this process's later opens; other processes see the generation held until this one exits.
 */
const RELEASED_UNWRITTEN = new Set<string>();
const HOST = hostname();

const startTimeOf = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Field 22 (starttime); the command name in field 2 may contain spaces, so count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
};
const OWN_START = startTimeOf(process.pid);

const isAlive = (pid: number, start: string | undefined): boolean => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (isErrnoCode(e, 'ESRCH')) return false;
  }
  if (start === undefined) return true;
  const current = startTimeOf(pid);
  return current === undefined || current === start;
};

interface Owner {
  readonly pid: number;
  readonly host: string;
  readonly start?: string;
  readonly token: string;
}

/** The synchronous file-system calls the lock makes (tests inject failures such as a full disk here). */
export type LockFs = Pick<typeof fs, 'mkdirSync' | 'readdirSync' | 'openSync' | 'writeSync' | 'ftruncateSync' | 'closeSync' | 'linkSync' | 'unlinkSync' | 'readFileSync'>;

export interface DirectoryLockOptions {
  /** Give up (StoreIoError) after waiting this long for a live owner. @defaultValue 30_000 */
  readonly timeoutMs?: number;
  /** @defaultValue node:fs */
  readonly fs?: LockFs;
}

export class DirectoryLock {
  readonly #dir: string;
  readonly #timeoutMs: number;
  readonly #fs: LockFs;
  #held: string | undefined;
  #heldGeneration = -1;
  #lastReleased = -1;
  #ownerFd: number | undefined;
  #token: string | undefined;
  #ownerPath: string | undefined;
  #ownerLine: Buffer | undefined;

  constructor(storeDir: string, options: DirectoryLockOptions = {}) {
    this.#dir = join(storeDir, 'locks');
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fs = options.fs ?? fs;
    // every failure of the lock's own files (a full disk, permissions) is a StoreIoError, never a raw errno
    try {
      this.#fs.mkdirSync(this.#dir, { recursive: true });
      // Owner files of crashed processes (their generations are already free): tidy up.
      for (const name of this.#fs.readdirSync(this.#dir)) {
        const m = /^owner-(\d+)-/.exec(name);
        if (m && !isAlive(Number(m[1]), undefined)) unlinkQuietly(this.#fs, join(this.#dir, name));
      }
    } catch (e) {
      throw new StoreIoError('lock', { cause: e });
    }
  }

  async acquire(): Promise<void> {
    if (this.#held !== undefined) throw new Error('DirectoryLock: already held by this instance');
    const deadline = Date.now() + this.#timeoutMs;
    try {
      const tmp = this.#ownerFile();
      for (let attempt = 0; ; attempt++) {
        const top = this.#highest();
        // Our own last generation, released by us: free without reading it.
        if (top !== undefined && top !== this.#lastReleased && !this.#isFree(top)) {
          if (Date.now() > deadline) throw new StoreIoError('lock', { cause: new Error(`${this.#dir}: held by another writer for ${this.#timeoutMs} ms`) });
          await sleep(Math.min(1 + attempt, 10));
          continue;
        }
        const mine = (top ?? -1) + 1;
        const name = this.#path(mine);
        try {
          this.#fs.linkSync(tmp, name);
        } catch (e) {
          if (isErrnoCode(e, 'EEXIST')) continue;
          throw e;
        }
        const generations = this.#generations();
        if (generations.some((g) => g > mine)) {
          // We re-created a generation that had been deleted: someone else owns a higher one.
          unlinkQuietly(this.#fs, name);
          continue;
        }
        for (const g of generations) if (g < mine) unlinkQuietly(this.#fs, this.#path(g));
        this.#held = name;
        this.#heldGeneration = mine;
        return;
      }
    } catch (e) {
      if (e instanceof StoreIoError) throw e;
      throw new StoreIoError('lock', { cause: e });
    }
  }

  /**
   * The owner file this instance links as each new generation: created once, then reset to "held" (cut back to
   * its owner line) before each attempt. Its older links are older generations, superseded and about to be deleted, so
   * their content no longer matters; the newest link is the one being created.
   */
  #ownerFile(): string {
    if (this.#ownerFd === undefined) {
      const owner: Owner = { pid: process.pid, host: HOST, ...(OWN_START ? { start: OWN_START } : {}), token: randomBytes(8).toString('hex') };
      this.#token = owner.token;
      this.#ownerPath = join(this.#dir, `owner-${process.pid}-${owner.token}`);
      this.#ownerLine = Buffer.from(`${JSON.stringify(owner)}\n`);
      this.#ownerFd = this.#fs.openSync(this.#ownerPath, 'w+');
      this.#fs.writeSync(this.#ownerFd, this.#ownerLine, 0, this.#ownerLine.length, 0);
    } else {
      // Drop the `released` line: one atomic truncate, so a reader never sees a partial owner line.
      this.#fs.ftruncateSync(this.#ownerFd, this.#ownerLine!.length);
    }
    return this.#ownerPath!;
  }

  /** Frees the owner file (the current generation keeps its own link). */
  dispose(): void {
    try {
      this.release();
    } finally {
      if (this.#ownerFd !== undefined) {
        const fd = this.#ownerFd;
        this.#ownerFd = undefined;
        try {
          this.#fs.closeSync(fd);
        } catch {
          // the descriptor is gone either way
        }
        unlinkQuietly(this.#fs, this.#ownerPath!);
      }
    }
  }

  /** Marks the held generation free. @throws StoreIoError when the owner file cannot be written (a full disk). */
  release(): void {
    if (this.#held === undefined) return;
    this.#held = undefined;
    this.#lastReleased = this.#heldGeneration;
    try {
      this.#fs.writeSync(this.#ownerFd!, RELEASED, 0, RELEASED.length, this.#ownerLine!.length);
    } catch (e) {
      RELEASED_UNWRITTEN.add(this.#token!);
      throw new StoreIoError('lock release', { cause: e });
    }
  }

  #path(generation: number): string {
    return join(this.#dir, `g${generation}.lock`);
  }

  #generations(): number[] {
    return this.#fs.readdirSync(this.#dir).flatMap((name) => {
      const m = GENERATION.exec(name);
      return m ? [Number(m[1])] : [];
    });
  }

  #highest(): number | undefined {
    const all = this.#generations();
    return all.length === 0 ? undefined : Math.max(...all);
  }

  #isFree(generation: number): boolean {
    let text: string;
    try {
      text = this.#fs.readFileSync(this.#path(generation), 'utf8');
    } catch (e) {
      if (isErrnoCode(e, 'ENOENT')) return false; // superseded meanwhile: look again
      throw e;
    }
    const [first, ...rest] = text.split('\n');
    if (rest.includes('released')) return true;
    let owner: Owner;
    try {
      owner = JSON.parse(first ?? '') as Owner;
    } catch {
      throw new Error(`unreadable lock file ${this.#path(generation)}`);
    }
    // One of our own past generations (same owner file, which we just reset): we do not hold it.
    if (owner.token === this.#token) return true;
    if (owner.host === HOST && owner.pid === process.pid && RELEASED_UNWRITTEN.has(owner.token)) return true;
    if (owner.host !== HOST) return false;
    return !isAlive(owner.pid, owner.start);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const unlinkQuietly = (ops: LockFs, path: string): void => {
  try {
    ops.unlinkSync(path);
  } catch {
    // already gone
  }
};
