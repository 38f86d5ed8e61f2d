import { open } from 'node:fs/promises';
import { startsWithZstdMagic } from '../formats/dsh/zstd-magic.js';

/** The log formats a file argument can be read as: steerlog's envelope log, or the harness's session log (`dsh`). */
export type LogFormat = 'steerlog' | 'dsh';

/** `--format`: a format, or `auto` (the default) to recognise the file. */
export type FormatOption = LogFormat | 'auto';

/** Parses `--format`; null when it is none of `auto`, `steerlog`, `dsh`. */
export const parseFormatOption = (text: string | undefined): FormatOption | null =>
  text === undefined || text === 'auto' ? 'auto' : text === 'steerlog' || text === 'dsh' ? text : null;

const HEAD_BYTES = 64 * 1024;

/**
 * Recognises a log file's format from its first bytes: the zstd magic number (28 B5 2F FD) or a first line that is
 * the harness's session header (`{type: "session", version, id, createdAt, …}`, or the same untagged) or a harness envelope (a `type` and
 * `seq` but no steerlog `id`, or the harness's `surfaceOp` / `sourceEventSeqs` fields) → `dsh`; anything else
 * (a steerlog envelope, a JSONL store's stream file, an empty or unreadable first line) → `steerlog`, whose reader
 * then says what is wrong.
 */
export const detectLogFormat = async (file: string): Promise<LogFormat> => {
  const handle = await open(file, 'r');
  let head: Buffer;
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (startsWithZstdMagic(head)) return 'dsh';
  const nl = head.indexOf(0x0a);
  let first: unknown;
  try {
    first = JSON.parse(head.toString('utf8', 0, nl < 0 ? head.length : nl));
  } catch {
    return 'steerlog';
  }
  if (typeof first !== 'object' || first === null || Array.isArray(first)) return 'steerlog';
  const o = first as Record<string, unknown>;
  // the harness's session header: tagged `type: "session"` as its JSONL backend writes it (or untagged), no seq
  if ((!('type' in o) || o.type === 'session') && !('seq' in o) && 'version' in o && 'id' in o && 'createdAt' in o) return 'dsh';
  if ('type' in o && 'seq' in o && (!('id' in o) || 'surfaceOp' in o || 'sourceEventSeqs' in o)) return 'dsh';
  return 'steerlog';
};

/** The format to read `file` as: the one asked for, or the detected one. */
export const resolveFileFormat = async (file: string, option: FormatOption): Promise<LogFormat> => (option === 'auto' ? detectLogFormat(file) : option);
