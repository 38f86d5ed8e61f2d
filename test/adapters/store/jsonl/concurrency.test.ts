import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useCompiledStore } from './support/compile-store.js';
import { verifyLog } from './support/verify.js';

/**
 * Two processes on one directory race for every revision of one stream with the same expected revision:
 * exactly one of them wins each revision, the loser gets a ConcurrencyError, and the file is valid.
 */
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'support/race-child.mjs');
const ROUNDS = 150;

const compiled = useCompiledStore();

interface Summary {
  readonly wins: number[];
  readonly losses: number[];
  readonly other: string[];
}

const start = (dir: string, durability: string, who: string, stream: string): { child: ChildProcessWithoutNullStreams; ready: Promise<void>; done: Promise<Summary> } => {
  const child = spawn(process.execPath, [CHILD, compiled.entry(), dir, durability, who, String(ROUNDS), stream]);
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<Summary>((resolve, reject) =>
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${who} exited ${code}: ${err}`));
      resolve(JSON.parse(out.slice('ready\n'.length)) as Summary);
    }),
  );
  return { child, ready, done };
};

describe('two processes racing on one stream', () => {
  for (const durability of ['fsync', 'group', 'none']) {
    it(`exactly one wins each revision (${durability})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-race-'));
      compiled.track(dir);
      const stream = 'race/inbox';
      const a = start(dir, durability, 'a', stream);
      const b = start(dir, durability, 'b', stream);
      await Promise.all([a.ready, b.ready]);
      a.child.stdin.write('go\n');
      b.child.stdin.write('go\n');
      const [ra, rb] = await Promise.all([a.done, b.done]);
      expect(ra.other).toEqual([]);
      expect(rb.other).toEqual([]);
      for (let r = 0; r < ROUNDS; r++) {
        const winners = [ra.wins.includes(r) ? 'a' : '', rb.wins.includes(r) ? 'b' : ''].filter(Boolean);
        expect(winners, `revision ${r}`).toHaveLength(1);
      }
      expect(ra.wins.length + ra.losses.length).toBe(ROUNDS);
      expect(rb.wins.length + rb.losses.length).toBe(ROUNDS);
      const log = await verifyLog(dir, [stream], new Set());
      const events = log.get(stream)!;
      expect(events.map((e) => e.id)).toEqual(
        Array.from({ length: ROUNDS }, (_, r) => (ra.wins.includes(r) ? `a-${r}` : `b-${r}`)),
      );
    });
  }
});
