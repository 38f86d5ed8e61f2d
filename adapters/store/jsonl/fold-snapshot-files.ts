import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { FoldSnapshot } from '../../../runtime/ports/fold-snapshots.js';
import type { WorkSlices } from '../shared/work-slices.js';
import { crc32 } from './line-codec.js';

/**
 * Fold snapshots beside the streams (docs/store-jsonl.md, "Fold snapshots"): `snapshots/<stream file hash>.snap`,
 * one line per snapshot, `{"c":"<crc32 of the inner JSON>","s":{"seq":…,"id":…,"hash":…,"version":…,"state":…}}`,
 * in seq order. A cache of a fold of the log, never data: written with node:fs directly (not the store's injectable
 * file system), as a temporary file renamed into place or as lines appended past the last one, never fsynced; a
 * torn, damaged or missing file costs a longer fold, nothing else. A line that does not check is skipped; a snapshot is used only after its claim (the
 * event at its seq) was checked against the log.
 */
export const SNAPSHOTS_DIR = 'snapshots';

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** The path of a stream's snapshot file. */
export const snapshotFileOf = (dir: string, fileHash: string): string => join(dir, SNAPSHOTS_DIR, `${fileHash}.snap`);

/** The line of one snapshot. */
const snapshotLine = (s: FoldSnapshot): string => {
  const inner = JSON.stringify({ seq: s.seq, id: s.id, ...(s.hash !== undefined ? { hash: s.hash } : {}), version: s.version, state: s.state });
  return `{"c":"${hex8(crc32(Buffer.from(inner, 'utf8')))}","s":${inner}}\n`;
};

/** The bytes of a snapshot file. */
export const encodeSnapshots = (snapshots: readonly FoldSnapshot[]): Buffer => Buffer.from(snapshots.map(snapshotLine).join(''), 'utf8');

/**
 * `encodeSnapshots`'s very bytes, a snapshot at a time: between two, once `slices` says a slice ran
 * (`WorkSlices.due`), it lets the event loop run (a catch-up writes several snapshots of a large state at once; each
 * one's serialization is a piece that is not cut).
 */
export const encodeSnapshotsSliced = async (snapshots: readonly FoldSnapshot[], slices: WorkSlices): Promise<Buffer> => {
  const lines: string[] = [];
  for (let i = 0; i < snapshots.length; i++) {
    if (i > 0 && slices.due) await slices.pause();
    lines.push(snapshotLine(snapshots[i]!));
  }
  return Buffer.from(lines.join(''), 'utf8');
};

const isSnapshot = (v: unknown): v is FoldSnapshot => {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return Number.isSafeInteger(s.seq) && (s.seq as number) >= 0 && typeof s.id === 'string' && (s.hash === undefined || typeof s.hash === 'string') && Number.isSafeInteger(s.version) && 'state' in s;
};

/** Length of `{"c":"<8 hex>","s":`, where a line's checksummed inner JSON starts. */
const LINE_HEAD = 20;
/** The most bytes of a line's inner JSON its head takes (an id is at most a few hundred bytes). */
const HEAD_BYTES = 1024;
/** The prefix of a line's inner JSON a head fits in when its id is a UUID (as steerlog's are). */
const SHORT_HEAD_BYTES = 256;
/** The head of a snapshot's inner JSON, as encodeSnapshots writes it (its state follows). */
const HEAD = /^\{"seq":(\d+),"id":("(?:[^"\\]|\\.)*")(?:,"hash":("[0-9a-zA-Z]*"))?,"version":(\d+),"state":/;

/** The snapshot of the line `[lineStart, nl)` of `bytes` when it checks (checksum, the head's fields), else undefined. */
const decodeLine = (bytes: Buffer, lineStart: number, nl: number): FoldSnapshot | undefined => {
  // a line is `{"c":"<8 hex>","s":<inner>}`: the inner bytes are checked in place, only the head is decoded
  const innerStart = lineStart + LINE_HEAD;
  const innerEnd = nl - 1;
  if (innerEnd <= innerStart || bytes[innerEnd] !== 0x7d || bytes.toString('latin1', lineStart, lineStart + 6) !== '{"c":"' || bytes.toString('latin1', lineStart + 14, innerStart) !== '","s":') return undefined;
  if (hex8(crc32(bytes, innerStart, innerEnd)) !== bytes.toString('latin1', lineStart + 6, lineStart + 14)) return undefined;
  // the head is a few hundred bytes at most: decoded from a short prefix first, the longest one only when needed
  const head = HEAD.exec(bytes.toString('utf8', innerStart, Math.min(innerEnd, innerStart + SHORT_HEAD_BYTES))) ?? HEAD.exec(bytes.toString('utf8', innerStart, Math.min(innerEnd, innerStart + HEAD_BYTES)));
  if (head === null) return undefined;
  try {
    const snapshot = { seq: Number(head[1]), id: JSON.parse(head[2]!) as unknown, ...(head[3] !== undefined ? { hash: JSON.parse(head[3]) as unknown } : {}), version: Number(head[4]), state: undefined as unknown };
    let parsed: { value: unknown } | undefined;
    Object.defineProperty(snapshot, 'state', {
      enumerable: true,
      get: () => {
        if (parsed === undefined) {
          try {
            parsed = { value: (JSON.parse(bytes.toString('utf8', innerStart, innerEnd)) as { state?: unknown }).state };
          } catch {
            parsed = { value: undefined };
          }
        }
        return parsed.value;
      },
    });
    return isSnapshot(snapshot) ? snapshot : undefined;
  } catch {
    return undefined; // a damaged head
  }
};

