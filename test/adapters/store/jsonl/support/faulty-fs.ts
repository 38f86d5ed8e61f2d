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
  readonly log: OpKind[] = [];

  arm(k: number, breakRollback = false): void {
    this.count = 0;
    this.armed = k;
    this.fired = undefined;
    this.breakRollback = breakRollback;
    this.log.length = 0;
  }

  disarm(): void {
    this.armed = undefined;
    this.breakRollback = false;
    this.count = 0;
    this.log.length = 0;
  }

  #check(kind: OpKind): void {
    this.log.push(kind);
    const n = this.count++;
    if (this.armed !== undefined && n === this.armed) {
      this.fired = kind;
      throw Object.assign(new Error(`injected EIO on ${kind} (call #${n})`), { code: 'EIO' });
    }
    if (this.fired !== undefined && this.breakRollback && (kind === 'truncate' || kind === 'unlink')) {
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
