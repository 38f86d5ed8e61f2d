import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore, streamFileName } from '../../../../adapters/store/jsonl/index.js';
import { nodeFsOps, type FsOps } from '../../../../adapters/store/jsonl/fs-ops.js';
import { encodeIndexRecords } from '../../../../adapters/store/jsonl/global-index.js';
import { encodeJournalRecord } from '../../../../adapters/store/jsonl/group-journal.js';
import { encodeEventLine } from '../../../../adapters/store/jsonl/line-codec.js';
import { streamRevision, type NewEvent } from '../../../../runtime/ports/event-store.js';
import { isStoreCorruptError, isStoreIoError, type StoreCorruptError } from '../../../../runtime/ports/store-errors.js';
import { scratchParent, snapshotStore } from './support/damage.js';
import { FaultyFs } from './support/faulty-fs.js';
import { assertRecordsNameTheirLines, collect } from './support/verify.js';

const parent = scratchParent('steerlog-recovery-edges-');
afterAll(() => rmSync(parent, { recursive: true, force: true }));
let n = 0;
const freshDir = (): string => join(parent, `d${n++}`);
const ev = (id: string): NewEvent => ({ id, type: 'edge/test', time: 9, data: { id } });
const fileOf = (dir: string, stream: string): string => join(dir, 'streams', streamFileName(stream).fileName);
const rejection = async (p: Promise<unknown>): Promise<unknown> => p.then(() => new Error('expected a rejection'), (e: unknown) => e);

/** 38 events in 10 commits on one stream, like a demo session written by the runtime's write-behind. */
const session = async (): Promise<string> => {
  const dir = freshDir();
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  let rev = -1;
  for (let c = 0; c < 10; c++) {
    const size = c < 8 ? 4 : 3;
    await store.append('demo-1', Array.from({ length: size }, (_, i) => ev(`e${c}.${i}`)), rev < 0 ? 'no_stream' : BigInt(rev));
    rev += size;
  }
  await store.close();
  return dir;
};

describe('a truncated global index', () => {
  it('is refused with the file, the offset and what disagrees, and every byte stays where it was', async () => {
    const dir = await session();
    truncateSync(join(dir, 'global.idx'), 9 * 80 + 17);
    const before = snapshotStore(dir);
    const e = (await rejection(openJsonlEventStore(dir))) as StoreCorruptError;
    expect(isStoreCorruptError(e)).toBe(true);
    expect(e.file).toBe(streamFileName('demo-1').fileName);
    expect(e.message).toMatch(/the index lost committed records/);
    expect(e.offset).toBeGreaterThan(0);
    expect(snapshotStore(dir)).toEqual(before);
    // read-only (audit) refuses the same way
    expect(isStoreCorruptError(await rejection(openJsonlEventStore(dir, { readOnly: true })))).toBe(true);
    expect(snapshotStore(dir)).toEqual(before);
  });
});

describe('an index record whose line has the same offset and length but other content', () => {
  it('does not count as committed: open refuses instead of serving or cutting it', async () => {
    const dir = await session();
    const file = fileOf(dir, 'demo-1');
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    const last = lines.at(-2)!;
    const event = JSON.parse(last).e;
    // A valid line (its own checksum matches) of the same length in the same place, with another id.
    const forged = encodeEventLine({ ...event, id: event.id.replace('9', '8') }).bytes.toString('utf8').trimEnd();
    expect(forged.length).toBe(last.length);
    lines[lines.length - 2] = forged;
    writeFileSync(file, lines.join('\n'));
    const before = snapshotStore(dir);
    const e = (await rejection(openJsonlEventStore(dir))) as StoreCorruptError;
    expect(isStoreCorruptError(e)).toBe(true);
    expect(e.message).toMatch(/another checksum/);
    expect(snapshotStore(dir)).toEqual(before);
  });
});

