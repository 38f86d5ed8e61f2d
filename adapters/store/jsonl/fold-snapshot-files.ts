import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FoldSnapshot } from '../../../runtime/ports/fold-snapshots.js';
import { crc32 } from './line-codec.js';

/**
 * Fold snapshots beside the streams (docs/store-jsonl.md, "Fold snapshots"): `snapshots/<stream file hash>.snap`,
 * one line per snapshot, `{"c":"<crc32 of the inner JSON>","s":{"seq":…,"id":…,"hash":…,"version":…,"state":…}}`,
 * in seq order. A cache of a fold of the log, never data: written with node:fs directly (not the store's injectable
 * file system), as a temporary file renamed into place, never fsynced; a torn, damaged or missing file costs a
 * longer fold, nothing else. A line that does not check is skipped; a snapshot is used only after its claim (the
 * event at its seq) was checked against the log.
 */
export const SNAPSHOTS_DIR = 'snapshots';

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** The path of a stream's snapshot file. */
export const snapshotFileOf = (dir: string, fileHash: string): string => join(dir, SNAPSHOTS_DIR, `${fileHash}.snap`);

/** The bytes of a snapshot file. */
export const encodeSnapshots = (snapshots: readonly FoldSnapshot[]): Buffer =>
  Buffer.from(
    snapshots
      .map((s) => {
        const inner = JSON.stringify({ seq: s.seq, id: s.id, ...(s.hash !== undefined ? { hash: s.hash } : {}), version: s.version, state: s.state });
        return `{"c":"${hex8(crc32(Buffer.from(inner, 'utf8')))}","s":${inner}}\n`;
      })
      .join(''),
    'utf8',
  );

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

/**
 * The snapshots in `bytes` whose lines check (checksum, the head's fields), in seq order. A line's state is parsed
 * only when it is read (a reader uses one snapshot of many); a state that does not parse reads as undefined, which
 * no reader takes for a fold state.
 */
export const decodeSnapshots = (bytes: Buffer): FoldSnapshot[] => {
  const out: FoldSnapshot[] = [];
  // each line is `{"c":"<8 hex>","s":<inner>}`: the inner bytes are checked in place, only the head is decoded
  for (let at = 0; at < bytes.length; ) {
    let nl = bytes.indexOf(0x0a, at);
    if (nl < 0) nl = bytes.length;
    const lineStart = at;
    at = nl + 1;
    const innerStart = lineStart + LINE_HEAD;
    const innerEnd = nl - 1;
    if (innerEnd <= innerStart || bytes[innerEnd] !== 0x7d || bytes.toString('latin1', lineStart, lineStart + 6) !== '{"c":"' || bytes.toString('latin1', lineStart + 14, innerStart) !== '","s":') continue;
    if (hex8(crc32(bytes, innerStart, innerEnd)) !== bytes.toString('latin1', lineStart + 6, lineStart + 14)) continue;
    // the head is a few hundred bytes at most: decoded from a short prefix first, the longest one only when needed
    const head = HEAD.exec(bytes.toString('utf8', innerStart, Math.min(innerEnd, innerStart + SHORT_HEAD_BYTES))) ?? HEAD.exec(bytes.toString('utf8', innerStart, Math.min(innerEnd, innerStart + HEAD_BYTES)));
    if (head === null) continue;
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
      if (isSnapshot(snapshot)) out.push(snapshot);
    } catch {
      // a damaged head: skipped
    }
  }
  return out.sort((a, b) => a.seq - b.seq);
};

/** The snapshots kept in `path`; none when the file is missing or unreadable. */
export const readSnapshotFile = async (path: string): Promise<FoldSnapshot[]> => {
  try {
    return decodeSnapshots(await readFile(path));
  } catch {
    return [];
  }
};

/** Replaces the snapshot file (a temporary file renamed over the old one); a failure keeps the old one. */
export const writeSnapshotFile = async (dir: string, path: string, snapshots: readonly FoldSnapshot[]): Promise<void> => {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(join(dir, SNAPSHOTS_DIR), { recursive: true });
    await writeFile(tmp, encodeSnapshots(snapshots));
    await rename(tmp, path);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
};
