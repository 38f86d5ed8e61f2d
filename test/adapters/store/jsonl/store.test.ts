import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore, streamFileName } from '../../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import {
  isEventTooLargeError,
  isInvalidStreamIdError,
  isStoreCorruptError,
  isStoreIoError,
  type StoreCorruptError,
} from '../../../../runtime/ports/store-errors.js';
import { encodeIndexRecords } from '../../../../adapters/store/jsonl/global-index.js';
import { encodeJournalRecord } from '../../../../adapters/store/jsonl/group-journal.js';
import { encodeEventLine } from '../../../../adapters/store/jsonl/line-codec.js';
import { collect } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-unit-'));
  dirs.push(d);
  return d;
};
const ev = (id: string, data: unknown = { id }): NewEvent => ({ id, type: 'unit/test', time: 5, data });
const fileOf = (dir: string, stream: string): string => join(dir, 'streams', streamFileName(stream).fileName);
const rejection = async (p: Promise<unknown>): Promise<unknown> => p.then(() => new Error('expected a rejection'), (e: unknown) => e);

describe('stream ids and file names', () => {
  it('refuses hostile ids with InvalidStreamIdError and writes nothing', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir);
    for (const id of ['', 'a\u0000b', 'line\nbreak', 'x'.repeat(201), '\udc00', 'é'.repeat(101)]) {
      expect(isInvalidStreamIdError(await rejection(store.append(id, [ev('a')], 'any'))), JSON.stringify(id)).toBe(true);
      expect(isInvalidStreamIdError(await rejection(store.revision(id)))).toBe(true);
    }
    expect(readdirSync(join(dir, 'streams'))).toEqual([]);
    await store.close();
  });

  it('keeps path-like, case-variant and reserved ids apart, inside the streams directory', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const ids = ['../../etc/passwd', '/abs', 'a/../b', '.', '..', 'CON', 'con', 'A', 'a', 'Straße', 'STRASSE', 'strasse', 'ünï ✓', 'x'.repeat(200)];
    for (const id of ids) await store.append(id, [ev(`e-${ids.indexOf(id)}`)], 'no_stream');
    for (const id of ids) {
      const got = await collect(store.read(id));
      expect(got.map((e) => [e.stream, e.id])).toEqual([[id, `e-${ids.indexOf(id)}`]]);
    }
    const names = readdirSync(join(dir, 'streams'));
    expect(names).toHaveLength(ids.length);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(ids.length);
    for (const n of names) expect(n).toMatch(/^[a-z0-9-]{0,40}_[a-z2-7]{26}\.jsonl$/);
    expect(readdirSync(dir).sort()).toEqual(['commit.intent', 'global.idx', 'group.journal', 'locks', 'sessions.catalog.log', 'streams']);
    await store.close();
  });

  it('refuses an oversized event with its size and writes nothing', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { maxEventBytes: 1000 });
    const e = (await rejection(store.append('big', [ev('ok'), ev('big', { s: 'x'.repeat(1000) })], 'any'))) as { index: number; limit: number };
    expect(isEventTooLargeError(e)).toBe(true);
    expect(e.index).toBe(1);
    expect(e.limit).toBe(1000);
    expect(await store.revision('big')).toBe('no_stream');
    expect(readdirSync(join(dir, 'streams'))).toEqual([]);
    await store.close();
  });

  it('detects a file that holds another stream (as a hash collision would look)', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('one', [ev('a')], 'no_stream');
    await store.close();
    renameSync(fileOf(dir, 'one'), fileOf(dir, 'two'));
    // the file was not touched by the last commit: opening does not look at it, its first read refuses it
    const opened = await openJsonlEventStore(dir);
    expect(isStoreCorruptError(await rejection(collect(opened.read('two'))))).toBe(true);
    await opened.close();
    // a store without a commit intent (written before it existed) is checked whole at open: refused there
    rmSync(join(dir, 'commit.intent'));
    const again = await rejection(openJsonlEventStore(dir));
    expect(isStoreCorruptError(again)).toBe(true);
  });
});

