import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readLineBatches } from '../../../audit/read-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'steerlog-read-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readAll = async (file: string, chunkBytes: number): Promise<string[]> => {
  const out: string[] = [];
  for await (const batch of readLineBatches(file, { chunkBytes })) out.push(...batch);
  return out;
};

/** What the reader must give: lines split at \n, a \r before it dropped, no line after a final \n. */
const expected = (text: string): string[] => {
  if (text === '') return [];
  const parts = text.split('\n');
  if (parts.at(-1) === '') parts.pop();
  return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
};

describe('readLineBatches (the streaming line reader of steerlog audit)', () => {
  it('byte ranges that start at a line and end after a newline give exactly the lines a whole read gives there', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('', '{"a":"é€😀"}', 'x\r')), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.integer({ min: 1, max: 17 }),
        async (lines, finalNewline, picks, chunkBytes) => {
          const text = lines.join('\n') + (finalNewline ? '\n' : '');
          const file = join(dir, `r${n++}.txt`);
          writeFileSync(file, text);
          // the bytes just after each \n are the places a range may start or end
          const bytes = Buffer.from(text, 'utf8');
          const starts = [...bytes.keys()].filter((i) => bytes[i] === 0x0a).map((i) => i + 1);
          const cuts = [...new Set(picks.map((p) => starts[p % Math.max(1, starts.length)]).filter((c): c is number => c !== undefined))].sort((a, b) => a - b);
          const bounds = [0, ...cuts, bytes.length];
          const pieces: string[] = [];
          for (let i = 0; i + 1 < bounds.length; i++) {
            for await (const batch of readLineBatches(file, { chunkBytes, start: bounds[i]!, end: bounds[i + 1]! })) pieces.push(...batch);
          }
          expect(pieces).toEqual(expected(text));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives the lines of any text, whatever the chunk size: multi-byte characters and lines across chunks, CRLF, blank lines, no final newline', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('', '{"a":"é€😀"}', 'x\r')), { maxLength: 12 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 17 }),
        async (lines, finalNewline, chunkBytes) => {
          const text = lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '');
          const file = join(dir, `f${n++}.txt`);
          writeFileSync(file, text);
          expect(await readAll(file, chunkBytes)).toEqual(expected(text));
        },
      ),
      { numRuns: 300 },
    );
  });
});
