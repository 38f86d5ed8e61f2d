import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeJournalRecord, encodeJournalRecordSliced, readJournal, type JournalRecord } from '../../../../adapters/store/jsonl/group-journal.js';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { WorkSlices } from '../../../../adapters/store/shared/work-slices.js';
import type { FileOps } from '../../../../adapters/store/jsonl/fs-ops.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A FileOps over one in-memory buffer, for reading a journal record back. */
const memoryFile = (bytes: Buffer): FileOps => ({
  read: async (buffer, offset, length, position) => bytes.copy(buffer, offset, position, Math.min(bytes.length, position + length)),
  write: async () => {},
  sync: async () => {},
  truncate: async () => {},
  size: async () => bytes.length,
  close: async () => {},
});

const records: JournalRecord[] = [
  { streams: [], index: { first: 0, bytes: Buffer.alloc(0) } },
  { streams: [{ file: 'a.jsonl', offset: 0, bytes: Buffer.from('{"x":1}\n') }], index: { first: 7, bytes: Buffer.from([1, 2, 3, 250]) } },
  {
    streams: [
      { file: '0123abcd.jsonl', offset: 1234567, bytes: Buffer.from('{"c":"…","e":{"text":"é \\" \\n ☃"}}\n', 'utf8') },
      { file: 'naïve "quoted".jsonl', offset: 9, bytes: Buffer.alloc(0) },
      { file: 'z.jsonl', offset: 2 ** 40, bytes: Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 256)) },
    ],
    index: { first: 2 ** 33, bytes: Buffer.alloc(64, 7) },
  },
];

