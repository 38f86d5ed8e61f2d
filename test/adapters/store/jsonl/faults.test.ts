import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore, type JsonlDurability, type JsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { isStoreIoError, isUnknownOutcomeError } from '../../../../runtime/ports/store-errors.js';
import { FaultyFs } from './support/faulty-fs.js';
import { collect, verifyLog } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-faults-'));
  dirs.push(d);
  return d;
};

const ev = (id: string): NewEvent => ({ id, type: 'fault/test', time: 1, data: { id, pad: 'p'.repeat(50) } });
const batch = (prefix: string, n: number): NewEvent[] => Array.from({ length: n }, (_, j) => ev(`${prefix}.${j}of${n}`));

/** Every file of the store except the lock directory, by relative path. */
const snapshot = (dir: string): Map<string, string> => {
  const out = new Map<string, string>();
  out.set('global.idx', readFileSync(join(dir, 'global.idx')).toString('base64'));
  out.set('group.journal', readFileSync(join(dir, 'group.journal')).toString('base64'));
  for (const name of readdirSync(join(dir, 'streams'))) out.set(`streams/${name}`, readFileSync(join(dir, 'streams', name)).toString('base64'));
  return out;
};

interface Scenario {
  readonly name: string;
  readonly durability: JsonlDurability;
  readonly streams: readonly string[];
  /** fsyncs a clean run of `act` makes, when the scenario pins it. */
  readonly fsyncs?: number;
  setup(store: JsonlEventStore): Promise<void>;
  /** The appends under test; all of them must fail when a fault fires. */
  act(store: JsonlEventStore): Promise<unknown>[];
}

const scenarios: Scenario[] = [
  {
    name: 'a batch of 3 onto an existing stream (fsync)',
    durability: 'fsync',
    fsyncs: 1, // one acknowledged commit, one flush: the journal's (the stream file and the index wait for the checkpoint)
    streams: ['s/one'],
    setup: async (s) => {
      await s.append('s/one', batch('base', 2), 'no_stream');
    },
    act: (s) => [s.append('s/one', batch('new', 3), 1n)],
  },
  {
    name: 'the first batch of a new stream: file creation (fsync)',
    durability: 'fsync',
    streams: ['s/one', 's/two'],
    setup: async (s) => {
      await s.append('s/one', batch('base', 1), 'no_stream');
    },
    act: (s) => [s.append('s/two', batch('new', 2), 'no_stream')],
  },
  {
    name: 'a group of two appends to an existing and a new stream (group)',
    durability: 'group',
    streams: ['s/one', 's/two'],
    setup: async (s) => {
      await s.append('s/one', batch('base', 2), 'no_stream');
    },
    act: (s) => [s.append('s/one', batch('g1', 2), 1n), s.append('s/two', batch('g2', 3), 'no_stream')],
  },
  {
    name: 'a group of appends to two existing streams, through the group journal (group)',
    durability: 'group',
    fsyncs: 1, // the journal's only: neither the stream files nor the index are fsynced by the commit
    streams: ['s/one', 's/two'],
    setup: async (s) => {
      await s.append('s/one', batch('base1', 2), 'no_stream');
      await s.append('s/two', batch('base2', 1), 'no_stream');
    },
    act: (s) => [s.append('s/one', batch('j1', 2), 1n), s.append('s/two', batch('j2', 3), 0n), s.append('s/one', batch('j3', 1), 3n)],
  },
];

const settle = (ps: Promise<unknown>[]): Promise<PromiseSettledResult<unknown>[]> => Promise.allSettled(ps);

describe('JSONL store under injected I/O failures', () => {
  for (const sc of scenarios) {
    it(`${sc.name}: a failure at every call leaves the files as they were, typed store-io, and a retry writes once`, async () => {
      // Count the calls of a clean run.
      const probe = new FaultyFs();
      const probeDir = freshDir();
      const p = await openJsonlEventStore(probeDir, { durability: sc.durability, fs: probe });
      await sc.setup(p);
      probe.disarm();
      await Promise.all(sc.act(p));
      const calls = [...probe.log];
      await p.close();
      expect(calls).toContain('write');
      expect(calls).toContain('sync');
      if (sc.fsyncs !== undefined) expect(calls.filter((c) => c === 'sync')).toHaveLength(sc.fsyncs);

      for (let k = 0; k < calls.length; k++) {
        const fs = new FaultyFs();
        const dir = freshDir();
        const store = await openJsonlEventStore(dir, { durability: sc.durability, fs });
        await sc.setup(store);
        const before = snapshot(dir);
        fs.arm(k);
        const results = await settle(sc.act(store));
        expect(fs.fired, `call #${k} (${calls[k]})`).toBeDefined();
        for (const r of results) {
          expect(r.status, `call #${k} (${calls[k]})`).toBe('rejected');
          expect(isStoreIoError((r as PromiseRejectedResult).reason)).toBe(true);
        }
        expect(snapshot(dir), `files after a failure of call #${k} (${calls[k]})`).toEqual(before);
        fs.disarm();
        await Promise.all(sc.act(store));
        await store.close();
        const log = await verifyLog(dir, sc.streams, new Set());
        const ids = [...log.values()].flat().map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
      }
    });

    it(`${sc.name}: when the rollback fails too, the error is typed (unknown-outcome once the index was written) and reopening keeps the batch all-or-none`, async () => {
      const probe = new FaultyFs();
      const probeDir = freshDir();
      const p = await openJsonlEventStore(probeDir, { durability: sc.durability, fs: probe });
      await sc.setup(p);
      probe.disarm();
      await Promise.all(sc.act(p));
      const n = probe.log.length;
      await p.close();
      for (let k = 0; k < n; k++) {
        const fs = new FaultyFs();
        const dir = freshDir();
        const store = await openJsonlEventStore(dir, { durability: sc.durability, fs });
        await sc.setup(store);
        fs.arm(k, true);
        const results = await settle(sc.act(store));
        for (const r of results) {
          const reason = (r as PromiseRejectedResult).reason;
          expect(isStoreIoError(reason) || isUnknownOutcomeError(reason), `call #${k}`).toBe(true);
        }
        await store.close();
        // A fresh instance recovers: every batch is all-or-none (checked by verifyLog), and a retry lands once.
        await verifyLog(dir, sc.streams, new Set());
        const again = await openJsonlEventStore(dir, { durability: sc.durability });
        await Promise.all(sc.act(again));
        await again.close();
        const log = await verifyLog(dir, sc.streams, new Set());
        const ids = [...log.values()].flat().map((e) => e.id);
        expect(new Set(ids).size, `call #${k}`).toBe(ids.length);
      }
    });
  }

  it('a failed append leaves the store usable for the next one', async () => {
    const fs = new FaultyFs();
    const store = await openJsonlEventStore(freshDir(), { fs });
    await store.append('s', batch('a', 1), 'no_stream');
    fs.arm(0);
    await expect(store.append('s', batch('b', 2), 0n)).rejects.toSatisfy(isStoreIoError);
    fs.disarm();
    await store.append('s', batch('c', 1), 0n);
    expect((await collect(store.read('s'))).map((e) => e.id)).toEqual(['a.0of1', 'c.0of1']);
    await store.close();
  });
});
