/**
 * Test helpers for the harness's log format: a steerlog log written in the harness's shape (the inverse of the
 * reader's mapping, for round trips), and zstd frames of raw (stored) blocks, so tests build multi-frame files
 * without a compressor.
 */

type Obj = Record<string, unknown>;
const SURFACE = new Set(['user/message', 'assistant/message', 'tool/result']);

/**
 * A steerlog envelope log (session/created first) as a harness session file's lines: the header from
 * session/created, then each event at seq − 1 with no id, metadata or hash, `surfaceOp: 'append'` on the surface
 * events, and tool-call blocks naming their call `id`. `chain/head` events (steerlog's own) are not written.
 */
export const toHarnessLines = (steerlog: readonly Obj[]): string[] => {
  const [created, ...rest] = steerlog;
  if (created?.type !== 'session/created') throw new Error('a steerlog log starts with session/created');
  const c = created.data as Obj;
  const header = {
    version: 0,
    id: c.sessionId,
    createdAt: c.createdAt,
    ...(c.parentSession !== undefined ? { parentSession: c.parentSession } : {}),
    ...(c.seedLength !== undefined ? { seedLength: c.seedLength } : {}),
    ...(c.origin === 'subagent' ? { origin: 'subagent' } : {}),
    ...(c.delegationDepth !== undefined ? { delegationDepth: c.delegationDepth } : {}),
  };
  const lines = [JSON.stringify(header)];
  for (const e of rest) {
    if (e.type === 'chain/head') throw new Error('chain/head has no harness counterpart');
    lines.push(
      JSON.stringify({
        type: e.type,
        seq: (e.seq as number) - 1,
        time: e.time,
        data: e.type === 'assistant/message' ? withToolCallIds(e.data as Obj) : e.data,
        ...(e.ignorable === true ? { ignorable: true } : {}),
        ...(SURFACE.has(e.type as string) ? { surfaceOp: 'append' } : {}),
      }),
    );
  }
  return lines;
};

const withToolCallIds = (data: Obj): Obj => {
  const message = data.message as Obj;
  const content = (message.content as Obj[]).map((b) => {
    if (b.type !== 'tool-call') return b;
    const { callId, ...rest } = b;
    return { type: 'tool-call', id: callId, ...rest };
  });
  return { ...data, message: { ...message, content } };
};

const MAX_BLOCK = 128 * 1024;

/**
 * One zstd frame holding `content` in raw (stored) blocks: magic, a single-segment header with a 4-byte content
 * size, then blocks of at most 128 KiB, the last one flagged. Every conforming decoder reads it.
 */
export const rawZstdFrame = (content: Uint8Array): Uint8Array => {
  const parts: number[] = [0x28, 0xb5, 0x2f, 0xfd, 0xa0];
  const n = content.length;
  parts.push(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  const out: Uint8Array[] = [Uint8Array.from(parts)];
  let at = 0;
  do {
    const size = Math.min(MAX_BLOCK, n - at);
    const last = at + size >= n ? 1 : 0;
    const header = last | (size << 3);
    out.push(Uint8Array.of(header & 0xff, (header >>> 8) & 0xff, (header >>> 16) & 0xff), content.subarray(at, at + size));
    at += size;
  } while (at < n);
  return Buffer.concat(out);
};

/** Lines cut into batches at `cuts` (line indexes, ascending), each batch one raw zstd frame of its lines. */
export const framesOf = (lines: readonly string[], cuts: readonly number[]): Uint8Array => {
  const bounds = [0, ...cuts.filter((c) => c > 0 && c < lines.length), lines.length];
  const frames: Uint8Array[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    if (bounds[i] === bounds[i + 1]) continue;
    frames.push(rawZstdFrame(Buffer.from(`${lines.slice(bounds[i], bounds[i + 1]).join('\n')}\n`)));
  }
  return Buffer.concat(frames);
};

/**
 * A raw frame of `content` (see {@link rawZstdFrame}) that carries a content checksum: the header's checksum flag set
 * and `checksum` (the low 32 bits of the content's XXH64, or any other value to test a mismatch) after the last block.
 */
export const rawZstdFrameWithChecksum = (content: Uint8Array, checksum: number): Uint8Array => {
  const frame = Buffer.from(rawZstdFrame(content));
  frame[4] = frame[4]! | 0x04;
  const tail = Buffer.alloc(4);
  tail.writeUInt32LE(checksum >>> 0);
  return Buffer.concat([frame, tail]);
};
