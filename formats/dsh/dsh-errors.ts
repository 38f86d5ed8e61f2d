/**
 * Why a log in the harness's format could not be read as a steerlog session. Stable codes (match on them, never on
 * the message):
 * - `dsh-corrupt-frame`: a zstd frame that is not a frame, or does not decompress (names the byte offset);
 * - `dsh-frame-checksum`: a zstd frame whose content checksum (the low 32 bits of the XXH64 of its decompressed
 *   bytes, which the frame carries when its header says so) does not match what it decompresses to (names the file,
 *   the frame and its byte offset);
 * - `dsh-not-json`: a line that is not a JSON object;
 * - `dsh-header`: the session header (the file's first line) is missing or not one this reader knows;
 * - `dsh-child-descriptor`: a child's `subagent/descriptor` after its seed that is not its own one, right after
 *   the seed (a second one, or a late one);
 * - `dsh-malformed-envelope`: an event whose envelope breaks the format (seq, time, type, data, the surface fields);
 * - `dsh-unknown-type`: an event of a type the format does not declare, not marked `ignorable`;
 * - `dsh-unmappable`: a declared event whose data steerlog's event of the same meaning cannot hold as it is.
 */
export type DshErrorCode = 'dsh-corrupt-frame' | 'dsh-frame-checksum' | 'dsh-not-json' | 'dsh-header' | 'dsh-child-descriptor' | 'dsh-malformed-envelope' | 'dsh-unknown-type' | 'dsh-unmappable';

/** Every {@link DshErrorCode}, in the order above. */
export const DSH_ERROR_CODES = ['dsh-corrupt-frame', 'dsh-frame-checksum', 'dsh-not-json', 'dsh-header', 'dsh-child-descriptor', 'dsh-malformed-envelope', 'dsh-unknown-type', 'dsh-unmappable'] as const satisfies readonly DshErrorCode[];

/**
 * Where in the file: the line (1-based, of the decompressed text), the harness seq, and for frames the byte offset
 * and (when known) the frame's 1-based number in the file.
 */
export interface DshWhere {
  readonly line: number | null;
  readonly seq: number | null;
  readonly byteOffset: number | null;
  /** The frame's 1-based number (compressed files; absent when not known). */
  readonly frame?: number;
}

const whereText = (w: DshWhere): string => {
  const parts: string[] = [];
  if (w.frame !== undefined) parts.push(`frame ${w.frame}`);
  if (w.byteOffset !== null) parts.push(`byte ${w.byteOffset}`);
  if (w.line !== null) parts.push(`line ${w.line}`);
  if (w.seq !== null) parts.push(`harness seq ${w.seq}`);
  return parts.length === 0 ? 'the file' : parts.join(', ');
};

/** A refusal of the harness-format reader: nothing past it is read. The message names where and why, on one line. */
export class DshLogError extends Error {
  readonly code: DshErrorCode;
  readonly line: number | null;
  readonly seq: number | null;
  readonly byteOffset: number | null;
  /** The frame's 1-based number in the file, when the refusal is about one frame and it is known; else null. */
  readonly frame: number | null;
  readonly reason: string;
  constructor(code: DshErrorCode, where: DshWhere, reason: string) {
    super(`${whereText(where)}: ${reason}`);
    this.name = 'DshLogError';
    this.code = code;
    this.line = where.line;
    this.seq = where.seq;
    this.byteOffset = where.byteOffset;
    this.frame = where.frame ?? null;
    this.reason = reason;
  }
}

/** Is this a {@link DshLogError}? (by its stable `code`) */
export const isDshLogError = (e: unknown): e is DshLogError =>
  typeof e === 'object' && e !== null && (DSH_ERROR_CODES as readonly unknown[]).includes((e as { code?: unknown }).code);