describe('crash recovery', () => {
  const seeded = async (): Promise<{ dir: string; size: number; index: number }> => {
    const dir = freshDir();
    // no fsync, so no group journal: the journal would hold a copy of the last commit and opening would write it
    // back over a damaged line (see "group journal" below); these tests are about the stream file alone
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('s', [ev('a'), ev('b')], 'no_stream');
    await store.append('s', [ev('c')], 1n);
    await store.close();
    return { dir, size: statSync(fileOf(dir, 's')).size, index: statSync(join(dir, 'global.idx')).size };
  };

  it('cuts a torn last line back to the last complete line, leaving complete lines untouched', async () => {
    const { dir, size } = await seeded();
    const before = readFileSync(fileOf(dir, 's'));
    appendFileSync(fileOf(dir, 's'), '{"c":"0000');
    const store = await openJsonlEventStore(dir);
    expect(readFileSync(fileOf(dir, 's'))).toEqual(before);
    expect(statSync(fileOf(dir, 's')).size).toBe(size);
    expect((await collect(store.read('s'))).map((e) => e.id)).toEqual(['a', 'b', 'c']);
    expect((await store.append('s', [ev('d')], 2n)).nextExpectedRevision).toBe(3n);
    await store.close();
  });

  it('cuts complete lines whose batch never reached the index, and an unfinished index batch', async () => {
    const { dir, size, index } = await seeded();
    // A writer that crashed after writing a stream line, and one that crashed mid-way through index records.
    const file = fileOf(dir, 's');
    const lines = readFileSync(file, 'utf8').split('\n');
    appendFileSync(file, `${lines[3]!.replace('"id":"c"', '"id":"x"')}\n`);
    appendFileSync(join(dir, 'global.idx'), readFileSync(join(dir, 'global.idx')).subarray(0, 80 + 17));
    const store = await openJsonlEventStore(dir);
    expect(statSync(file).size).toBe(size);
    expect(statSync(join(dir, 'global.idx')).size).toBe(index);
    expect((await collect(store.readAll())).map((e) => e.id)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  it('reports a damaged line inside the file with its position and never skips it', async () => {
    const { dir, size } = await seeded();
    const file = fileOf(dir, 's');
    const bytes = readFileSync(file);
    const second = bytes.indexOf('"id":"b"');
    bytes[second + 6] = 'B'.charCodeAt(0);
    writeFileSync(file, bytes);
    const store = await openJsonlEventStore(dir);
    const e = (await rejection(collect(store.read('s')))) as StoreCorruptError;
    expect(isStoreCorruptError(e)).toBe(true);
    expect(e.code).toBe('store-corrupt');
    expect(e.line).toBe(3);
    expect(e.offset).toBe(bytes.lastIndexOf('\n', second) + 1);
    expect(isStoreCorruptError(await rejection(collect(store.readAll())))).toBe(true);
    expect(statSync(file).size).toBe(size);
    await store.close();
  });

  it('refuses to cut a damaged last line that the index says is committed', async () => {
    const { dir, size } = await seeded();
    const file = fileOf(dir, 's');
    const bytes = readFileSync(file);
    bytes[bytes.lastIndexOf('"id":"c"') + 6] = 'C'.charCodeAt(0);
    writeFileSync(file, bytes);
    expect(isStoreCorruptError(await rejection(openJsonlEventStore(dir)))).toBe(true);
    expect(statSync(file).size).toBe(size);
  });
});

describe('group journal', () => {
  it('writes back the index records and stream lines a power loss took (one fsync per group commit)', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    await store.append('a', [ev('a0')], 'no_stream');
    await store.append('b', [ev('b0')], 'no_stream');
    const sizes = [statSync(fileOf(dir, 'a')).size, statSync(fileOf(dir, 'b')).size];
    // Issued in the same tick: one group, two files, one fsync (the journal's).
    await Promise.all([store.append('a', [ev('a1'), ev('a2')], 0n), store.append('b', [ev('b1')], 0n)]);
    await store.close();
    expect(statSync(join(dir, 'group.journal')).size).toBeGreaterThan(0);
    // What un-fsynced files may look like after a power loss: their last writes are gone, the index's too.
    truncateSync(fileOf(dir, 'a'), sizes[0]);
    truncateSync(fileOf(dir, 'b'), sizes[1]! + 7);
    truncateSync(join(dir, 'global.idx'), 2 * 80 + 30);
    const again = await openJsonlEventStore(dir, { durability: 'group' });
    expect((await collect(again.read('a'))).map((e) => e.id)).toEqual(['a0', 'a1', 'a2']);
    expect((await collect(again.read('b'))).map((e) => e.id)).toEqual(['b0', 'b1']);
    expect((await collect(again.readAll())).map((e) => e.id)).toEqual(['a0', 'b0', 'a1', 'a2', 'b1']);
    expect(statSync(join(dir, 'group.journal')).size).toBe(0);
    await again.close();
  });
});

describe('many streams', () => {
  it('a group commit over more streams than the write-handle cache keeps open', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    const streams = Array.from({ length: 300 }, (_, i) => `many/${i}`);
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(streams.map((s) => store.append(s, [ev(`${s}#${round}`)], round === 0 ? 'no_stream' : BigInt(round - 1))));
      expect(results.map((r) => r.nextExpectedRevision)).toEqual(streams.map(() => BigInt(round)));
    }
    await store.close();
    const again = await openJsonlEventStore(dir);
    expect((await collect(again.readAll())).length).toBe(900);
    expect((await collect(again.read('many/299'))).map((e) => e.id)).toEqual(['many/299#0', 'many/299#1', 'many/299#2']);
    await again.close();
  });
});