/** The end of the line starting at `at`: its newline, or the end of `bytes`. */
const lineEnd = (bytes: Buffer, at: number): number => {
  const nl = bytes.indexOf(0x0a, at);
  return nl < 0 ? bytes.length : nl;
};

/**
 * The snapshots in `bytes` whose lines check (checksum, the head's fields), in seq order. A line's state is parsed
 * only when it is read (a reader uses one snapshot of many); a state that does not parse reads as undefined, which
 * no reader takes for a fold state.
 */
export const decodeSnapshots = (bytes: Buffer): FoldSnapshot[] => {
  const out: FoldSnapshot[] = [];
  for (let at = 0; at < bytes.length; ) {
    const nl = lineEnd(bytes, at);
    const snapshot = decodeLine(bytes, at, nl);
    if (snapshot !== undefined) out.push(snapshot);
    at = nl + 1;
  }
  return out.sort((a, b) => a.seq - b.seq);
};

/** Below this many bytes between its bounds, the bisection of {@link decodeSnapshotsNear} reads the lines in turn. */
const NEAR_SPAN = 8 * 1024;

/**
 * What `decodeSnapshots(bytes)` holds of the snapshots a fold of `[range.from, range.to)` needs (the last one below
 * `from`, and every one with `from <= seq < to`; runtime/ports/fold-snapshots.ts `snapshotsNear`), decoding only
 * those and the few lines a bisection by byte offset probes. The lines that check are in seq order (the file is
 * written so); a line that does not check is skipped, as the full decode skips it — every newline ends a line for
 * both, so a probe's next line is a line of the full decode too.
 */
export const decodeSnapshotsNear = (bytes: Buffer, range: { readonly from: number; readonly to: number }): FoldSnapshot[] => {
  // invariant: the last good line below `from` starts at or after `lo` (or there is none), and every good line
  // starting at or after `hi` has a seq of at least `from`; `lo` and `hi` are line starts (or the end)
  let lo = 0;
  let hi = bytes.length;
  while (hi - lo > NEAR_SPAN) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const probe = bytes[mid - 1] === 0x0a ? mid : lineEnd(bytes, mid) + 1;
    if (probe >= hi) break;
    let found: { readonly at: number; readonly seq: number } | undefined;
    for (let at = probe; at < hi && found === undefined; ) {
      const nl = lineEnd(bytes, at);
      const snapshot = decodeLine(bytes, at, nl);
      if (snapshot !== undefined) found = { at, seq: snapshot.seq };
      at = nl + 1;
    }
    if (found === undefined) hi = probe;
    else if (found.seq < range.from) lo = found.at;
    else hi = found.at;
  }
  let below: FoldSnapshot | undefined;
  const within: FoldSnapshot[] = [];
  for (let at = lo; at < bytes.length; ) {
    const nl = lineEnd(bytes, at);
    const snapshot = decodeLine(bytes, at, nl);
    at = nl + 1;
    if (snapshot === undefined) continue;
    if (snapshot.seq >= range.to && snapshot.seq >= range.from) break;
    if (snapshot.seq < range.from) below = snapshot;
    else within.push(snapshot);
  }
  return below === undefined ? within : [below, ...within];
};

/** The snapshots kept in `path`; none when the file is missing or unreadable. */
export const readSnapshotFile = async (path: string): Promise<FoldSnapshot[]> => {
  try {
    return decodeSnapshots(await readFile(path));
  } catch {
    return [];
  }
};

/** The bytes of a snapshot file's tail {@link readSnapshotFileNear} reads first. */
const NEAR_TAIL_BYTES = 16 * 1024;

/**
 * What {@link decodeSnapshotsNear} finds in `path`; none when the file is missing or unreadable. The file's tail is
 * read first: when the first line in it that checks is below `range.from`, every snapshot the range needs is in the
 * tail (the lines are in seq order), and the rest of the file is not read — a read of a session's last events, or a
 * live checkpoint's catch-up, reads a few KiB however many snapshots the file holds.
 */
export const readSnapshotFileNear = async (path: string, range: { readonly from: number; readonly to: number }): Promise<FoldSnapshot[]> => {
  try {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      if (size > NEAR_TAIL_BYTES) {
        const tail = Buffer.alloc(NEAR_TAIL_BYTES);
        const { bytesRead } = await fh.read(tail, 0, NEAR_TAIL_BYTES, size - NEAR_TAIL_BYTES);
        // the window starts inside a line: its lines start after its first newline
        const nl = tail.subarray(0, bytesRead).indexOf(0x0a);
        const lines = tail.subarray(nl + 1, bytesRead);
        const first = nl < 0 ? undefined : firstSnapshotIn(lines);
        if (first !== undefined && first.seq < range.from) return decodeSnapshotsNear(lines, range);
      }
      const bytes = Buffer.alloc(size);
      let done = 0;
      for (let n = -1; n !== 0 && done < size; done += n) n = (await fh.read(bytes, done, size - done, done)).bytesRead;
      return decodeSnapshotsNear(bytes.subarray(0, done), range);
    } finally {
      await fh.close();
    }
  } catch {
    return [];
  }
};

