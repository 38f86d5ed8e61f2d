import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../../adapters/keys/file-key-store.js';
import { PostgresKeyStore } from '../../../adapters/keys/postgres-key-store.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { silentLogger } from '../../../runtime/logger.js';
import type { KeyStore } from '../../../runtime/ports/key-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { testKeys, testSigner } from '../../support/chained-session.js';
import { writeSecretSession } from '../../support/secret-session.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { runCli as run } from './support/run-cli.js';

// `steerlog erase --key` signs the new chain head after its session/erased event; without a key, on a session
// that has signed heads, the erasure record is an unsigned tail for `verify --pubkey` (docs/audit.md, Erasure).
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-erase-signed-'));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});

const { signer, publicKey, privateKey } = testSigner();
const pem = (name: string, text: string | Buffer): string => {
  const f = join(tmp, name);
  writeFileSync(f, text);
  return f;
};
const priv = pem('signing.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }));
const pub = pem('signing.pub.pem', publicKey.export({ type: 'spki', format: 'pem' }));
const otherPub = pem('other.pub.pem', testKeys().publicKey.export({ type: 'spki', format: 'pem' }));

interface Exported {
  seq: number;
  type: string;
  hash: string;
  data: Record<string, unknown>;
}
const backends: { name: string; enabled: boolean; setup: () => { spec: string; keys: KeyStore; keySpec: string } }[] = [
  {
    name: 'jsonl',
    enabled: true,
    setup: () => {
      const dir = mkdtempSync(join(tmp, 'store-'));
      const keyFile = join(dir, 'keys.json');
      return { spec: `jsonl:${dir}`, keys: new FileKeyStore(keyFile, { fsync: false }), keySpec: `file:${keyFile}` };
    },
  },
  {
    name: 'postgres',
    enabled: postgresAvailable,
    setup: () => {
      const schema = uniqueSchema('erase_signed');
      schemas.push(schema);
      const spec = `${PG_URL}?schema=${schema}`;
      return { spec, keys: new PostgresKeyStore({ connection: PG_URL, schema }), keySpec: spec };
    },
  },
];

const verify = async (spec: string, session: string, ...args: string[]) => {
  const r = await run('verify', '--store', spec, session, ...args, '--json');
  expect(r.stderr).toBe('');
  return { code: r.code, session: (JSON.parse(r.stdout) as { sessions: Record<string, unknown>[] }).sessions[0]! };
};
const eventsOf = async (spec: string, session: string): Promise<Exported[]> => {
  const r = await run('export', spec, session);
  expect(r.code).toBe(0);
  return r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Exported);
};
const heads = (events: readonly Exported[]) => events.filter((e) => e.type === 'chain/head');

