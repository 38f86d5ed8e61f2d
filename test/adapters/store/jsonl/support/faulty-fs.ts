import * as nodeFs from 'node:fs';
import type { LockFs } from '../../../../../adapters/store/jsonl/dir-lock.js';
import { nodeFsOps, type FileOps, type FsOps } from '../../../../../adapters/store/jsonl/index.js';

export type OpKind = 'open' | 'write' | 'sync' | 'truncate' | 'link' | 'unlink' | 'syncDir';

/**
 * The real file system with injectable failures: every mutating call (and every open) gets a sequence number;
 * `arm(k)` makes call number k fail with EIO. `breakRollback` then also fails every later truncate and unlink,
 * so the store cannot undo what it wrote.
 */
export class FaultyFs implements FsOps {
  count = 0;
  armed: number | undefined;
  fired: OpKind | undefined;
  breakRollback = false;
  /** With `breakRollback`: how many rollback calls still fail (Infinity: all of them). */
  #rollbackBreaks = Number.POSITIVE_INFINITY;
  /** `armKind`: fail the `n`th call (0-based) of this kind from now on. */
  #armedKind: { kind: OpKind; n: number } | undefined;
  readonly log: OpKind[] = [];
  /** How many injected failures have fired in total (rollback failures not counted). */
  firedCount = 0;

  /** Call number `k` from now fails; with `breakRollback`, the rollback calls after it fail too (all, or that many). */
  arm(k: number, breakRollback: boolean | number = false): void {
    this.count = 0;
    this.armed = k;
    this.fired = undefined;
    this.breakRollback = breakRollback !== false;
    this.#rollbackBreaks = typeof breakRollback === 'number' ? breakRollback : Number.POSITIVE_INFINITY;
    this.log.length = 0;
  }

  /** The `n`th call of `kind` from now fails (e.g. the second fsync); `breakRollback` as for `arm`. */
  armKind(kind: OpKind, n: number, breakRollback: boolean | number = false): void {
    this.arm(-1, breakRollback);
    this.armed = undefined;
    this.#armedKind = { kind, n };
  }

  disarm(): void {
    this.armed = undefined;
    this.#armedKind = undefined;
    this.breakRollback = false;
    this.count = 0;
    this.log.length = 0;
  }

  #check(kind: OpKind): void {
    this.log.push(kind);
    const n = this.count++;
    const byKind = this.#armedKind !== undefined && this.#armedKind.kind === kind && this.#armedKind.n-- === 0;
    if ((this.armed !== undefined && n === this.armed) || byKind) {
      if (byKind) this.#armedKind = undefined;
      this.fired = kind;
      this.firedCount++;
      throw Object.assign(new Error(`injected EIO on ${kind} (call #${n})`), { code: 'EIO' });
    }
    if (this.fired !== undefined && this.breakRollback && this.#rollbackBreaks > 0 && (kind === 'truncate' || kind === 'unlink')) {
      this.#rollbackBreaks--;
      throw Object.assign(new Error(`injected EIO on rollback ${kind}`), { code: 'EIO' });
    }
  }

  #wrap(file: FileOps): FileOps {
    return {
      read: (b, o, l, p) => file.read(b, o, l, p),
      write: async (b, p) => {
        this.#check('write');
        return file.write(b, p);
      },
      sync: async () => {
        this.#check('sync');
        return file.sync();
      },
      truncate: async (l) => {
        this.#check('truncate');
        return file.truncate(l);
      },
      size: () => file.size(),
      close: () => file.close(),
    };
  }

  open: FsOps['open'] = async (path, mode) => {
    this.#check('open');
    return this.#wrap(await nodeFsOps.open(path, mode));
  };
  syncDir: FsOps['syncDir'] = async (path) => {
    this.#check('syncDir');
    return nodeFsOps.syncDir(path);
  };
  link: FsOps['link'] = async (a, b) => {
    this.#check('link');
    return nodeFsOps.link(a, b);
  };
  unlink: FsOps['unlink'] = async (path) => {
    this.#check('unlink');
    return nodeFsOps.unlink(path);
  };
  mkdir: FsOps['mkdir'] = (path) => nodeFsOps.mkdir(path);
  readdir: FsOps['readdir'] = (path) => nodeFsOps.readdir(path);
  sizeOf: FsOps['sizeOf'] = (path) => nodeFsOps.sizeOf(path);
}

/** The directory lock's calls that can run out of space. */
export type LockOp = 'mkdirSync' | 'openSync' | 'writeSync' | 'linkSync';

/**
 * The directory lock's file system (node:fs) with a full disk at one point: call number `nth` (0-based) of `op`
 * fails with ENOSPC, as it does when the disk fills up. Counts every call, so a test can enumerate the points.
 */
export const fullDiskLockFs = (op: LockOp, nth: number): LockFs & { readonly calls: Record<LockOp, number> } => {
  const calls: Record<LockOp, number> = { mkdirSync: 0, openSync: 0, writeSync: 0, linkSync: 0 };
  const check = (name: LockOp): void => {
    if (name === op && calls[name] === nth) {
      calls[name]++;
      throw Object.assign(new Error(`ENOSPC: no space left on device, ${name}`), { code: 'ENOSPC', errno: -28 });
    }
    calls[name]++;
  };
  return {
    calls,
    mkdirSync: ((...a: Parameters<typeof nodeFs.mkdirSync>) => (check('mkdirSync'), nodeFs.mkdirSync(...a))) as typeof nodeFs.mkdirSync,
    openSync: ((...a: Parameters<typeof nodeFs.openSync>) => (check('openSync'), nodeFs.openSync(...a))) as typeof nodeFs.openSync,
    writeSync: ((...a: unknown[]) => (check('writeSync'), (nodeFs.writeSync as (...b: unknown[]) => number)(...a))) as typeof nodeFs.writeSync,
    linkSync: ((...a: Parameters<typeof nodeFs.linkSync>) => (check('linkSync'), nodeFs.linkSync(...a))) as typeof nodeFs.linkSync,
    readdirSync: nodeFs.readdirSync,
    ftruncateSync: nodeFs.ftruncateSync,
    closeSync: nodeFs.closeSync,
    unlinkSync: nodeFs.unlinkSync,
    readFileSync: nodeFs.readFileSync,
  };
};
