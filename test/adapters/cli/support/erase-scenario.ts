import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../../../adapters/keys/file-key-store.js';
import { PostgresKeyStore } from '../../../../adapters/keys/postgres-key-store.js';
import { openStore } from '../../../../adapters/store/open-store.js';
import type { KeyStore } from '../../../../runtime/ports/key-store.js';
import { SECRETS, writeSecretSession } from '../../../support/secret-session.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../../store/postgres/pg-test-support.js';
import { runCli as run } from './run-cli.js';

/** Where the scenario keeps its stores and exports (removed after the file). */
export const tmp = mkdtempSync(join(tmpdir(), 'steerlog-erase-'));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});

const ajv = new Ajv({ allErrors: true, strict: false });
const schemaOf = (file: string) => {
  const { $schema: _s, ...rest } = JSON.parse(readFileSync(fileURLToPath(new URL(`../../../../docs/schemas/${file}`, import.meta.url)), 'utf8')) as Record<string, unknown>;
  return ajv.compile(rest);
};
const valid = (file: string, value: unknown) => {
  const v = schemaOf(file);
  expect(v(value) ? [] : v.errors).toEqual([]);
};

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)]));
const dirBytes = (dir: string): Buffer => Buffer.concat(filesUnder(dir).map((f) => readFileSync(f)));

/** Every row of every table of a schema, as text, plus each table's heap file bytes (what VACUUM leaves on disk). */
const schemaDump = async (schema: string): Promise<{ text: string; heap: Buffer }> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ t: string }>(`SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = $1`, [schema]);
    let text = '';
    const heaps: Buffer[] = [];
    // dirty pages reach the table files
    await client.query('CHECKPOINT');
    for (const { t } of tables) {
      text += (await client.query<{ r: string }>(`SELECT x::text AS r FROM ${t} x`)).rows.map((r) => r.r).join('\n');
      const { rows } = await client.query<{ b: Buffer }>(`SELECT pg_read_binary_file(pg_relation_filepath($1::regclass)) AS b`, [t]);
      heaps.push(rows[0]!.b);
    }
    return { text, heap: Buffer.concat(heaps) };
  } finally {
    await client.end();
  }
};

interface Backend {
  readonly name: string;
  readonly enabled: boolean;
  setup(): Promise<{ spec: string; keys: KeyStore; keySpec: string; stored(): Promise<{ text: string; bytes: Buffer }> }>;
}

const backends: Backend[] = [
  {
    name: 'jsonl',
    enabled: true,
    setup: async () => {
      const dir = mkdtempSync(join(tmp, 'store-'));
      const keyFile = join(dir, 'keys.json');
      return {
        spec: `jsonl:${dir}`,
        keys: new FileKeyStore(keyFile, { fsync: false }),
        keySpec: `file:${keyFile}`,
        stored: async () => {
          const bytes = dirBytes(dir);
          return { text: bytes.toString('utf8'), bytes };
        },
      };
    },
  },
  {
    name: 'postgres',
    enabled: postgresAvailable,
    setup: async () => {
      const schema = uniqueSchema('erase');
      schemas.push(schema);
      const spec = `${PG_URL}?schema=${schema}`;
      return {
        spec,
        keys: new PostgresKeyStore({ connection: PG_URL, schema }),
        keySpec: spec,
        stored: async () => {
          const { text, heap } = await schemaDump(schema);
          return { text, bytes: Buffer.concat([Buffer.from(text), heap]) };
        },
      };
    },
  },
];

/** The audit without what may change with erasure: the content part, the event count and the chain head. */
const structure = (audit: Record<string, unknown>) => {
  const { content: _c, events: _e, chain: _h, times: _t, actions, ...rest } = audit;
  // the erasure is itself an action (who erased, when): the rest of the list is the same before and after
  return { ...rest, actions: (actions as { kind: string }[]).filter((a) => a.kind !== 'erased') };
};

