import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckpointStore } from '../../../projections/index.js';
import { FileCheckpointStore, MemoryCheckpointStore } from '../../../adapters/checkpoints/index.js';
import { PostgresCheckpointStore } from '../../../adapters/checkpoints/postgres-checkpoint-store.js';
import pg from 'pg';
import { describePg, dropSchema, PG_URL } from '../store/postgres/pg-test-support.js';

const describeCheckpointStore = (name: string, open: () => Promise<CheckpointStore>, after?: () => Promise<void>): void => {
  describe(`checkpoint store: ${name}`, () => {
    let store: CheckpointStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
      await after?.();
    });

    it('loads null before any save, then the last saved position and state', async () => {
      const key = { name: 'p-roundtrip', version: 1 };
      expect(await store.load(key)).toBeNull();
      const state = JSON.stringify({ a: [1, 2.5, -3e-7, null, true], 'ü n i c o d e': '✓ \u0000 "quotes"', nested: { z: 1, a: 2 } });
      await store.save(key, { position: 41n, state });
      await store.save(key, { position: 42n, state });
      const loaded = await store.load(key);
      expect(loaded?.position).toBe(42n);
      expect(JSON.parse(loaded!.state)).toEqual(JSON.parse(state));
    });

    it('keeps versions apart and deletes one', async () => {
      await store.save({ name: 'p-versions', version: 1 }, { position: 5n, state: '{"v":1}' });
      await store.save({ name: 'p-versions', version: 2 }, { position: 0n, state: '{"v":2}' });
      expect((await store.load({ name: 'p-versions', version: 1 }))?.state).toBe('{"v":1}');
      expect((await store.load({ name: 'p-versions', version: 2 }))?.position).toBe(0n);
      await store.delete({ name: 'p-versions', version: 1 });
      expect(await store.load({ name: 'p-versions', version: 1 })).toBeNull();
      expect(await store.load({ name: 'p-versions', version: 2 })).not.toBeNull();
    });

    it('keeps packed EventStoreDB $all positions (commit · 2^64 + prepare, both ≥ 2^40, up to 2^128 − 1)', async () => {
      const key = { name: 'p/esdb position', version: 1 };
      for (const position of [((2n ** 41n + 5n) << 64n) | (2n ** 41n + 3n), 2n ** 128n - 1n]) {
        await store.save(key, { position, state: '{}' });
        expect((await store.load(key))?.position).toBe(position);
      }
    });

    it('keeps positions beyond 2^53', async () => {
      const key = { name: 'p/big position', version: 3 };
      await store.save(key, { position: 2n ** 62n + 7n, state: '[]' });
      expect((await store.load(key))?.position).toBe(2n ** 62n + 7n);
    });
  });
};

describeCheckpointStore('memory', async () => new MemoryCheckpointStore());

let dir = '';
describeCheckpointStore(
  'file',
  async () => {
    dir = await mkdtemp(join(tmpdir(), 'steerlog-checkpoints-'));
    return new FileCheckpointStore(join(dir, 'checkpoints'));
  },
  async () => {
    await rm(dir, { recursive: true, force: true });
  },
);

describe('file checkpoint store layout', () => {
  it('writes one small JSON file per projection and leaves no temporary file behind', async () => {
    const root = await mkdtemp(join(tmpdir(), 'steerlog-checkpoints-'));
    try {
      const store = new FileCheckpointStore(root);
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.save({ name: 'x', version: 1 }, { position: BigInt(i), state: `{"i":${i}}` })));
      await store.save({ name: 'x', version: 1 }, { position: 99n, state: '{"i":99}' });
      expect(await readdir(root)).toEqual(['x@1.checkpoint.json']);
      expect(JSON.parse(await readFile(join(root, 'x@1.checkpoint.json'), 'utf8'))).toEqual({ name: 'x', version: 1, position: '99', state: { i: 99 } });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

const schema = `steerlog_cp_${process.pid}_${Date.now().toString(36)}`;
describePg('on postgres', () => {
  describeCheckpointStore(
    'postgres',
    async () => new PostgresCheckpointStore({ connection: PG_URL, schema }),
    () => dropSchema(schema),
  );

  describe('postgres checkpoint store migration', () => {
  it('widens a numeric(20, 0) position column from before version 2, keeping its rows', async () => {
    const old = `steerlog_cp_old_${process.pid}_${Date.now().toString(36)}`;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${old}"; CREATE TABLE "${old}".steerlog_checkpoints (
        name text NOT NULL, version integer NOT NULL, position numeric(20, 0) NOT NULL, state json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (name, version))`);
      await client.query(`INSERT INTO "${old}".steerlog_checkpoints (name, version, position, state) VALUES ('kept', 1, 99999999999999999999, '{"a":1}')`);
      const big = ((2n ** 40n) << 64n) | 2n ** 40n;
      const overflow = await client
        .query(`INSERT INTO "${old}".steerlog_checkpoints (name, version, position, state) VALUES ('big', 1, $1::numeric, '{}')`, [big.toString()])
        .then(() => null, (e: unknown) => e);
      expect(overflow).toMatchObject({ code: '22003' }); // what the old column did to a packed position
      const store = new PostgresCheckpointStore({ connection: PG_URL, schema: old });
      try {
        expect(await store.load({ name: 'kept', version: 1 })).toEqual({ position: 99999999999999999999n, state: '{"a":1}' });
        await store.save({ name: 'big', version: 1 }, { position: big, state: '{}' });
        expect((await store.load({ name: 'big', version: 1 }))?.position).toBe(big);
        const { rows } = await client.query(`SELECT numeric_precision FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'position'`, [old]);
        expect(rows[0].numeric_precision).toBe(39);
      } finally {
        await store.close();
      }
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
      await client.end();
    }
  });
});
});