/** The first snapshot in `bytes` (which start at a line) whose line checks. */
const firstSnapshotIn = (bytes: Buffer): FoldSnapshot | undefined => {
  for (let at = 0; at < bytes.length; ) {
    const nl = lineEnd(bytes, at);
    const snapshot = decodeLine(bytes, at, nl);
    if (snapshot !== undefined) return snapshot;
    at = nl + 1;
  }
  return undefined;
};

/**
 * What encodes the lines of snapshots for a write: `encodeSnapshots`'s bytes, maybe in slices, maybe in turn with
 * others (fold-snapshot-encoders.ts).
 */
export type SnapshotEncoder = (snapshots: readonly FoldSnapshot[]) => Promise<Buffer>;

/** `encodeSnapshots`, in one piece. */
const inOnePiece: SnapshotEncoder = async (snapshots) => encodeSnapshots(snapshots);

/**
 * Replaces the snapshot file (a temporary file renamed over the old one); a failure keeps the old one. The lines are
 * encoded by `encode`. @param encode default: in one piece
 */
export const writeSnapshotFile = async (dir: string, path: string, snapshots: readonly FoldSnapshot[], encode: SnapshotEncoder = inOnePiece): Promise<void> => {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(join(dir, SNAPSHOTS_DIR), { recursive: true });
    await writeFile(tmp, await encode(snapshots));
    await rename(tmp, path);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
};

/** The first bytes of a snapshot file's tail {@link lastSnapshotOf} reads (more only when no whole good line is in them). */
const TAIL_BYTES = 64 * 1024;

/**
 * The last snapshot whose line checks among the last lines of the file open as `fh` (`size` bytes), reading only
 * its tail (a window grown until it holds a good line, or the whole file), and whether the file ends with a newline.
 */
const lastSnapshotOf = async (fh: FileHandle, size: number): Promise<{ readonly last: FoldSnapshot | undefined; readonly endsWithNewline: boolean }> => {
  let endsWithNewline = true;
  for (let window = Math.min(size, TAIL_BYTES); ; window = Math.min(size, window * 4)) {
    const start = size - window;
    const bytes = Buffer.alloc(window);
    const { bytesRead } = await fh.read(bytes, 0, window, start);
    const tail = bytes.subarray(0, bytesRead);
    if (tail.length > 0) endsWithNewline = tail[tail.length - 1] === 0x0a;
    // a window that does not start the file starts inside a line: its lines start after its first newline
    const firstNl = tail.indexOf(0x0a);
    let at = start === 0 ? 0 : firstNl < 0 ? tail.length : firstNl + 1;
    let last: FoldSnapshot | undefined;
    while (at < tail.length) {
      const nl = lineEnd(tail, at);
      last = decodeLine(tail, at, nl) ?? last;
      at = nl + 1;
    }
    if (last !== undefined || start === 0) return { last, endsWithNewline };
  }
};

/**
 * Appends the lines of `snapshots` to the snapshot file (created when missing), skipping those whose seq is not above
 * the last line of the file that checks; a file whose last line is torn (no newline) gets one first, so the torn
 * line stays one line that does not check. Only the file's tail is read. Answers the seq of the file's last line that
 * checks after the append (-1: none, or the file is missing). A failure writes nothing more (a cache) and answers -1.
 * The lines are encoded by `encode`. @param encode default: in one piece
 */
export const appendSnapshotFile = async (dir: string, path: string, snapshots: readonly FoldSnapshot[], encode: SnapshotEncoder = inOnePiece): Promise<number> => {
  try {
    // nothing to add: the tail is read when the file exists, none is created
    if (snapshots.length > 0) await mkdir(join(dir, SNAPSHOTS_DIR), { recursive: true });
    const fh = await open(path, snapshots.length === 0 ? 'r' : 'a+');
    try {
      const { size } = await fh.stat();
      const { last, endsWithNewline } = size === 0 ? { last: undefined, endsWithNewline: true } : await lastSnapshotOf(fh, size);
      const after = snapshots.filter((s, i) => (last === undefined || s.seq > last.seq) && (i === 0 || s.seq > snapshots[i - 1]!.seq));
      if (after.length === 0) return last?.seq ?? -1;
      const lines = await encode(after);
      await fh.appendFile(endsWithNewline ? lines : Buffer.concat([Buffer.from('\n'), lines]));
      return after.at(-1)!.seq;
    } finally {
      await fh.close();
    }
  } catch {
    // a cache: a failed append keeps what was there (a torn line is skipped by every reader)
    return -1;
  }
};
