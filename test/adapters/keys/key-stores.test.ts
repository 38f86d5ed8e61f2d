import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../../adapters/keys/file-key-store.js';
import { MemoryKeyStore } from '../../../adapters/keys/memory-key-store.js';
import { openKeyStore, defaultKeyStoreSpec } from '../../../adapters/keys/open-key-store.js';
import { PostgresKeyStore } from '../../../adapters/keys/postgres-key-store.js';
import { isKeyStoreError, type KeyStore } from '../../../runtime/ports/key-store.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../store/postgres/pg-test-support.js';

const tmp = mkdtempSync(join(tmpdir(), 'steerlog-keys-'));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});
const key = (n: number) => new Uint8Array(32).fill(n);

const stores: { name: string; enabled: boolean; make: () => KeyStore }[] = [
  { name: 'memory', enabled: true, make: () => new MemoryKeyStore() },
  { name: 'file', enabled: true, make: () => new FileKeyStore(join(mkdtempSync(join(tmp, 'f-')), 'keys.json'), { fsync: false }) },
  {
    name: 'postgres',
    enabled: postgresAvailable,
    make: () => {
      const schema = uniqueSchema('keys');
      schemas.push(schema);
      return new PostgresKeyStore({ connection: PG_URL, schema, vacuum: false });
    },
  },
];

describe.each(stores)('the $name key store', ({ enabled, make }) => {
  it.skipIf(!enabled)('puts, gets, refuses a known id, destroys by session or actor into tombstones, lists by selector', async () => {
    const ks = make();
    await ks.put({ keyId: 'k1', session: 's1', createdAt: 1, key: key(1) });
    await ks.put({ keyId: 'k2', session: 's1', actor: 'ana', createdAt: 2, key: key(2) });
    await ks.put({ keyId: 'k3', session: 's2', actor: 'ana', createdAt: 3, key: key(3) });
    await ks.put({ keyId: 'k4', session: 's2', createdAt: 4, key: key(4) });
    await expect(ks.put({ keyId: 'k1', session: 's9', createdAt: 9, key: key(9) })).rejects.toSatisfy((e) => isKeyStoreError(e) && e.code === 'key-exists');
    const got = await ks.get(['k2', 'nope']);
    expect([...got.keys()]).toEqual(['k2']);
    expect(got.get('k2')).toMatchObject({ state: 'active', keyId: 'k2', session: 's1', actor: 'ana' });
    expect(Buffer.from((got.get('k2') as { key: Uint8Array }).key)).toEqual(Buffer.from(key(2)));

    expect((await ks.destroy({ actor: 'ana' }, 100)).map((k) => k.keyId).sort()).toEqual(['k2', 'k3']);
    expect(await ks.destroy({ actor: 'ana' }, 101)).toEqual([]);
    expect(await ks.destroy({ session: 's1' }, 102)).toEqual([{ keyId: 'k1', session: 's1' }]);
    const after = await ks.get(['k1', 'k2', 'k3', 'k4']);
    expect(after.get('k1')).toEqual({ state: 'destroyed', keyId: 'k1', session: 's1', destroyedAt: 102 });
    expect(after.get('k2')).toEqual({ state: 'destroyed', keyId: 'k2', session: 's1', actor: 'ana', destroyedAt: 100 });
    expect(after.get('k4')?.state).toBe('active');
    expect((await ks.keysOf({ session: 's2' })).map((k) => [k.keyId, k.state])).toEqual([['k3', 'destroyed'], ['k4', 'active']]);
    // a destroyed id stays taken
    await expect(ks.put({ keyId: 'k2', session: 's1', createdAt: 5, key: key(5) })).rejects.toSatisfy((e) => isKeyStoreError(e) && e.code === 'key-exists');
    await ks.close();
  });
});

describe('FileKeyStore', () => {
  it('rewrites atomically (mode 0600, no temp or lock file left), keeps no bytes of a destroyed key, and serializes writers', async () => {
    const file = join(mkdtempSync(join(tmp, 'a-')), 'keys.json');
    const a = new FileKeyStore(file);
    const b = new FileKeyStore(file);
    // two stores (two processes, as far as the file is concerned) writing at once: the lock keeps both writes
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).put({ keyId: `k${i}`, session: 's', createdAt: i, key: key(i + 1) })));
    expect((await a.keysOf({ session: 's' })).length).toBe(6);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(Buffer.from(key(3)).toString('base64'));
    await a.destroy({ session: 's' }, 7);
    const text = readFileSync(file, 'utf8');
    for (let i = 1; i <= 6; i++) expect(text).not.toContain(Buffer.from(key(i)).toString('base64'));
    expect(JSON.parse(text)).toMatchObject({ format: 'steerlog-keys', version: 1 });
    expect(readdirSync(join(file, '..'))).toEqual(['keys.json']);
  });

  it('read-only: refuses writes, a missing file holds no keys; a damaged file is a typed error', async () => {
    const dir = mkdtempSync(join(tmp, 'r-'));
    const ro = new FileKeyStore(join(dir, 'keys.json'), { readOnly: true });
    expect((await ro.get(['x'])).size).toBe(0);
    await expect(ro.put({ keyId: 'x', session: 's', createdAt: 0, key: key(1) })).rejects.toSatisfy((e) => isKeyStoreError(e) && e.code === 'key-store-read-only');
    expect(existsSync(join(dir, 'keys.json'))).toBe(false);
    writeFileSync(join(dir, 'keys.json'), '{"format":"other"}');
    await expect(ro.get(['x'])).rejects.toSatisfy((e) => isKeyStoreError(e) && e.code === 'key-store-corrupt');
  });

  it('a stale lock file makes a writer give up with key-store-unavailable, naming the lock', async () => {
    const dir = mkdtempSync(join(tmp, 'l-'));
    writeFileSync(join(dir, 'keys.json.lock'), '');
    const ks = new FileKeyStore(join(dir, 'keys.json'), { lockTimeoutMs: 20, fsync: false });
    await expect(ks.put({ keyId: 'x', session: 's', createdAt: 0, key: key(1) })).rejects.toSatisfy(
      (e) => isKeyStoreError(e) && e.code === 'key-store-unavailable' && e.message.includes('keys.json.lock'),
    );
  });
});

describe('key store specs', () => {
  it('defaults follow the store; bad specs are refused', async () => {
    expect(defaultKeyStoreSpec('jsonl:./.steerlog')).toBe('file:.steerlog/keys.json');
    expect(defaultKeyStoreSpec('postgres://h/db?schema=x')).toBe('postgres://h/db?schema=x');
    expect(defaultKeyStoreSpec('esdb://h')).toBeNull();
    expect(await openKeyStore('file:/x/keys.json')).toBeInstanceOf(FileKeyStore);
    await expect(openKeyStore('bogus')).rejects.toMatchObject({ code: 'invalid-store-spec' });
  });
});
