import { randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import { isErrnoCode, type FileOps, type FsOps } from './fs-ops.js';
import { readExactly } from './global-index.js';

/**
 * Bytes that recovery removes from a file (the unfinished commit a crash left) are never simply deleted: they are
 * first copied to `quarantine/<time>-<file>-<offset>.bytes` under the store directory, and one JSON line saying
 * what, where and why is appended to `quarantine/quarantine.log`. Both are made durable before the cut.
 */
export const QUARANTINE_DIR = 'quarantine';
export const QUARANTINE_LOG = 'quarantine.log';

/** Where quarantined bytes go and how carefully. */
export interface QuarantineTarget {
  readonly fs: FsOps;
  /** The store directory. */
  readonly dir: string;
  /** fsync the copies (false only for `durability: 'none'`). */
  readonly sync: boolean;
}

/** One line of `quarantine.log`. */
export interface QuarantineEntry {
  readonly time: string;
  /** The file the bytes were cut from, relative to the store directory. */
  readonly file: string;
  readonly offset: number;
  readonly length: number;
  readonly reason: string;
  /** The copy, relative to the store directory. */
  readonly saved: string;
}

const stamp = (): string => new Date().toISOString().replace(/[:.]/g, '-');

const ensureDir = async (t: QuarantineTarget): Promise<string> => {
  const qdir = join(t.dir, QUARANTINE_DIR);
  if ((await t.fs.sizeOf(qdir)) === undefined) {
    await t.fs.mkdir(qdir);
    if (t.sync) await t.fs.syncDir(t.dir);
  }
  return qdir;
};

const appendLog = async (t: QuarantineTarget, qdir: string, entry: QuarantineEntry): Promise<void> => {
  const path = join(qdir, QUARANTINE_LOG);
  let log: FileOps;
  try {
    log = await t.fs.open(path, 'create');
  } catch (e) {
    if (!isErrnoCode(e, 'EEXIST')) throw e;
    log = await t.fs.open(path, 'update');
  }
  try {
    await log.write(Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8'), await log.size());
    if (t.sync) await log.sync();
  } finally {
    await log.close();
  }
};

/** Copies `file[from, to)` into the quarantine and logs why; the caller cuts the file afterwards. */
export const quarantineBytes = async (t: QuarantineTarget, file: FileOps, path: string, from: number, to: number, reason: string): Promise<void> => {
  if (to <= from) return;
  const qdir = await ensureDir(t);
  const bytes = await readExactly(file, from, to - from, path);
  const name = `${stamp()}-${basename(path)}-${from}-${randomBytes(3).toString('hex')}.bytes`;
  const copy = await t.fs.open(join(qdir, name), 'create');
  try {
    await copy.write(bytes, 0);
    if (t.sync) await copy.sync();
  } finally {
    await copy.close();
  }
  await appendLog(t, qdir, { time: new Date().toISOString(), file: relative(t.dir, path), offset: from, length: to - from, reason, saved: join(QUARANTINE_DIR, name) });
  if (t.sync) await t.fs.syncDir(qdir);
};

/** Moves a whole file (a leftover temporary file) into the quarantine: link there, log, then unlink. */
export const quarantineFile = async (t: QuarantineTarget, path: string, reason: string): Promise<void> => {
  const qdir = await ensureDir(t);
  const name = `${stamp()}-${basename(path)}-${randomBytes(3).toString('hex')}`;
  await t.fs.link(path, join(qdir, name));
  const length = (await t.fs.sizeOf(path)) ?? 0;
  await appendLog(t, qdir, { time: new Date().toISOString(), file: relative(t.dir, path), offset: 0, length, reason, saved: join(QUARANTINE_DIR, name) });
  if (t.sync) await t.fs.syncDir(qdir);
  await t.fs.unlink(path);
};

const relative = (dir: string, path: string): string => (path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : path);
