import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DELETIONS_FILE, encodeDeletion } from '../../../../adapters/store/jsonl/deletions.js';
import { streamFileName } from '../../../../adapters/store/jsonl/file-name.js';
import { checkJsonlStore, openJsonlEventStore, type JsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { streamRevision, type EventStore } from '../../../../runtime/ports/event-store.js';
import { isStreamDeletedError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { FaultyFs } from './support/faulty-fs.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
const freshDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-deletion-'));
  roots.push(dir);
  return dir;
};

/** Two streams: `gone` (3 events, interleaved with `kept`) and `kept` (3 events). */
const seed = async (store: EventStore): Promise<void> => {
  await store.append('gone', [ev('g0'), ev('g1')], 'no_stream');
  await store.append('kept', [ev('k0')], 'no_stream');
  await store.append('gone', [ev('g2')], 1n);
  await store.append('kept', [ev('k1'), ev('k2')], 0n);
};
const ids = async (store: EventStore): Promise<string[]> => (await collect(() => store.readAll())).map((e) => `${e.id}@${e.position}`);
const goneFile = (dir: string): string => join(dir, 'streams', streamFileName('gone').fileName);

describe('JSONL store: deleting a stream', () => {
  it('survives reopening: recovery does not take the removed stream for damage, store check is clean, positions stay', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'fsync' });
    await seed(store);
    await store.deleteStream('gone', streamRevision(2));
    expect(existsSync(goneFile(dir))).toBe(false);
    await store.append('kept', [ev('k3')], 2n);
    await store.close();
    for (const readOnly of [false, true]) {
      const again = await openJsonlEventStore(dir, { readOnly });
      expect(await ids(again)).toEqual(['k0@2', 'k1@4', 'k2@5', 'k3@6']);
      expect(await again.revision('gone')).toBe('no_stream');
      expect(isStreamDeletedError(await again.append('gone', [ev('x')], 'any').catch((e: unknown) => e))).toBe(!readOnly);
      await again.close();
    }
    const check = await checkJsonlStore(dir);
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
  });

  it('a crash after the deletion log was fsynced and before the file was removed: reads skip it, a writable open removes it', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'fsync' });
    await seed(store);
    await store.close();
    // what a crash between step 3 (the log line) and step 4 (unlink) leaves
    appendFileSync(join(dir, DELETIONS_FILE), encodeDeletion({ stream: 'gone', hash: streamFileName('gone').hash, revision: 2, time: 1 }));
    const reader = await openJsonlEventStore(dir, { readOnly: true });
    expect(await collect(() => reader.read('gone'))).toEqual([]);
    expect(await ids(reader)).toEqual(['k0@2', 'k1@4', 'k2@5']);
    await reader.close();
    expect(existsSync(goneFile(dir))).toBe(true); // reading never writes
    expect((await checkJsonlStore(dir)).ok).toBe(true);
    const writer = await openJsonlEventStore(dir);
    expect(existsSync(goneFile(dir))).toBe(false);
    expect(await ids(writer)).toEqual(['k0@2', 'k1@4', 'k2@5']);
    await writer.close();
  });

  it('a crash while the deletion line was written (torn, no newline): the stream is whole, the torn bytes go to the quarantine', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'fsync' });
    await seed(store);
    await store.close();
    const line = encodeDeletion({ stream: 'gone', hash: streamFileName('gone').hash, revision: 2, time: 1 });
    appendFileSync(join(dir, DELETIONS_FILE), line.subarray(0, 30));
    const writer = await openJsonlEventStore(dir);
    expect((await collect(() => writer.read('gone'))).map((e) => e.id)).toEqual(['g0', 'g1', 'g2']);
    expect(readFileSync(join(dir, DELETIONS_FILE)).length).toBe(0);
    expect(readFileSync(join(dir, 'quarantine', 'quarantine.log'), 'utf8')).toContain('deletion log');
    await writer.deleteStream('gone', streamRevision(2));
    expect(await collect(() => writer.read('gone'))).toEqual([]);
    await writer.close();
  });

  it('a damaged complete line of the deletion log is refused at open (store-corrupt), nothing touched', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'fsync' });
    await seed(store);
    await store.deleteStream('kept', streamRevision(2));
    await store.close();
    const path = join(dir, DELETIONS_FILE);
    const bytes = readFileSync(path);
    bytes[40] = bytes[40] === 0x61 ? 0x62 : 0x61;
    rmSync(path);
    appendFileSync(path, bytes);
    await expect(openJsonlEventStore(dir)).rejects.toMatchObject({ code: 'store-corrupt', file: DELETIONS_FILE });
    expect((await checkJsonlStore(dir)).ok).toBe(false);
  });

  it('fails every file-system call of a deletion in turn: the stream is then either whole or deleted, never damaged', async () => {
    const probeDir = freshDir();
    const probe = new FaultyFs();
    const p = await openJsonlEventStore(probeDir, { durability: 'fsync', fs: probe });
    await seed(p);
    probe.arm(-1);
    await p.deleteStream('gone', streamRevision(2));
    const calls = probe.count;
    await p.close();
    expect(calls).toBeGreaterThan(3);
    for (let k = 0; k < calls; k++) {
      const dir = freshDir();
      const fs = new FaultyFs();
      const store: JsonlEventStore = await openJsonlEventStore(dir, { durability: 'fsync', fs });
      await seed(store);
      fs.arm(k);
      const outcome = await store.deleteStream('gone', streamRevision(2)).then(
        () => 'deleted',
        (e: unknown) => (e as { code?: string }).code,
      );
      fs.disarm();
      await store.close();
      const again = await openJsonlEventStore(dir);
      const gone = (await collect(() => again.read('gone'))).map((e) => e.id);
      expect([[], ['g0', 'g1', 'g2']], `call ${k} (${outcome})`).toContainEqual(gone);
      expect(gone.length === 0, `call ${k}: resolved iff deleted`).toBe(outcome === 'deleted');
      if (outcome !== 'deleted') expect(outcome).toBe('store-io');
      expect((await collect(() => again.read('kept'))).map((e) => e.id)).toEqual(['k0', 'k1', 'k2']);
      await again.close();
      expect((await checkJsonlStore(dir)).problems, `call ${k}`).toEqual([]);
      expect(readdirSync(join(dir, 'streams')).length).toBe(gone.length === 0 ? 1 : 2);
    }
  });
});
