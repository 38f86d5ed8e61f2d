import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { decompress } from 'fzstd';
import { afterAll, describe, expect, it } from 'vitest';
import { contentChecksum, frameExtent, storedChecksum } from '../../../formats/dsh/zstd-frames.js';
import { runCli as run } from '../cli/support/run-cli.js';
import { framesOf, rawZstdFrame, rawZstdFrameWithChecksum } from './support/harness-log.js';

const dir = fileURLToPath(new URL('../../../docs/examples/dsh', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-zstd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const write = (bytes: Uint8Array | string, ext = 'jsonl.zst'): string => {
  const f = join(tmp, `f-${n++}.${ext}`);
  writeFileSync(f, bytes);
  return f;
};
const audit = async (f: string) => {
  const r = await run('audit', f, '--json');
  return { code: r.code, out: JSON.parse(r.stdout) as Record<string, unknown> & { source: Record<string, unknown> } };
};
/** The audit without the fields that say how the file was stored. */
const content = (out: Record<string, unknown>) => ({ ...out, source: { ...(out.source as object), compression: null, frames: null } });

const ZST = readFileSync(join(dir, 'aborted-child.jsonl.zst'));
const frameStarts = (bytes: Uint8Array): number[] => {
  const starts: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    starts.push(at);
    const e = frameExtent(bytes.subarray(at));
    if (e.kind !== 'frame') throw new Error('not a frame');
    at += e.length;
  }
  return starts;
};
// a log the harness itself wrote (its packed rows and all), cut into frames as the tests below choose
const PLAIN_LINES = readFileSync(join(dir, 'harness/queued-steered.jsonl'), 'utf8').trimEnd().split('\n');

describe('zstd frames', () => {
  it('walks frames without decompressing: incomplete at every cut, a bad magic named', () => {
    const frame = rawZstdFrame(Buffer.from('{"a":1}\n'));
    expect(frameExtent(frame)).toEqual({ kind: 'frame', length: frame.length, skippable: false });
    for (let cut = 0; cut < frame.length; cut++) expect(frameExtent(frame.subarray(0, cut))).toEqual({ kind: 'incomplete' });
    expect(frameExtent(Buffer.from('{"a":1}'))).toMatchObject({ kind: 'bad', at: 0 });
    const skippable = Uint8Array.of(0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9);
    expect(frameExtent(skippable)).toEqual({ kind: 'frame', length: 10, skippable: true });
  });

  it('a file cut inside its last frame: the complete frames are read and the torn tail reported (the harness cuts it on load)', async () => {
    const starts = frameStarts(ZST);
    const last = starts.at(-1)!;
    const whole = (await audit(write(ZST))).out;
    // the last frame is one block and a 4-byte checksum: a cut before the checksum leaves no whole block
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: last + 1, max: ZST.length - 5 }), async (cut) => {
        const { code, out } = await audit(write(ZST.subarray(0, cut)));
        expect(code).toBe(0);
        expect(out.source).toMatchObject({ frames: 4, tornTail: { offset: last, bytes: cut - last, recovered: 0 }, error: null });
        // exactly what the first four batches say: turn 1 closed aborted, nothing of turn 2
        expect(out.events).toBe(26); // the header and 25 events
        expect((out.turns as unknown[]).length).toBe(1);
        expect(out.ok).toBe(true);
      }),
      { numRuns: 12, seed: 13 },
    );
    expect(whole.events).toBe(35);
    // cut inside the checksum: the block is whole, and its lines are read, as the harness reads them on load
    for (const cut of [1, 2, 3, 4]) {
      const { code, out } = await audit(write(ZST.subarray(0, ZST.length - cut)));
      expect(code).toBe(0);
      expect(out.source).toMatchObject({ frames: 4, tornTail: { offset: last, bytes: ZST.length - cut - last }, error: null });
      expect((out.source as { tornTail: { recovered: number } }).tornTail.recovered).toBeGreaterThan(0);
      expect(out.events).toBe(whole.events);
      expect(out.turns).toEqual(whole.turns);
    }
    const text = await run('audit', write(ZST.subarray(0, last + 7)));
    expect(text.stdout).toContain(`  torn tail: 7 bytes at byte ${last} not read (an unfinished append`);
  });

  it('bytes that are not a frame in the middle, or a frame that does not decompress, are refused with the byte offset', async () => {
    const starts = frameStarts(ZST);
    const third = starts[2]!;
    const badMagic = Buffer.from(ZST);
    badMagic[third] = 0x00;
    const r = await audit(write(badMagic));
    expect(r.code).toBe(1);
    expect(r.out.errors).toEqual([{ seq: null, code: 'dsh-corrupt-frame', message: `harness log: byte ${third}: not the start of a zstd frame (no magic number 28 B5 2F FD)` }]);
    expect(r.out.events).toBe(15); // the header and the 14 events of the first two batches
    const badBlock = Buffer.from(rawZstdFrame(Buffer.from('{"x":1}\n')));
    badBlock[9] = 0x06 | 1; // block type 3 (reserved), last block
    const r2 = await audit(write(Buffer.concat([ZST.subarray(0, starts[1]!), badBlock])));
    expect(r2.out.errors).toEqual([{ seq: null, code: 'dsh-corrupt-frame', message: `harness log: byte ${starts[1]! + 9}: zstd block of the reserved type` }]);
  });

  it('a plain file whose last line was cut mid-write: the same torn tail; a complete last line without a newline is read', async () => {
    const text = `${PLAIN_LINES.join('\n')}\n`;
    const cut = text.length - 20;
    const { code, out } = await audit(write(text.slice(0, cut), 'jsonl'));
    expect(code).toBe(0);
    expect(out.source).toMatchObject({ compression: 'none', tornTail: { offset: text.lastIndexOf('\n', cut - 1) + 1, bytes: cut - text.lastIndexOf('\n', cut - 1) - 1 } });
    // its last line (one splice) not read
    expect(out.events).toBe(((await audit(write(text, 'jsonl'))).out.events as number) - 1);
    expect((await audit(write(text.slice(0, -1), 'jsonl'))).out).toEqual((await audit(write(text, 'jsonl'))).out);
  });

  it('property: how the lines are cut into frames never changes the audit', async () => {
    const plain = content((await audit(write(`${PLAIN_LINES.join('\n')}\n`, 'jsonl'))).out);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: PLAIN_LINES.length - 1 }), { maxLength: 12 }), async (cuts) => {
        const bytes = framesOf(PLAIN_LINES, [...cuts].sort((a, b) => a - b));
        const { code, out } = await audit(write(bytes));
        expect(code).toBe(0);
        expect(out.source).toMatchObject({ compression: 'zstd', frames: new Set(cuts).size + 1 });
        expect(content(out)).toEqual(plain);
      }),
      { numRuns: 15, seed: 7 },
    );
  });

  it('every frame of the shipped compressed fixture carries a content checksum, and each matches what it decompresses to', async () => {
    const starts = frameStarts(ZST);
    expect(starts).toHaveLength(5);
    for (const [i, at] of starts.entries()) {
      const frame = ZST.subarray(at, starts[i + 1] ?? ZST.length);
      expect(storedChecksum(frame)).toBe(await contentChecksum(decompress(frame)));
    }
    // the checksum is XXH64 (seed 0), low 32 bits: the empty input's XXH64 is ef46db3751d8e999
    expect(await contentChecksum(new Uint8Array(0))).toBe(0x51d8e999);
  });

  it('a frame whose content checksum does not match is refused (dsh-frame-checksum, naming the file, the frame and its byte); what came before is reported', async () => {
    const starts = frameStarts(ZST);
    const bad = Buffer.from(ZST);
    bad[starts[2]! - 1]! ^= 0x01; // the last byte of frame 2 is its stored checksum's high byte
    const f = write(bad);
    const stored = bad.readUInt32LE(starts[2]! - 4);
    const computed = await contentChecksum(decompress(ZST.subarray(starts[1]!, starts[2]!)));
    expect(stored).not.toBe(computed);
    const hex = (n: number) => n.toString(16).padStart(8, '0');
    const message = `harness log: frame 2, byte ${starts[1]}: content checksum mismatch in ${f}: the frame carries ${hex(stored)}, its decompressed bytes give ${hex(computed)} (XXH64, low 32 bits)`;
    const r = await audit(f);
    expect(r.code).toBe(1);
    expect(r.out.errors).toEqual([{ seq: null, code: 'dsh-frame-checksum', message }]);
    // the first frame (the header and three events) is read and folded; nothing of frame 2 or after it
    expect(r.out).toMatchObject({ ok: false, events: 4, source: { frames: 1, harnessEvents: 3, error: { code: 'dsh-frame-checksum' } } });
    const text = await run('audit', f);
    expect(text.stdout).toContain(`  error [dsh-frame-checksum] ${message} (nothing past it was applied)`);
    const verify = await run('verify', f);
    expect(verify).toMatchObject({ code: 3, stdout: '' });
    expect(verify.stderr).toContain(`cannot read ${f}: frame 2, byte ${starts[1]}: content checksum mismatch in ${f}`);
  });

  it('a byte changed inside a stored block still decompresses: only the checksum catches it', async () => {
    const header = '{"version":0,"id":"dsh-sum","createdAt":1764500000000}';
    const line = JSON.stringify({ type: 'agent/inbox/spliced', seq: 0, time: 1764500000100, data: { target: 'next-turn', start: 0, inserted: [{ id: 'A', role: 'user', content: [{ type: 'text', text: 'abc' }], source: { kind: 'user' } }] } });
    const content = Buffer.from(`${header}\n${line}\n`);
    const good = rawZstdFrameWithChecksum(content, await contentChecksum(content));
    expect((await audit(write(good))).out).toMatchObject({ ok: true, events: 2, source: { frames: 1, error: null } });
    const flipped = Buffer.from(good);
    const at = flipped.indexOf('abc') ; // the text of message A, inside the stored block
    flipped[at] = 'x'.charCodeAt(0);
    const r = await audit(write(flipped));
    expect(r.out.errors).toMatchObject([{ seq: null, code: 'dsh-frame-checksum' }]);
    expect((r.out.errors as { message: string }[])[0]!.message).toMatch(/^harness log: frame 1, byte 0: content checksum mismatch in /);
    expect(r.out.events).toBe(0);
    // the same change in a frame without a checksum reads as different content, and nothing can tell
    const unsummed = Buffer.from(rawZstdFrame(content));
    unsummed[unsummed.indexOf('abc')] = 'x'.charCodeAt(0);
    expect((await audit(write(unsummed))).out).toMatchObject({ ok: true, events: 2 });
  });
});

