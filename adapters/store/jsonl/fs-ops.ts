import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';

/**
 * The few file-system calls the JSONL store makes, behind an interface so tests can inject failures
 * (a failing write, fsync or truncate at any point of a batch). Every call may reject; the store rolls back.
 */
export interface FileOps {
  /** Reads up to `length` bytes at `position` into `buffer[offset..]`; resolves the count read (0 at EOF). */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Writes the whole buffer at `position` (looping over short writes). */
  write(buffer: Buffer, position: number): Promise<void>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

export type OpenMode =
  /** Read only; the file must exist. */
  | 'read'
  /** Read and write; the file must exist. */
  | 'update'
  /** Create a new file for writing; fails with EEXIST if it exists. */
  | 'create';

/**
 * The file-system seam of the JSONL store: every call that reads or changes the store's files goes through it
 * (the directory lock excepted). Tests wrap it to fail any call (test/adapters/store/jsonl/support/faulty-fs.ts)
 * or to track what each fsync made durable and simulate a power loss (support/power-fs.ts).
 */
export interface FsOps {
  open(path: string, mode: OpenMode): Promise<FileOps>;
  /** fsync a directory, so that a file created in it survives a power loss. */
  syncDir(path: string): Promise<void>;
  /** Hard-links `existing` to `target`; fails with EEXIST if `target` exists (a no-overwrite publish). */
  link(existing: string, target: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  /** Size in bytes, or undefined when the file does not exist. */
  sizeOf(path: string): Promise<number | undefined>;
}

const FLAGS: Record<OpenMode, number> = {
  read: constants.O_RDONLY,
  update: constants.O_RDWR,
  create: constants.O_RDWR | constants.O_CREAT | constants.O_EXCL,
};

const wrap = (handle: fsp.FileHandle): FileOps => ({
  async read(buffer, offset, length, position) {
    const { bytesRead } = await handle.read(buffer, offset, length, position);
    return bytesRead;
  },
  async write(buffer, position) {
    let done = 0;
    while (done < buffer.length) {
      const { bytesWritten } = await handle.write(buffer, done, buffer.length - done, position + done);
      if (bytesWritten <= 0) throw new Error('short write');
      done += bytesWritten;
    }
  },
  sync: () => handle.sync(),
  truncate: (length) => handle.truncate(length),
  size: async () => (await handle.stat()).size,
  close: () => handle.close(),
});

export const isErrnoCode = (e: unknown, code: string): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/** The real file system (node:fs/promises). */
export const nodeFsOps: FsOps = {
  open: async (path, mode) => wrap(await fsp.open(path, FLAGS[mode], 0o644)),
  async syncDir(path) {
    const handle = await fsp.open(path, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  link: (existing, target) => fsp.link(existing, target),
  unlink: (path) => fsp.unlink(path),
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  readdir: (path) => fsp.readdir(path),
  async sizeOf(path) {
    try {
      return (await fsp.stat(path)).size;
    } catch (e) {
      if (isErrnoCode(e, 'ENOENT')) return undefined;
      throw e;
    }
  },
};
