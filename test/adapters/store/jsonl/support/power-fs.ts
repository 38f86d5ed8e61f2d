import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeFsOps, type FileOps, type FsOps } from '../../../../../adapters/store/jsonl/index.js';

/** One file's content as the store sees it, and as a power loss would leave it. */
interface Inode {
  current: Buffer;
  /** Content as of the last fsync. */
  durable: Buffer;
  /** Changes since the last fsync, in order. */
  pending: ({ kind: 'write'; at: number; bytes: Buffer } | { kind: 'truncate'; length: number })[];
}

const applyOp = (content: Buffer, op: Inode['pending'][number]): Buffer => {
  if (op.kind === 'truncate') return op.length <= content.length ? content.subarray(0, op.length) : Buffer.concat([content, Buffer.alloc(op.length - content.length)]);
  const end = op.at + op.bytes.length;
  const out = Buffer.alloc(Math.max(content.length, end));
  content.copy(out);
  op.bytes.copy(out, op.at);
  return out;
};

/**
 * The real file system under `root`, recording which bytes and directory entries were made durable: a file's
 * content is durable up to its last fsync, a name (created, linked or unlinked) once its directory was fsynced.
 * `cut()` makes every later mutating call fail (the machine "stops"); `powerLoss(random)` then rewrites `root`
 * as a power loss could leave it: each durable name gets its durable content plus a random prefix of the
 * writes that followed (the last one possibly torn), names that were never made durable disappear.
 * Model limits: each file's unsynced writes reach the disk in order (no holes); directories count as durable
 * once created; lock files (not written through FsOps) are left as they are.
 */
export class PowerFs implements FsOps {
  readonly #root: string;
  readonly #names = new Map<string, Inode>();
  readonly #durableNames = new Map<string, Inode>();
  #remaining = Number.POSITIVE_INFINITY;
  /** Mutating calls made so far. */
  calls = 0;

  constructor(root: string) {
    this.#root = root;
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (name === 'locks') continue;
        if (statSync(p).isDirectory()) walk(p);
        else {
          const content = readFileSync(p);
          const inode: Inode = { current: content, durable: content, pending: [] };
          this.#names.set(p, inode);
          this.#durableNames.set(p, inode);
        }
      }
    };
    walk(root);
  }

  /** After `n` more mutating calls, every mutating call fails with EIO. */
  cutAfter(n: number): void {
    this.#remaining = n;
  }

  #step(what: string): void {
    this.calls++;
    if (this.#remaining-- <= 0) throw Object.assign(new Error(`power cut before ${what}`), { code: 'EIO' });
  }

  #inodeOf(path: string): Inode {
    let inode = this.#names.get(path);
    if (!inode) {
      // A file created outside the store's FsOps: take it as it is, durable.
      const content = readFileSync(path);
      inode = { current: content, durable: content, pending: [] };
      this.#names.set(path, inode);
      this.#durableNames.set(path, inode);
    }
    return inode;
  }

  #wrap(file: FileOps, inode: Inode): FileOps {
    return {
      read: (b, o, l, p) => file.read(b, o, l, p),
      write: async (bytes, at) => {
        this.#step('write');
        await file.write(bytes, at);
        const op = { kind: 'write' as const, at, bytes: Buffer.from(bytes) };
        inode.pending.push(op);
        inode.current = applyOp(inode.current, op);
      },
      sync: async () => {
        this.#step('fsync');
        await file.sync();
        inode.durable = inode.current;
        inode.pending = [];
      },
      truncate: async (length) => {
        this.#step('truncate');
        await file.truncate(length);
        const op = { kind: 'truncate' as const, length };
        inode.pending.push(op);
        inode.current = applyOp(inode.current, op);
      },
      size: () => file.size(),
      close: () => file.close(),
    };
  }

  open: FsOps['open'] = async (path, mode) => {
    if (mode !== 'read') this.#step(`open ${mode}`);
    const file = await nodeFsOps.open(path, mode);
    if (mode === 'create') {
      const inode: Inode = { current: Buffer.alloc(0), durable: Buffer.alloc(0), pending: [] };
      this.#names.set(path, inode);
      return this.#wrap(file, inode);
    }
    return this.#wrap(file, this.#inodeOf(path));
  };
  syncDir: FsOps['syncDir'] = async (dir) => {
    this.#step('directory fsync');
    await nodeFsOps.syncDir(dir);
    for (const p of [...this.#durableNames.keys()]) if (dirname(p) === dir && !this.#names.has(p)) this.#durableNames.delete(p);
    for (const [p, inode] of this.#names) if (dirname(p) === dir) this.#durableNames.set(p, inode);
  };
  link: FsOps['link'] = async (existing, target) => {
    this.#step('link');
    await nodeFsOps.link(existing, target);
    this.#names.set(target, this.#inodeOf(existing));
  };
  unlink: FsOps['unlink'] = async (path) => {
    this.#step('unlink');
    await nodeFsOps.unlink(path);
    this.#names.delete(path);
  };
  mkdir: FsOps['mkdir'] = (path) => nodeFsOps.mkdir(path);
  readdir: FsOps['readdir'] = (path) => nodeFsOps.readdir(path);
  sizeOf: FsOps['sizeOf'] = (path) => nodeFsOps.sizeOf(path);

  /** Rewrites the directory as a power loss could leave it (see the class comment). */
  powerLoss(random: () => number): void {
    const seen = new Set<string>();
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (name === 'locks') continue;
        if (statSync(p).isDirectory()) walk(p);
        else seen.add(p);
      }
    };
    walk(this.#root);
    for (const p of seen) if (!this.#durableNames.has(p)) unlinkSync(p);
    const contents = new Map<Inode, Buffer>();
    for (const [p, inode] of this.#durableNames) {
      let content = contents.get(inode);
      if (!content) {
        content = inode.durable;
        const k = Math.floor(random() * (inode.pending.length + 1));
        for (let i = 0; i < k; i++) {
          const op = inode.pending[i]!;
          const torn = i === k - 1 && op.kind === 'write' && random() < 0.3 ? { ...op, bytes: op.bytes.subarray(0, Math.floor(random() * op.bytes.length)) } : op;
          content = applyOp(content, torn);
        }
        contents.set(inode, content);
      }
      writeFileSync(p, content);
    }
  }
}