describe('group journal, abandoned commits', () => {
  it('does not replay a journaled commit whose index positions another commit took', async () => {
    const dir = freshDir();
    const s1 = await openJsonlEventStore(dir, { durability: 'group' });
    await s1.append('a', [ev('a0')], 'no_stream');
    await s1.close();
    const s2 = await openJsonlEventStore(dir, { durability: 'fsync' });
    await s2.append('b', [ev('b0')], 'no_stream'); // position 1, not journaled
    await s2.close();
    // A group writer that crashed after its journal fsync but before its index write, racing for position 1.
    const aFile = fileOf(dir, 'a');
    const at = statSync(aFile).size;
    const line = encodeEventLine({ rev: 1, pos: 1, id: 'a1', type: 'unit/test', time: 5, data: {} });
    appendFileSync(aFile, line.bytes);
    const record = encodeIndexRecords([{ fileHash: streamFileName('a').hash, offset: at, length: line.bytes.length - 1, lineCrc: line.crc, batchEnd: true }]);
    appendFileSync(join(dir, 'group.journal'), encodeJournalRecord({ streams: [{ file: streamFileName('a').fileName, offset: at, bytes: line.bytes }], index: { first: 1, bytes: record } }));
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    expect((await collect(store.readAll())).map((e) => e.id)).toEqual(['a0', 'b0']);
    expect((await collect(store.read('a'))).map((e) => e.id)).toEqual(['a0']);
    expect(statSync(aFile).size).toBe(at);
    await store.close();
  });
});

describe('locking', () => {
  it('breaks a lock left by a dead process', async () => {
    const dir = freshDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    mkdirSync(join(dir, 'locks'), { recursive: true });
    writeFileSync(join(dir, 'locks', 'g7.lock'), `${JSON.stringify({ pid: Number(dead), host: (await import('node:os')).hostname(), token: 'x' })}\n`);
    const store = await openJsonlEventStore(dir);
    await store.append('s', [ev('a')], 'no_stream');
    await store.close();
    // g7 (dead) → g8 (open) → g9 (append); older generations are deleted
    expect(readdirSync(join(dir, 'locks')).filter((n) => n.endsWith('.lock'))).toEqual(['g9.lock']);
  });

  it('waits for a live owner and fails with store-io after lockTimeoutMs', async () => {
    const dir = freshDir();
    mkdirSync(join(dir, 'locks'), { recursive: true });
    writeFileSync(join(dir, 'locks', 'g0.lock'), `${JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), token: 'held' })}\n`);
    expect(isStoreIoError(await rejection(openJsonlEventStore(dir, { lockTimeoutMs: 50 })))).toBe(true);
  });
});

describe('live updates across instances', () => {
  it('subscribeAll on one instance sees appends made through another (by polling)', async () => {
    const dir = freshDir();
    const a = await openJsonlEventStore(dir, { durability: 'none', pollIntervalMs: 5 });
    const b = await openJsonlEventStore(dir, { durability: 'none' });
    const ac = new AbortController();
    const it = a.subscribeAll({ signal: ac.signal })[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ kind: 'caught-up' });
    await b.append('x', [ev('from-b')], 'no_stream');
    const next = await it.next();
    expect(next.value).toMatchObject({ kind: 'event', event: { id: 'from-b', stream: 'x', position: 0n } });
    ac.abort();
    await it.return?.();
    await a.close();
    await b.close();
  });
});

describe('two writer instances (processes) on one directory', () => {
  it('a writer whose last commit went to another stream still sees what the other committed to this one', async () => {
    const dir = freshDir();
    const w1 = await openJsonlEventStore(dir, { durability: 'none' });
    await w1.append('s', [ev('s0')], 'no_stream');
    const w2 = await openJsonlEventStore(dir, { durability: 'none' });
    await w2.append('s', [ev('s1-by-w2')], 0n);
    await w2.close();
    // w1 commits to another stream: it sees the index grew, and refreshes only t
    await w1.append('t', [ev('t0')], 'no_stream');
    // its knowledge of s is from before w2's commit: the expected revision must be checked against the file
    const e = await rejection(w1.append('s', [ev('s1-by-w1')], 0n));
    expect((e as { code?: string }).code, String(e)).toBe('concurrency');
    expect(await w1.revision('s')).toBe(1n);
    await w1.append('s', [ev('s2-by-w1')], 1n);
    await w1.close();
    const again = await openJsonlEventStore(dir, { durability: 'none' });
    expect((await collect(again.read('s'))).map((x) => x.id)).toEqual(['s0', 's1-by-w2', 's2-by-w1']);
    expect((await collect(again.readAll())).map((x) => x.id)).toEqual(['s0', 's1-by-w2', 't0', 's2-by-w1']);
    await again.close();
  });
});

describe('a missing index', () => {
  it('is refused rather than treated as "nothing committed"', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir);
    await store.append('s', [ev('a')], 'no_stream');
    await store.close();
    rmSync(join(dir, 'global.idx'));
    expect(isStoreCorruptError(await rejection(openJsonlEventStore(dir)))).toBe(true);
    expect(statSync(fileOf(dir, 's')).size).toBeGreaterThan(100);
  });
});
