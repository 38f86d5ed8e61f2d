import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import type { LogEvent } from '../../../domain/events.js';
import { asNewEvents, chainedSession, testSigner } from '../../support/chained-session.js';

const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'steerlog-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const writeLog = (name: string, events: readonly unknown[]): string => {
  const f = join(dir, name);
  writeFileSync(f, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return f;
};

describe('steerlog verify', () => {
  it('a chained log file verifies (exit 0); --head prints seq:hash; the same log with one data field changed exits 1 naming the seq', async () => {
    const events = await chainedSession('cli-file');
    const good = writeLog('good.jsonl', events);
    const ok = await run('verify', good);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`session cli-file: ${events.length} events, chain verified (head seq ${events.length - 1} ${events.at(-1)!.hash})\n`);
    expect((await run('verify', good, '--head')).stdout).toBe(`cli-file ${events.length - 1}:${events.at(-1)!.hash}\n`);

    const forged = events.map((e) => (e.seq === 5 ? { ...e, data: { ...(e.data as object), content: [{ type: 'text', text: 'wipe it' }] } } : e));
    const bad = await run('verify', writeLog('bad.jsonl', forged), '--json');
    expect(bad.code).toBe(1);
    const out = JSON.parse(bad.stdout);
    expect(out).toMatchObject({ format: 'steerlog-verify', version: 1, ok: false, sessions: [{ stream: 'cli-file', status: 'broken', break: { kind: 'hash-mismatch', seq: 5, found: events[5]!.hash } }] });
    expect((await run('verify', writeLog('bad2.jsonl', forged))).stdout).toContain('first broken link at seq 5: hash mismatch');
  });

  it('a log written before the chain is "unchained", never verified (exit 1); audit still calls it valid and says so', async () => {
    const r = await run('verify', join(examples, 'queue-steer-context.jsonl'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('UNCHAINED');
    const a = await run('audit', join(examples, 'queue-steer-context.jsonl'), '--json');
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout).chain).toMatchObject({ status: 'unchained', chained: 0, unchained: 29 });
  });

  it('audit of a tampered but schema-valid log exits 1 because of the chain', async () => {
    const events = await chainedSession('cli-audit');
    const forged = events.map((e) => (e.seq === 1 ? { ...e, metadata: { actor: 'user:mallory' } } : e));
    const r = await run('audit', writeLog('audit-tampered.jsonl', forged));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('first broken link at seq 1');
  });

  it('--store with session ids or --all; --pubkey checks signatures; exit 2 for usage, 3 for an unreadable store or file', async () => {
    const { signer, publicKey } = testSigner();
    const pub = join(dir, 'pub.pem');
    writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
    const storeDir = join(dir, 'store');
    const store = await openJsonlEventStore(storeDir, { durability: 'none' });
    const signed: LogEvent[] = [...(await chainedSession('signed-a', { signer }))];
    await store.append('signed-a', asNewEvents(signed), 'no_stream');
    await store.append('unsigned-b', asNewEvents(await chainedSession('unsigned-b')), 'no_stream');
    await store.close();
    const spec = `jsonl:${storeDir}`;
    expect((await run('verify', '--store', spec, 'signed-a', '--pubkey', pub)).code).toBe(0);
    const all = await run('verify', '--store', spec, '--all', '--pubkey', pub);
    expect(all.code).toBe(1);
    expect(all.stdout).toContain('session signed-a');
    expect(all.stdout).toContain('session unsigned-b');
    expect(all.stdout).toContain('NO valid signed head');
    expect((await run('verify', '--store', spec, '--all')).code).toBe(0);
    const anchored = await run('verify', '--store', spec, 'signed-a', '--anchor', `${signed.length + 3}:${'a'.repeat(64)}`);
    expect(anchored.code).toBe(1);
    expect(anchored.stdout).toContain('MISSING');

    expect((await run('verify')).code).toBe(2);
    expect((await run('verify', '--store', spec)).code).toBe(2);
    expect((await run('verify', '--store', spec, 'x', '--anchor', 'nope')).code).toBe(2);
    expect((await run('verify', '--store', spec, 'absent-session')).code).toBe(2);
    expect((await run('verify', join(dir, 'no-such-file.jsonl'))).code).toBe(3);
    expect((await run('verify', '--store', 'redis://nowhere', 'x')).code).toBe(2);
  });
});
