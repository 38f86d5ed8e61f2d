import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fileEnvelopes } from '../../../audit/log-sources.js';

const dir = mkdtempSync(join(tmpdir(), 'file-envelopes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The model: lines as node:readline splits them (\n, \r\n and a lone \r), blank ones skipped, each parsed or kept as text. */
const byReadline = async (file: string): Promise<unknown[]> => {
  const out: unknown[] = [];
  for await (const line of createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      out.push(line);
    }
  }
  return out;
};
const collect = async (file: string): Promise<unknown[]> => {
  const out: unknown[] = [];
  for await (const raw of fileEnvelopes(file)) out.push(raw);
  return out;
};

describe('fileEnvelopes reads lines as node:readline does, in large chunks', () => {
  const piece = fc.constantFrom('{"seq":0,"a":"x"}', '{"b":[1,2]}', 'not json', ' ', '\t', '\n', '\r', '\r\n', '\n\n', 'é', '{"c":"\\r\\n"}', '{', '"s"');
  it('on random texts of envelopes, junk, blank lines and every line ending', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (pieces) => {
        const file = join(dir, `t${n++}.jsonl`);
        writeFileSync(file, pieces.join(''));
        expect(await collect(file)).toEqual(await byReadline(file));
      }),
      { numRuns: 300 },
    );
  });
});
