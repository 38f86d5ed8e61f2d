import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { asNewEvents, chainedSession, testSigner } from '../../support/chained-session.js';
import { runCli as run } from './support/run-cli.js';

// `verify --pubkey` parses each public key once in the process: the command checks it and keeps its verifier, which
// verifyFile uses on this thread (its workers, when a long file has them, are sent the key's text and parse it once
// each). Counted here through node:crypto's createPublicKey, the one place a PEM public key is parsed.
const parsed = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    createPublicKey: (...args: Parameters<typeof crypto.createPublicKey>) => {
      parsed.count++;
      return crypto.createPublicKey(...args);
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), 'steerlog-verify-pubkey-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  parsed.count = 0;
});

const pemFile = (name: string, key: { export(o: { type: 'spki'; format: 'pem' }): string | Buffer }): string => {
  const f = join(dir, name);
  writeFileSync(f, key.export({ type: 'spki', format: 'pem' }));
  return f;
};

describe('steerlog verify --pubkey', () => {
  it('parses each key once: a log file and a store, one key or two; the signatures are checked all the same', async () => {
    const { signer, publicKey } = testSigner();
    const other = testSigner().publicKey;
    const pub = pemFile('pub.pem', publicKey);
    const otherPub = pemFile('other.pem', other);
    const events = await chainedSession('signed-once', { signer });
    const log = join(dir, 'signed.jsonl');
    writeFileSync(log, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const storeDir = join(dir, 'store');
    const store = await openJsonlEventStore(storeDir, { durability: 'none' });
    await store.append('signed-once', asNewEvents(events), 'no_stream');
    await store.close();

    for (const [keys, count] of [[pub, 1], [`${otherPub},${pub}`, 2]] as const) {
      for (const source of [[log], ['--store', `jsonl:${storeDir}`, 'signed-once']]) {
        parsed.count = 0;
        const r = await run('verify', ...source, '--pubkey', keys, '--json');
        expect(r.code, r.stderr).toBe(0);
        const [session] = (JSON.parse(r.stdout) as { sessions: { status: string; signatures: { heads: number; problem: unknown } }[] }).sessions;
        expect(session!.status).toBe('verified');
        expect(session!.signatures.heads).toBeGreaterThan(0);
        expect(session!.signatures.problem).toBeNull();
        expect(parsed.count, `${source[0]} with ${keys}`).toBe(count);
      }
    }
    // a key that did not sign: the same finding as before, with the key parsed once
    parsed.count = 0;
    const unsigned = await run('verify', log, '--pubkey', otherPub, '--json');
    expect(unsigned.code).toBe(1);
    expect(parsed.count).toBe(1);
  });

  it('a key that is not an Ed25519 public key, or no key file: exit 2 naming the file, as before', async () => {
    const log = join(dir, 'plain.jsonl');
    writeFileSync(log, `${(await chainedSession('plain')).map((e) => JSON.stringify(e)).join('\n')}\n`);
    const x25519 = pemFile('x25519.pem', generateKeyPairSync('x25519').publicKey);
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'not a key\n');
    for (const bad of [x25519, notPem, join(dir, 'missing.pem')]) {
      const r = await run('verify', log, '--pubkey', bad);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain(`steerlog verify: ${bad}: `);
    }
  });
});