describe('a committed line replaced by another of the same length and position, found by a live writer', () => {
  it('is refused as damage (the record names its place, not its checksum): nothing is cut, nothing appended', async () => {
    const dir = freshDir();
    const w1 = await openJsonlEventStore(dir, { durability: 'none' });
    await w1.append('s', [ev('e0')], 'no_stream');
    // another writer (a second instance: another process) commits e1 after w1's last look at the stream
    const w2 = await openJsonlEventStore(dir, { durability: 'none' });
    await w2.append('s', [ev('e1')], 0n);
    await w2.close();
    // damage: e1's line replaced by a line valid on its own (its checksum matches), same length, place and position
    const file = fileOf(dir, 's');
    const lines = readFileSync(file, 'utf8').split('\n');
    const event = JSON.parse(lines.at(-2)!).e;
    const forged = encodeEventLine({ ...event, id: 'f1' }).bytes.toString('utf8').trimEnd();
    expect(forged.length).toBe(lines.at(-2)!.length);
    lines[lines.length - 2] = forged;
    writeFileSync(file, lines.join('\n'));
    const before = snapshotStore(dir);
    for (const expected of [1n, 0n]) {
      const e = (await rejection(w1.append('s', [ev('e2')], expected))) as StoreCorruptError;
      expect(isStoreCorruptError(e), String(e)).toBe(true);
      expect(e.message).toMatch(/record of position 1 points at a line with another checksum/);
    }
    expect(snapshotStore(dir)).toEqual(before);
    expect(existsSync(join(dir, 'quarantine'))).toBe(false);
    await w1.close();
  });
});