/** The scenario, for one backend (test/adapters/cli/erase.postgres.test.ts runs it on PostgreSQL). */
export const eraseScenario = (name: 'jsonl' | 'postgres') => {
  const backend = backends.find((b) => b.name === name)!;
  describe(`steerlog erase on the ${name} store`, () => {
  it.skipIf(!backend.enabled)('no plaintext stored; erase destroys the keys, records who and what; verify, audit and why still work with [erased]', async () => {
    const { spec, keys, keySpec, stored } = await backend.setup();
    const store = await openStore(spec);
    await writeSecretSession(store, 's', { keys });
    await store.close();
    // a projection that keeps message text folds the stored form: its checkpoint holds no plaintext either
    if (backend.name === 'jsonl') expect((await run('project', 'test/support/content-projection.ts', '--store', spec)).code).toBe(0);

    const before = await stored();
    for (const secret of Object.values(SECRETS)) expect(before.text).not.toContain(secret);
    const keyIds = (await keys.keysOf({ session: 's' })).map((k) => k.keyId);
    const keyBytes = [...(await keys.get(keyIds)).values()].map((k) => (k.state === 'active' ? Buffer.from(k.key) : Buffer.alloc(0)));
    expect(keyBytes).toHaveLength(3);
    for (const b of keyBytes) expect(before.bytes.includes(b) || before.text.includes(b.toString('base64'))).toBe(true);

    const audit0 = await run('audit', '--store', spec, 's', '--keys', keySpec, '--json');
    expect(audit0.code).toBe(0);
    const a0 = JSON.parse(audit0.stdout) as Record<string, unknown>;
    valid('audit.schema.json', a0);
    expect(a0.content).toMatchObject({ readable: 10, erased: 0, unavailable: 0, erasures: [] });
    const whyBefore = new Map<string, Record<string, unknown>>();
    for (const id of ['msg-prompt', 'msg-queued', 'call-1']) {
      whyBefore.set(id, JSON.parse((await run('why', '--store', spec, 's', id, '--keys', keySpec, '--json')).stdout) as Record<string, unknown>);
    }
    expect(whyBefore.get('msg-prompt')!.content).toMatchObject({ state: 'readable', text: SECRETS.prompt });
    expect(whyBefore.get('call-1')!.content).toMatchObject({ state: 'readable', text: JSON.stringify({ q: SECRETS.args }) });

    const erase = await run('erase', '--store', spec, '--keys', keySpec, '--session', 's', '--by', 'dpo:eve', '--json');
    expect(erase.stderr).toBe('');
    expect(erase.code).toBe(0);
    const e = JSON.parse(erase.stdout) as { destroyed: string[]; sessions: { seq: number }[] };
    valid('erase.schema.json', e);
    expect(e).toMatchObject({ scope: 'session', subject: 's', by: 'dpo:eve', alreadyDestroyed: [], sessions: [{ session: 's', missing: false }] });
    expect([...e.destroyed].sort()).toEqual([...keyIds].sort());

    // the key bytes are gone from the key store (file, table rows and the table's heap file)
    const after = await stored();
    for (const b of keyBytes) {
      expect(after.bytes.includes(b)).toBe(false);
      expect(after.text).not.toContain(b.toString('base64'));
    }
    for (const k of (await keys.get(keyIds)).values()) expect(k.state).toBe('destroyed');

    expect((await run('verify', '--store', spec, 's')).code).toBe(0);
    const audit1 = await run('audit', '--store', spec, 's', '--keys', keySpec, '--json');
    expect(audit1.code).toBe(0);
    const a1 = JSON.parse(audit1.stdout) as Record<string, unknown>;
    valid('audit.schema.json', a1);
    expect(a1.content).toMatchObject({ sealed: 10, readable: 0, erased: 10, erasures: [{ seq: e.sessions[0]!.seq, by: 'dpo:eve', scope: 'session', subject: 's' }] });
    expect(structure(a1)).toEqual(structure(a0));
    const text = await run('audit', '--store', spec, 's', '--keys', keySpec);
    expect(text.stdout).toContain('10 payload(s) stored encrypted: 0 readable, 10 [erased]');

    for (const id of ['msg-prompt', 'msg-queued', 'call-1']) {
      const why = await run('why', '--store', spec, 's', id, '--keys', keySpec, '--json');
      expect(why.code).toBe(0);
      const w = JSON.parse(why.stdout) as Record<string, unknown>;
      valid('why.schema.json', w);
      expect(w.content).toMatchObject({ state: 'erased', text: '[erased]' });
      // the same answer, but for the content and the one event erase appended
      const { content: _before, events: n0, ...structureBefore } = whyBefore.get(id)!;
      const { content: _after, events: n1, ...structureAfter } = w;
      expect(structureAfter).toEqual(structureBefore);
      expect(n1).toBe((n0 as number) + 1);
    }
    expect((await run('why', '--store', spec, 's', 'msg-prompt', '--keys', keySpec)).stdout).toContain('content (stored encrypted): [erased]');

    // an exported log carries the same hashes; without keys, its own session/erased event says what is erased
    const exported = join(tmp, `${backend.name}-export.jsonl`);
    const ex = await run('export', spec, 's');
    expect(ex.code).toBe(0);
    (await import('node:fs')).writeFileSync(exported, ex.stdout);
    expect(ex.stdout).not.toMatch(/SECRET/);
    expect((await run('verify', exported)).code).toBe(0);
    const fromFile = JSON.parse((await run('audit', exported, '--json')).stdout) as Record<string, unknown>;
    expect(fromFile.content).toMatchObject({ erased: 10, unavailable: 0 });

    // again: nothing to destroy, nothing recorded twice
    const again = JSON.parse((await run('erase', '--store', spec, '--keys', keySpec, '--session', 's', '--json')).stdout) as Record<string, unknown>;
    expect(again).toMatchObject({ destroyed: [], sessions: [{ session: 's', keyIds: [], seq: null }] });
    await keys.close();
  });
  });
};