describe('JSONL group commit in slices', () => {
  it('encodes a journal record in slices to the very bytes of the one-piece encoder, which the journal reads back', async () => {
    for (const record of records) {
      const whole = encodeJournalRecord(record);
      let pauses = 0;
      const slices = new WorkSlices(0, () => 0, (run) => (pauses++, setImmediate(run)));
      const sliced = await encodeJournalRecordSliced(record, slices);
      expect(sliced.equals(whole)).toBe(true);
      // 0 ms slices: a pause before every stream entry and before the record is put together
      expect(pauses).toBe(record.streams.length + 1);
      expect(await encodeJournalRecordSliced(record)).toEqual(whole);
      const back = await readJournal(memoryFile(sliced));
      expect(back.end).toBe(sliced.length);
      expect(back.records).toEqual([record]);
    }
  });

  it('encodes a large stream entry in pieces, to the very bytes of the one-piece encoder', async () => {
    // 250,000 bytes: pieces of 98,304, 98,304 and 53,392 (the last with base64 padding: 250,000 is not a multiple of 3)
    for (const length of [250_000, 3 * 32 * 1024, 3 * 32 * 1024 + 1]) {
      const record: JournalRecord = {
        streams: [
          { file: 'big.jsonl', offset: 17, bytes: Buffer.from(Array.from({ length }, (_, i) => (i * 7919) % 256)) },
          { file: 'small.jsonl', offset: 0, bytes: Buffer.from('{"x":1}\n') },
        ],
        index: { first: 3, bytes: Buffer.alloc(160, 9) },
      };
      let pauses = 0;
      const sliced = await encodeJournalRecordSliced(record, new WorkSlices(0, () => 0, (run) => (pauses++, setImmediate(run))));
      expect(sliced.equals(encodeJournalRecord(record))).toBe(true);
      // a pause before each entry, between two pieces of the large one, and before the record is put together
      expect(pauses).toBe(2 + Math.ceil(length / (3 * 32 * 1024)) - 1 + 1);
      expect((await readJournal(memoryFile(sliced))).records).toEqual([record]);
    }
  });

  it('pauses only once a slice ran', async () => {
    let now = 0;
    let pauses = 0;
    const slices = new WorkSlices(2, () => now, (run) => (pauses++, setImmediate(run)));
    expect(slices.due).toBe(false);
    now = 1.9;
    expect(slices.due).toBe(false);
    now = 2;
    expect(slices.due).toBe(true);
    await slices.pause();
    expect(pauses).toBe(1);
    expect(slices.due).toBe(false);
    now = 4;
    expect(slices.due).toBe(true);
  });

  it('lets the event loop run between the appends of one group commit (commitSliceMs)', async () => {
    /** How many times one group commit of 40 appends (to existing streams) lets the event loop run (`setImmediate`). */
    const pausesOf = async (commitSliceMs: number): Promise<number> => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-commit-slices-'));
      dirs.push(dir);
      const store = await openJsonlEventStore(dir, { commitSliceMs });
      const streams = Array.from({ length: 40 }, (_, i) => `s${i}`);
      const spy = vi.spyOn(globalThis, 'setImmediate');
      try {
        await Promise.all(streams.map((s) => store.append(s, [{ id: `${s}-e0`, type: 'test/e', time: 1, data: { s } }], 'no_stream')));
        spy.mockClear();
        await Promise.all(streams.map((s) => store.append(s, [{ id: `${s}-e1`, type: 'test/e', time: 2, data: { s } }], 0n)));
        const pauses = spy.mock.calls.length;
        spy.mockRestore();
        const read: string[] = [];
        for (const s of streams) for await (const e of store.read(s)) read.push(e.id);
        expect(read).toEqual(streams.flatMap((s) => [`${s}-e0`, `${s}-e1`]));
        return pauses;
      } finally {
        spy.mockRestore();
        await store.close();
      }
    };
    // 0 ms slices: a pause before every append of the group but the first, and before every stream entry of the
    // journal record and its assembly; never: none
    expect(await pausesOf(0)).toBeGreaterThanOrEqual(39 + 41);
    expect(await pausesOf(Infinity)).toBe(0);
  });

  it('lets the event loop run between the events of one large append (commitSliceMs)', async () => {
    /** How many times one append of 600 events to one stream lets the event loop run, and what is read back. */
    const run = async (commitSliceMs: number): Promise<{ pauses: number; read: string[]; bytes: Buffer }> => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-commit-slices-'));
      dirs.push(dir);
      const store = await openJsonlEventStore(dir, { commitSliceMs });
      const events = Array.from({ length: 600 }, (_, i) => ({ id: `e${i}`, type: 'test/e', time: i, data: { i, text: 'x'.repeat(i % 50) } }));
      const spy = vi.spyOn(globalThis, 'setImmediate');
      try {
        await store.append('s', [{ id: 'first', type: 'test/e', time: 0, data: {} }], 'no_stream');
        spy.mockClear();
        await store.append('s', events, 0n);
        const pauses = spy.mock.calls.length;
        spy.mockRestore();
        const read: string[] = [];
        for await (const e of store.read('s')) read.push(e.id);
        const name = readdirSync(join(dir, 'streams')).find((f) => f.endsWith('.jsonl'))!;
        return { pauses, read, bytes: readFileSync(join(dir, 'streams', name)) };
      } finally {
        spy.mockRestore();
        await store.close();
      }
    };
    const sliced = await run(0);
    const whole = await run(Infinity);
    // 0 ms slices: a pause before every event of the append but the first (599), between two pieces of 256 index
    // records (2), before the journal's one stream entry and its assembly (2); never: none
    expect(sliced.pauses).toBeGreaterThanOrEqual(599 + 2 + 2);
    expect(whole.pauses).toBe(0);
    expect(sliced.read).toEqual(['first', ...Array.from({ length: 600 }, (_, i) => `e${i}`)]);
    // the same lines, byte for byte, however the work was cut
    expect(sliced.bytes.equals(whole.bytes)).toBe(true);
  });

  it('refuses a commitSliceMs that is not a number ≥ 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-commit-slices-'));
    dirs.push(dir);
    await expect(openJsonlEventStore(dir, { commitSliceMs: -1 })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(openJsonlEventStore(dir, { commitSliceMs: Number.NaN })).rejects.toMatchObject({ code: 'invalid-argument' });
  });
});