describe('the quarantine', () => {
  it('keeps the bytes recovery cuts, with a one-line record of why', async () => {
    const dir = await session();
    const file = fileOf(dir, 's');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('s', [ev('a')], 'no_stream');
    await store.close();
    const size = statSync(file).size;
    const torn = '{"c":"0000aaaa","e":{"rev":1';
    appendFileSync(file, torn);
    const again = await openJsonlEventStore(dir, { durability: 'none' });
    await again.close();
    expect(statSync(file).size).toBe(size);
    const log = readFileSync(join(dir, 'quarantine', 'quarantine.log'), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    const entry = JSON.parse(log[0]!);
    expect(entry).toMatchObject({ file: `streams/${streamFileName('s').fileName}`, offset: size, length: torn.length });
    expect(entry.reason).toMatch(/unfinished commit/);
    expect(readFileSync(join(dir, entry.saved), 'utf8')).toBe(torn);
  });

  it('moves a leftover temporary file of a stream creation there instead of deleting it', async () => {
    const dir = await session();
    const tmp = `${fileOf(dir, 'new')}.tmp-abc123`;
    writeFileSync(tmp, 'half a new stream');
    // the commit that created it named it in the commit intent (open-scope.test.ts); without an intent, open looks
    // at every file
    rmSync(join(dir, 'commit.intent'));
    await (await openJsonlEventStore(dir, { durability: 'none' })).close();
    expect(existsSync(tmp)).toBe(false);
    const saved = readdirSync(join(dir, 'quarantine')).filter((x) => x.includes('.tmp-abc123'));
    expect(saved).toHaveLength(1);
    expect(readFileSync(join(dir, 'quarantine', saved[0]!), 'utf8')).toBe('half a new stream');
  });
});

describe('opening read-only', () => {
  it('writes nothing: a missing directory is an error, a crash leftover stays in place and is not read', async () => {
    const missing = freshDir();
    expect(isStoreIoError(await rejection(openJsonlEventStore(missing, { readOnly: true })))).toBe(true);
    expect(existsSync(missing)).toBe(false);
    const dir = await session();
    appendFileSync(fileOf(dir, 'demo-1'), '{"c":"0000');
    const before = snapshotStore(dir);
    const store = await openJsonlEventStore(dir, { readOnly: true });
    expect((await collect(store.read('demo-1'))).length).toBe(38);
    expect(isStoreIoError(await rejection(store.append('demo-1', [ev('x')], 37n)))).toBe(true);
    await store.close();
    expect(snapshotStore(dir)).toEqual(before);
  });

  it('refuses (store-io) when the group journal cannot be read, rather than reading as if it held no pending commit', async () => {
    const dir = await session();
    const unreadable = (path: string): boolean => path.endsWith('group.journal');
    const fs: FsOps = {
      ...nodeFsOps,
      open: (path, mode) => (unreadable(path) ? Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' })) : nodeFsOps.open(path, mode)),
    };
    const e = await rejection(openJsonlEventStore(dir, { readOnly: true, fs }));
    expect(isStoreIoError(e)).toBe(true);
  });

  it("says it leaves a deletion's torn line unread (a writable open would cut it), and leaves it in place", async () => {
    const dir = await session();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('gone', [ev('g0')], 'no_stream');
    await store.deleteStream('gone', streamRevision(0));
    await store.close();
    appendFileSync(join(dir, 'deleted.log'), '{"c":"0000');
    const before = snapshotStore(dir);
    const reader = await openJsonlEventStore(dir, { readOnly: true });
    expect((await collect(reader.read('demo-1'))).length).toBe(38);
    expect(reader.unread).toEqual([expect.stringMatching(/^deleted\.log: 10 bytes after its last whole line \(a deletion that never committed\), not read/)]);
    await reader.close();
    expect(snapshotStore(dir)).toEqual(before);
  });
});

describe('group journal, an abandoned commit of two records', () => {
  it('is not resurrected when another commit took only its first position', async () => {
    const dir = freshDir();
    const s1 = await openJsonlEventStore(dir, { durability: 'group' });
    await s1.append('a', [ev('a0')], 'no_stream');
    await s1.close();
    // Commit B: b0 at position 1, journaled (group mode); acknowledged.
    const s2 = await openJsonlEventStore(dir, { durability: 'group' });
    await s2.append('b', [ev('b0')], 'no_stream');
    await s2.close();
    const journalB = readFileSync(join(dir, 'group.journal'));
    expect(journalB.length).toBeGreaterThan(0);
    // Commit A, before B: journaled for positions 1 and 2, its writer crashed before its index write, so B's
    // writer found 1 committed record and took position 1. A's lines are still in a's file.
    const aFile = fileOf(dir, 'a');
    const at = statSync(aFile).size;
    const l1 = encodeEventLine({ rev: 1, pos: 1, id: 'a1', type: 'edge/test', time: 9, data: {}, g: 1 });
    const l2 = encodeEventLine({ rev: 2, pos: 2, id: 'a2', type: 'edge/test', time: 9, data: {}, g: 1 });
    const hash = streamFileName('a').hash;
    const abandoned = encodeIndexRecords([
      { fileHash: hash, offset: at, length: l1.bytes.length - 1, lineCrc: l1.crc, batchEnd: false },
      { fileHash: hash, offset: at + l1.bytes.length, length: l2.bytes.length - 1, lineCrc: l2.crc, batchEnd: true },
    ]);
    appendFileSync(aFile, Buffer.concat([l1.bytes, l2.bytes]));
    const journalA = encodeJournalRecord({ streams: [{ file: streamFileName('a').fileName, offset: at, bytes: Buffer.concat([l1.bytes, l2.bytes]) }], index: { first: 1, bytes: abandoned } });
    writeFileSync(join(dir, 'group.journal'), Buffer.concat([journalA, journalB]));
    // A power loss took B's index record (group mode does not fsync the index): only the journal has it.
    truncateSync(join(dir, 'global.idx'), 80);
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    expect((await collect(store.readAll())).map((e) => e.id)).toEqual(['a0', 'b0']);
    expect((await collect(store.read('a'))).map((e) => e.id)).toEqual(['a0']);
    expect((await collect(store.read('b'))).map((e) => e.id)).toEqual(['b0']);
    expect(statSync(aFile).size).toBe(at);
    await store.close();
  });
});

describe('group journal, an abandoned commit whose positions a large (non-journaled) commit took', () => {
  it('is not written back over the large commit\'s index records: recovery keeps what was committed', async () => {
    const dir = freshDir();
    const fs = new FaultyFs();
    const store = await openJsonlEventStore(dir, { durability: 'group', fs });
    await store.append('a', [ev('a0')], 'no_stream');
    await store.append('a', [ev('a1')], 0n);
    // Commit A (a2 at position 2): its lines and journal record are written, its index write fails, and so does
    // the rollback's first step: the journal keeps A's record, A is refused with an unknown outcome.
    fs.armKind('write', 2, 1);
    await expect(store.append('a', [ev('a2')], 1n)).rejects.toMatchObject({ code: 'unknown-outcome' });
    expect(fs.fired).toBe('write');
    fs.disarm();
    // Commit L: more than 4 MiB to the existing stream, past the journal (no checkpoint empties it first): it finds
    // A uncommitted, cuts A's line and takes positions 2… itself, its file and the index fsynced. Acknowledged.
    const big = Array.from({ length: 6 }, (_, i) => ({ ...ev(`big${i}`), data: { pad: 'y'.repeat(750_000) } }));
    await store.append('a', big, 1n);
    const journal = readFileSync(join(dir, 'group.journal'));
    expect(journal.toString('latin1')).toContain('"i":[2,'); // A's record is still in the journal, at position 2
    // A crash now (the store is never closed: no checkpoint empties the journal), then the next open recovers.
    const again = await openJsonlEventStore(dir, { durability: 'group' });
    try {
      const ids = ['a0', 'a1', ...big.map((e) => e.id)];
      expect((await collect(again.read('a'))).map((e) => e.id)).toEqual(ids);
      expect((await collect(again.readAll())).map((e) => [e.id, e.position])).toEqual(ids.map((id, i) => [id, BigInt(i)]));
      expect(await again.revision('a')).toBe(7n);
    } finally {
      await again.close();
    }
  });
});

describe('a rewritten abandoned commit: another line at the same place, length and position', () => {
  // The premise of recovery's checksum rule (recovery.ts, commitmentOf), in the one interleaving where a place a
  // committed record names held another line of the same length and position: an abandoned commit's, overwritten
  // by the next commit, which a power loss can bring back.
  for (const indexKept of [false, true]) {
    it(`a power loss that brings the abandoned line back: recovery writes the committed one back from the journal (the index ${indexKept ? 'kept' : 'lost'} its record)`, async () => {
      const dir = freshDir();
      const w1 = await openJsonlEventStore(dir, { durability: 'group' });
      await w1.append('s', [ev('e0')], 'no_stream');
      const file = fileOf(dir, 's');
      const at = statSync(file).size;
      // another writer's commit A (position 1, revision 1) wrote its line and crashed before its journal write
      const a = encodeEventLine({ rev: 1, pos: 1, id: 'a1', type: 'edge/test', time: 9, data: { id: 'a1' }, g: 1 });
      appendFileSync(file, a.bytes);
      // w1, whose index is unchanged, commits B at the same place: its line overwrites A's (same length, other content)
      await w1.append('s', [ev('b1')], 0n);
      const b = readFileSync(file).subarray(at);
      expect(b.length).toBe(a.bytes.length);
      expect(b.equals(a.bytes)).toBe(false);
      expect(JSON.parse(b.toString('utf8')).e).toMatchObject({ rev: 1, pos: 1, id: 'b1' });
      // a crash, and a power loss: B's stream write is lost (A's line, on disk before it, is back), and maybe its
      // index record; B's journal record was fsynced (the acknowledgement waited for it)
      const bytes = readFileSync(file);
      a.bytes.copy(bytes, at);
      writeFileSync(file, bytes);
      if (!indexKept) truncateSync(join(dir, 'global.idx'), 80);
      // read-only (no journal replay): refused, never served as B
      if (indexKept) {
        const e = (await rejection(openJsonlEventStore(dir, { readOnly: true }))) as StoreCorruptError;
        expect(isStoreCorruptError(e)).toBe(true);
        expect(e.message).toMatch(/another checksum/);
      }
      const store = await openJsonlEventStore(dir, { durability: 'group' });
      try {
        expect((await collect(store.read('s'))).map((e) => e.id)).toEqual(['e0', 'b1']);
        expect(readFileSync(file).subarray(at).equals(b)).toBe(true);
        assertRecordsNameTheirLines(dir);
      } finally {
        await store.close();
      }
    });
  }

  it('the premise check itself refuses a committed record whose place holds another line of the same length', async () => {
    const dir = await session();
    assertRecordsNameTheirLines(dir);
    const file = fileOf(dir, 'demo-1');
    const lines = readFileSync(file, 'utf8').split('\n');
    const event = JSON.parse(lines[3]!).e;
    lines[3] = encodeEventLine({ ...event, id: event.id.replace('.', ':') }).bytes.toString('utf8').trimEnd();
    writeFileSync(file, lines.join('\n'));
    expect(() => assertRecordsNameTheirLines(dir)).toThrow(/index record 2: the line there has checksum/);
  });
});
