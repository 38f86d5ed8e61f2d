import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { streamFileName } from '../../../adapters/store/jsonl/index.js';
import { applyDamage, copyStore, scratchParent, snapshotStore, type Damage, type SeededStore } from '../store/jsonl/support/damage.js';
import { seededRandom } from '../../support/seeded-random.js';
import { mutateLog as mutate } from './support/mutate-log.js';

/**
 * Done-when fuzz: mutated envelope logs into `audit <file>`, damaged JSONL store directories into
 * `audit --store`, `audit <stream file>` and `store check` — in-process calls of the CLI entry, plus a few
 * spawned runs of bin/steerlog.js. Every run ends 0/1/2/3 with one line on stderr or exactly one JSON object
 * on stdout, never a stack trace; reading never changes a byte; and a store that opens without error never
 * shows fewer committed events than it holds (except the last commit, when the damage looks exactly like a crash
 * in it). `STEERLOG_FUZZ_LOGS` / `STEERLOG_FUZZ_STORES` raise the counts (defaults 1000 / 200).
 */
const LOGS = Number(process.env.STEERLOG_FUZZ_LOGS ?? 1000);
const STORES = Number(process.env.STEERLOG_FUZZ_STORES ?? 200);



/** A JSON run: exit 0–3, exactly one JSON object on stdout, nothing on stderr, no stack. */
const expectJsonRun = (r: { code: number; stdout: string; stderr: string }, where: string): Record<string, unknown> => {
  expect([0, 1, 2, 3], where).toContain(r.code);
  expect(r.stderr, where).toBe('');
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines, where).toHaveLength(1);
  const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
  expect(typeof parsed, where).toBe('object');
  if (r.code === 3) expect(parsed, where).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
  return parsed;
};

/** A human run: exit 0–3; a failure is one line on stderr; never a stack frame. */
const expectPlainRun = (r: { code: number; stdout: string; stderr: string }, where: string): void => {
  expect([0, 1, 2, 3], where).toContain(r.code);
  expect(r.stdout + r.stderr, where).not.toMatch(/\n\s+at .*[(:]\d+/);
  if (r.code === 3) expect(r.stderr.trimEnd().split('\n'), where).toHaveLength(1);
};

let parent: string;
let seed: SeededStore;
let logLines: string[];
let lastCommit = 0;
const SESSION = 'fuzz-1';

beforeAll(async () => {
  parent = scratchParent('steerlog-fuzz-');
  const dir = join(parent, 'seed');
  expect((await run('demo', '--store', `jsonl:${dir}`, '--session', SESSION, '--json')).code).toBe(0);
  const exported = await run('export', `jsonl:${dir}`, SESSION);
  logLines = exported.stdout.trimEnd().split('\n');
  const file = `streams/${streamFileName(SESSION).fileName}`;
  const gs = readFileSync(join(dir, file), 'utf8').trimEnd().split('\n').slice(1).map((l) => (JSON.parse(l) as { e: { g: number } }).e.g);
  lastCommit = gs.filter((g) => g === gs.at(-1)).length;
  seed = { dir, committed: [], lastCommit: [], files: ['global.idx', file] };
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));

describe('fuzz: every run of the CLI ends 0/1/2/3 with one line or one JSON object', () => {
  it(`${LOGS} mutated logs into audit <file>`, async () => {
    const random = seededRandom(11);
    const codes = [0, 0, 0, 0];
    for (let k = 0; k < LOGS; k++) {
      const file = join(parent, `log-${k % 16}.jsonl`);
      writeFileSync(file, mutate(logLines, random));
      const json = k % 4 !== 0;
      const r = json ? await run('audit', file, '--json') : await run('audit', file);
      if (json) {
        const report = expectJsonRun(r, `log ${k}`);
        if (r.code === 1) expect((report.errors as { message: string }[])[0]!.message, `log ${k}`).toMatch(/^seq \d+/);
      } else expectPlainRun(r, `log ${k}`);
      codes[r.code]!++;
    }
    expect(codes[0]! + codes[1]!).toBe(LOGS);
    expect(codes[1]).toBeGreaterThan(LOGS / 2);
  });

  it(`${STORES} damaged JSONL store directories into audit --store, audit <stream file> and store check`, async () => {
    const random = seededRandom(23);
    const tally = { refused: 0, full: 0, crashShaped: 0 };
    for (let k = 0; k < STORES; k++) {
      const file = seed.files[Math.floor(random() * seed.files.length)]!;
      const size = readFileSync(join(seed.dir, file)).length;
      const at = Math.floor(random() * size);
      const damage: Damage = random() < 0.5 ? { kind: 'truncate', file, at } : { kind: 'flip', file, at, xor: 1 + Math.floor(random() * 255) };
      const dir = copyStore(seed, parent);
      applyDamage(dir, damage);
      const before = snapshotStore(dir);
      const where = `store ${k}: ${damage.kind} ${file} at ${at}`;
      const audit = await run('audit', '--store', `jsonl:${dir}`, SESSION, '--json');
      const report = expectJsonRun(audit, where);
      if (audit.code === 0 || audit.code === 1) {
        // opened without error: nothing committed may be missing (the crash-shaped last commit aside)
        const events = report.events as number;
        if (audit.code === 0) expect([logLines.length, logLines.length - lastCommit], where).toContain(events);
        if (events === logLines.length) tally.full++;
        else tally.crashShaped++;
      } else tally.refused++;
      expectJsonRun(await run('audit', join(dir, 'streams', streamFileName(SESSION).fileName), '--json'), `${where} (stream file)`);
      const check = await run('store', 'check', `jsonl:${dir}`, '--json');
      expectJsonRun(check, `${where} (store check)`);
      if (audit.code === 3) expect(check.code, `${where}: check sees what audit refused`).toBe(1);
      expectPlainRun(await run('store', 'check', `jsonl:${dir}`), `${where} (store check, plain)`);
      expect(snapshotStore(dir), `${where}: reading never writes`).toEqual(before);
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(`fuzz stores: ${JSON.stringify(tally)}`);
    // Almost every damage is refused: every byte of the index and of a stream file is under a checksum or a format check.
    expect(tally.refused).toBeGreaterThan(STORES / 2);
    expect(tally.refused + tally.full + tally.crashShaped).toBe(STORES);
  });

});