describe.each(backends)('steerlog erase and signed heads ($name store)', ({ enabled, setup }) => {
  it.skipIf(!enabled)('erase --key: verify --pubkey passes, and the last signed head covers the session/erased event', async () => {
    const { spec, keys, keySpec } = setup();
    const store = await openStore(spec);
    await writeSecretSession(store, 's', { keys }, signer);
    await store.close();
    const before = await eventsOf(spec, 's');
    expect(before.at(-1)!.type).toBe('chain/head'); // the runtime's last checkpoint signed the head
    expect((await verify(spec, 's', '--pubkey', pub)).session).toMatchObject({ ok: true, signatures: { heads: heads(before).length, problem: null } });

    const erase = await run('erase', '--store', spec, '--keys', keySpec, '--session', 's', '--by', 'dpo:eve', '--key', priv, '--json');
    expect(erase.stderr).toBe('');
    expect(erase.code).toBe(0);
    const erased = (JSON.parse(erase.stdout) as { sessions: { seq: number }[] }).sessions[0]!.seq;
    expect(erased).toBe(before.length);

    const after = await eventsOf(spec, 's');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((e) => [e.seq, e.type])).toEqual([
      [erased, 'session/erased'],
      [erased + 1, 'chain/head'],
    ]);
    expect(after.at(-1)!.data).toMatchObject({ seq: erased, hash: after[erased]!.hash, keyId: signer.keyId });

    const v = await verify(spec, 's', '--pubkey', pub);
    expect(v.code).toBe(0);
    expect(v.session).toMatchObject({
      ok: true,
      status: 'verified',
      head: { seq: erased + 1, hash: after.at(-1)!.hash },
      signatures: { heads: heads(before).length + 1, lastSignedSeq: erased, problem: null },
    });
    const text = await run('verify', '--store', spec, 's', '--pubkey', pub);
    expect(text.stdout).toContain(`  signatures: ${heads(before).length + 1} signed heads, all valid; the last covers the whole log\n`);

    // the wrong public key: the first head is signed by a key that was not given
    const wrong = await verify(spec, 's', '--pubkey', otherPub);
    expect(wrong.code).toBe(1);
    expect(wrong.session).toMatchObject({ ok: false, status: 'verified', signatures: { problem: { kind: 'unknown-key', seq: heads(before)[0]!.seq, keyId: signer.keyId } } });
    const wrongText = await run('verify', '--store', spec, 's', '--pubkey', otherPub);
    expect(wrongText.code).toBe(1);
    expect(wrongText.stdout).toContain(`is signed by key ${signer.keyId}, which was not given`);
    await keys.close();
  });

  it.skipIf(!enabled)('erase without --key on a signed session: the chain verifies; verify --pubkey reports the session/erased event as an unsigned tail', async () => {
    const { spec, keys, keySpec } = setup();
    const store = await openStore(spec);
    await writeSecretSession(store, 'u', { keys }, signer);
    await store.close();
    const before = await eventsOf(spec, 'u');
    const lastSigned = (before.at(-1)!.data as { seq: number }).seq;

    const erase = await run('erase', '--store', spec, '--keys', keySpec, '--session', 'u', '--json');
    expect(erase.code).toBe(0);
    const erased = (JSON.parse(erase.stdout) as { sessions: { seq: number }[] }).sessions[0]!.seq;
    const after = await eventsOf(spec, 'u');
    expect(after.slice(before.length).map((e) => [e.seq, e.type])).toEqual([[erased, 'session/erased']]);

    expect((await run('verify', '--store', spec, 'u')).code).toBe(0); // the chain itself holds
    const v = await verify(spec, 'u', '--pubkey', pub);
    expect(v.code).toBe(1);
    expect(v.session).toMatchObject({
      ok: false,
      status: 'verified',
      signatures: { heads: heads(before).length, lastSignedSeq: lastSigned, problem: { kind: 'unsigned-tail', lastSignedSeq: lastSigned, events: 1 } },
    });
    const text = await run('verify', '--store', spec, 'u', '--pubkey', pub);
    expect(text.stdout).toContain(`  signatures: 1 event after the last signed head (which signs seq ${lastSigned}) are NOT covered`);

    // erase again with the key: nothing left to record, so nothing is appended or signed
    const again = await run('erase', '--store', spec, '--keys', keySpec, '--session', 'u', '--key', priv, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ destroyed: [], sessions: [{ session: 'u', keyIds: [], seq: null }] });
    expect(await eventsOf(spec, 'u')).toEqual(after);
    // the runtime, resumed with the key, signs a head over it at its next full checkpoint
    const resumed = await openStore(spec);
    const runtime = createRuntime({ store: resumed, model: new ScriptedModel([]), signer, encryption: { keys }, logger: silentLogger, writeBatchDelayMs: 0 });
    await (await runtime.resume('u')).checkpoint();
    await resumed.close();
    expect((await eventsOf(spec, 'u')).slice(after.length).map((e) => [e.seq, e.type, e.data.seq])).toEqual([[erased + 1, 'chain/head', erased]]);
    expect(await verify(spec, 'u', '--pubkey', pub)).toMatchObject({ code: 0, session: { ok: true, signatures: { lastSignedSeq: erased, problem: null } } });
    await keys.close();
  });
});
