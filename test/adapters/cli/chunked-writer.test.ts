import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkedWriter, copyElements } from '../../../adapters/cli/chunked-writer.js';

// The audit's output goes through chunkedWriter: to the process's stdout as bytes (a Node stream), to a test's sink
// as text. Either way the output is the pieces written, in order, whatever their sizes and however a file's bytes
// cut its characters.
const dir = mkdtempSync(join(tmpdir(), 'chunked-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A stream that collects what it is given: slow (a small buffer, each write finished on a later tick: it holds the
 * chunks it was given meanwhile) or, like stdout to a file or a pipe, writing each chunk through at once.
 */
const collecting = (slow: boolean): { stream: Writable; bytes: () => Buffer } => {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      if (!slow) {
        chunks.push(Buffer.from(chunk));
        return done();
      }
      // copied when the write finishes: a writer that reused a chunk still in flight would show here
      setImmediate(() => {
        chunks.push(Buffer.from(chunk));
        done();
      });
    },
  });
  return { stream, bytes: () => Buffer.concat(chunks) };
};

const piece = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => ({ text: s })),
  fc.string({ unit: 'grapheme', minLength: 1_000, maxLength: 8_000 }).map((s) => ({ text: s })),
  fc.string({ unit: 'grapheme', minLength: 20_000, maxLength: 40_000 }).map((s) => ({ text: s })),
  fc.string({ unit: 'grapheme', maxLength: 3_000 }).map((s) => ({ file: s })),
);

describe('chunkedWriter', () => {
  it('writes the pieces and copied files in order, as bytes to a Node stream and as text to any other sink (property)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 30 }), fc.nat({ max: 3 }), fc.boolean(), async (pieces, repeat, slow) => {
        const all = Array.from({ length: repeat + 1 }, () => pieces).flat();
        const expected = all.map((p) => ('text' in p ? p.text : p.file)).join('');
        const { stream, bytes } = collecting(slow);
        let text = '';
        const outs = [chunkedWriter({ stdout: stream, stderr: stream }), chunkedWriter({ stdout: { write: (s: string) => (text += s) }, stderr: { write: () => undefined } })];
        for (const out of outs) {
          for (const p of all) {
            if ('text' in p) await out.write(p.text);
            else {
              const file = join(dir, `f-${n++}`);
              writeFileSync(file, p.file);
              await copyElements(out, file);
            }
          }
          await out.end();
        }
        await new Promise<void>((resolve) => stream.end(resolve));
        expect(bytes().toString('utf8')).toBe(expected);
        expect(text).toBe(expected);
      }),
      { numRuns: 150 },
    );
  });
});
