import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ed25519Verifier } from '../../../formats/chain/ed25519.js';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { fileEnvelopes } from '../../../audit/log-sources.js';
import { verifyFile, verifyFileKey, type VerifyFileOptions } from '../../../audit/verify-file.js';
import { sessionLog } from '../../../bench/support/session-log.js';
import { chainInputOf, GENESIS_HASH } from '../../../domain/event-chain.js';
import { sha256ChainHash } from '../../../runtime/chain-hash.js';
import { chainedSession, testSigner } from '../../support/chained-session.js';

// `verify` of a long file runs on several threads, one byte range each (verify-file.ts): its answer must be the one
// verifier's reading the whole file, on intact, tampered and oddly formatted files, with keys and anchors, and when a
// worker cannot run. The workers run the compiled entry (dist/, built by `npm ci`), as the CLI does.
const dir = mkdtempSync(join(tmpdir(), 'verify-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ENTRY = new URL('../../../dist/audit/verify-segment-entry.js', import.meta.url);
/** Cut whatever the size, into `segments` ranges; a worker that fails fails the test (unless `onWorkerFailure` is replaced). */
const cut = (segments: number, ranges?: (n: number) => void): VerifyFileOptions => ({
  env: { STEERLOG_CHAIN_THREAD: '1' },
  entry: ENTRY,
  segments,
  minSegmentBytes: 1,
  onWorkerFailure: (e) => {
    throw new Error(`a worker failed: ${String(e)}`);
  },
  ...(ranges ? { onRanges: ranges } : {}),
});

const chainedLines = (events: number): string[] => {
  let prev = GENESIS_HASH;
  return [...sessionLog(events, 20, 'in-ranges')].map((e) => {
    const hash = sha256ChainHash(chainInputOf('in-ranges', e, prev));
    prev = hash;
    return JSON.stringify({ ...e, hash });
  });
};

const variants = (lines: readonly string[]): Record<string, string> => {
  const at = (i: number, f: (l: string) => string) => lines.map((l, k) => (k === i ? f(l) : l));
  return {
    whole: `${lines.join('\n')}\n`,
    'no final newline': lines.join('\n'),
    crlf: `${lines.join('\r\n')}\r\n`,
    'tampered early': `${at(7, (l) => l.replace('"text":"message', '"text":"massage')).join('\n')}\n`,
    'tampered late': `${at(lines.length - 30, (l) => l.replace(/"time":(\d+)/, (_m, t: string) => `"time":${Number(t) + 1}`)).join('\n')}\n`,
    'tampered in the middle': `${at(Math.floor(lines.length / 2), (l) => l.replace(/"hash":"[0-9a-f]{64}"/, `"hash":"${'e'.repeat(64)}"`)).join('\n')}\n`,
    'a hash stripped near the end': `${at(lines.length - 5, (l) => l.replace(/,"hash":"[0-9a-f]{64}"/, '')).join('\n')}\n`,
    'blank lines everywhere': `\n${lines.join('\n\n')}\n\n`,
    'a line that is not JSON': `${at(lines.length - 100, () => '{"seq":1,').join('\n')}\n`,
    'a carriage return inside lines': `${lines.map((l, k) => (k % 97 === 3 ? l.replace(',"type"', ',\r"type"') : l)).join('\n')}\n`,
    'events out of order': `${[...lines.slice(0, 300), lines[301]!, lines[300]!, ...lines.slice(302)].join('\n')}\n`,
    'an event deleted': `${[...lines.slice(0, 600), ...lines.slice(601)].join('\n')}\n`,
    'unchained prefix': `${lines.map((l, k) => (k < 50 ? l.replace(/,"hash":"[0-9a-f]{64}"/, '') : l)).join('\n')}\n`,
    'nothing chained': `${lines.map((l) => l.replace(/,"hash":"[0-9a-f]{64}"/, '')).join('\n')}\n`,
    'first line unreadable': `oops\n${lines.join('\n')}\n`,
  };
};

describe('verify of a file in byte ranges, on worker threads = one verifier over the whole file', () => {
  const lines = chainedLines(1200);
  // every variant in 3 ranges; the whole and the tampered files also in 2 and 5 (each range past the first is a worker)
  const rangesFor = (name: string): number[] => (name === 'whole' || name.startsWith('tampered') ? [2, 3, 5] : [3]);
  it.each(Object.entries(variants(lines)))('%s', async (name, text) => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(file, text);
    const expected = await verifySession(null, fileEnvelopes(file));
    for (const segments of rangesFor(name)) {
      let ranges = 0;
      expect(await verifyFile(file, cut(segments, (n) => (ranges = n)))).toEqual(expected);
      // cut wherever a line can carry a cut (a chained event); on one thread when none can, or the first event cannot be read
      expect(ranges).toBe(name === 'nothing chained' || name === 'first line unreadable' ? 1 : segments);
    }
  });

  it('signed heads and anchors: the same verdict, the same signature findings', async () => {
    const { signer, publicKey } = testSigner();
    const events = await chainedSession('signed-ranges', { signer });
    const file = join(dir, 'signed.jsonl');
    writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const verifiers = [ed25519Verifier(pem)];
    for (const anchor of [undefined, { seq: 10, hash: events[10]!.hash! }, { seq: 10, hash: 'a'.repeat(64) }, { seq: 999, hash: 'b'.repeat(64) }]) {
      const expected = await verifySession(null, fileEnvelopes(file), { verifiers, ...(anchor ? { anchor } : {}) });
      expect(expected.signatures!.heads).toBeGreaterThan(2);
      for (const segments of [2, 4]) {
        expect(await verifyFile(file, { ...cut(segments), publicKeys: [verifyFileKey(pem, 'key.pem')], ...(anchor ? { anchor } : {}) })).toEqual(expected);
      }
    }
  });

  it('a worker that cannot run costs time, not the answer: its range is verified on this thread', async () => {
    const file = join(dir, 'fallback.jsonl');
    writeFileSync(file, variants(lines)['tampered late']!);
    const broken = join(dir, 'broken-entry.mjs');
    writeFileSync(broken, 'throw new Error("no worker here");\n');
    const expected = await verifySession(null, fileEnvelopes(file));
    expect(expected.status).toBe('broken');
    const failures: unknown[] = [];
    expect(await verifyFile(file, { ...cut(3), entry: pathToFileURL(broken), onWorkerFailure: (e) => void failures.push(e) })).toEqual(expected);
    expect(failures.length).toBeGreaterThan(0);
  });

  it('progress counts every event, on this thread and on the workers', async () => {
    const file = join(dir, 'progress.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    let ticks = 0;
    expect((await verifyFile(file, { ...cut(3), onEvent: () => void ticks++ })).events).toBe(lines.length);
    expect(ticks).toBe(lines.length);
  });

  it('the CLI answers the same with the ranges on threads and on one thread', async () => {
    const file = join(dir, 'cli.jsonl');
    writeFileSync(file, variants(lines)['tampered in the middle']!);
    const cli = fileURLToPath(new URL('../../../bin/steerlog.js', import.meta.url));
    const run = async (thread: string) => {
      try {
        await promisify(execFile)(process.execPath, [cli, 'verify', file, '--json'], { env: { ...process.env, STEERLOG_CHAIN_THREAD: thread } });
        throw new Error('verify of a tampered log exited 0');
      } catch (e) {
        const { code, stdout } = e as { code: number; stdout: string };
        expect(code).toBe(1);
        return JSON.parse(stdout) as unknown;
      }
    };
    expect(await run('1')).toEqual(await run('0'));
  });
});
