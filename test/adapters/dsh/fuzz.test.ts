import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../support/seeded-random.js';
import { runCli as run } from '../cli/support/run-cli.js';

/**
 * Damaged harness logs (bytes flipped, cut, inserted; in the compressed and the plain fixture) into `audit --json`,
 * `why --json` and `verify --json`: every run ends 0/1/2/3 with exactly one JSON object on stdout and nothing on
 * stderr, never a stack. `STEERLOG_FUZZ_DSH` raises the count (default 10 per fixture).
 */
const RUNS = Number(process.env.STEERLOG_FUZZ_DSH ?? 10);
const dir = fileURLToPath(new URL('../../../docs/examples/dsh', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-fuzz-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const damage = (bytes: Buffer, random: () => number): Buffer => {
  const b = Buffer.from(bytes);
  const at = Math.floor(random() * b.length);
  switch (Math.floor(random() * 4)) {
    case 0:
      b[at] = Math.floor(random() * 256);
      return b;
    case 1:
      return b.subarray(0, at);
    case 2:
      return Buffer.concat([b.subarray(0, at), Buffer.from([Math.floor(random() * 256)]), b.subarray(at)]);
    default:
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + Math.floor(random() * 40)))]);
  }
};

describe('damaged harness logs', () => {
  it.each(['aborted-child.jsonl.zst', 'harness/queued-steered.jsonl'])('%s: every run ends 0–3 with one JSON object', async (name) => {
    const original = readFileSync(join(dir, name));
    const random = seededRandom(name.length * 7919);
    const codes = new Set<number>();
    for (let i = 0; i < RUNS; i++) {
      const f = join(tmp, `${i}-${name.replace('/', '-')}`);
      writeFileSync(f, damage(original, random));
      for (const argv of [['audit', f, '--json'], ['why', f, 'R', '--json'], ['verify', f, '--json']]) {
        const r = await run(...argv);
        const where = `${argv[0]} run ${i}`;
        expect([0, 1, 2, 3], where).toContain(r.code);
        if (argv[0] === 'verify' && r.code === 3) {
          expect(r.stderr.trimEnd().split('\n'), where).toHaveLength(1);
          continue;
        }
        expect(r.stderr, where).toBe('');
        expect(r.stdout.trimEnd().split('\n'), where).toHaveLength(1);
        expect(typeof JSON.parse(r.stdout), where).toBe('object');
        if (argv[0] === 'audit') codes.add(r.code);
      }
    }
    // the damage is noticed: some runs are refused
    expect(codes.has(1)).toBe(true);
  });
});
