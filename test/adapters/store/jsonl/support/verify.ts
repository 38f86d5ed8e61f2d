import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { join } from 'node:path';
import { openJsonlEventStore } from '../../../../../adapters/store/jsonl/index.js';
import { hashOfFileName, streamFileName } from '../../../../../adapters/store/jsonl/file-name.js';
import { decodeIndexRecord, decodeLine, INDEX_RECORD_BYTES } from '../../../../../adapters/store/jsonl/line-codec.js';
import type { EventStore, RecordedEvent } from '../../../../../runtime/ports/event-store.js';
import { assertCatalogIsFold } from './catalog-oracle.js';

/** Reads `it` to its end; returns what it yielded and the error it ended with (null when it ended normally). */
export const drain = async <T>(it: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> => {
  const items: T[] = [];
  try {
    for await (const x of it) items.push(x);
    return { items, error: null };
  } catch (error) {
    return { items, error };
  }
};

/** The path of a stream's file in the store directory `dir`. */
export const fileOf = (dir: string, stream: string): string => join(dir, 'streams', streamFileName(stream).fileName);

export const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

/**
 * The premise of recovery's checksum rule (recovery.ts, commitmentOf): once recovered, the place every committed
 * index record names (file, offset, length) holds a line with that record's checksum and position — never another
 * line, such as a crash's leftover, of the same length at the same place. Reads the files directly.
 */
export const assertRecordsNameTheirLines = (dir: string): void => {
  const index = readFileSync(join(dir, 'global.idx'));
  let count = 0;
  for (let p = 0; (p + 1) * INDEX_RECORD_BYTES <= index.length; p++) {
    const r = decodeIndexRecord(index, p * INDEX_RECORD_BYTES);
    if (typeof r !== 'string' && r.batchEnd) count = p + 1;
  }
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(join(dir, 'streams'))) {
    const hash = hashOfFileName(name);
    if (hash !== undefined && !name.includes('.tmp-')) files.set(hash, readFileSync(join(dir, 'streams', name)));
  }
  for (let p = 0; p < count; p++) {
    const r = decodeIndexRecord(index, p * INDEX_RECORD_BYTES);
    if (typeof r === 'string') throw new Error(`index record ${p}: ${r}`);
    const file = files.get(r.fileHash);
    if (!file) {
      if (existsSync(join(dir, 'deleted.log'))) continue; // a deleted stream's retired position
      throw new Error(`index record ${p}: no stream file with hash ${r.fileHash}`);
    }
    if (file[r.offset + r.length] !== 0x0a) throw new Error(`index record ${p}: no line ends at byte ${r.offset + r.length}`);
    const line = decodeLine(file.subarray(r.offset, r.offset + r.length));
    if (typeof line === 'string' || line.kind !== 'event') throw new Error(`index record ${p}: ${typeof line === 'string' ? line : 'a header line'}`);
    if (line.crc !== r.lineCrc || line.event.pos !== p) throw new Error(`index record ${p}: the line there has checksum ${line.crc.toString(16)} and position ${line.event.pos}, the record ${r.lineCrc.toString(16)} and ${p}`);
  }
};

/**
 * Opens the store (running crash recovery) and checks the whole log (and, on the recovered files, that every
 * committed index record names its line: assertRecordsNameTheirLines), as {@link verifyOpenLog} says, and that the
 * session catalog the recovered store answers equals a fold of its events (catalog-oracle.ts). Returns the events
 * per stream.
 */
export const verifyLog = async (dir: string, streams: readonly string[], acked: ReadonlySet<string>): Promise<Map<string, RecordedEvent[]>> => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  try {
    assertRecordsNameTheirLines(dir);
    const log = await verifyOpenLog(store, streams, acked);
    await assertCatalogIsFold(store);
    return log;
  } finally {
    await store.close();
  }
};

/**
 * Checks the whole log of an open store (any store): every stream's revisions are 0…n-1, ids unique, batches
 * (`<run>.<w>.<i>.<j>of<k>` ids) all-or-none, readAll positions 0…N-1 agreeing with the streams, and every
 * acknowledged id present. Returns the events per stream.
 */
export const verifyOpenLog = async (store: EventStore, streams: readonly string[], acked: ReadonlySet<string>): Promise<Map<string, RecordedEvent[]>> => {
  const byStream = new Map<string, RecordedEvent[]>();
  const seen = new Set<string>();
  for (const stream of streams) {
    const events = await collect(store.read(stream));
    byStream.set(stream, events);
    events.forEach((e, i) => {
      if (e.revision !== BigInt(i)) throw new Error(`${stream}: revision ${e.revision} at index ${i}`);
      if (seen.has(e.id)) throw new Error(`duplicate event id ${e.id}`);
      seen.add(e.id);
    });
    const batches = new Map<string, { have: number; size: number }>();
    for (const e of events) {
      const m = /^(.*)\.(\d+)of(\d+)$/.exec(e.id);
      if (!m) continue;
      const b = batches.get(m[1]!) ?? { have: 0, size: Number(m[3]) };
      b.have++;
      batches.set(m[1]!, b);
    }
    for (const [key, b] of batches) if (b.have !== b.size) throw new Error(`${stream}: batch ${key} has ${b.have} of ${b.size} events`);
    const rev = await store.revision(stream);
    expect(rev).toBe(events.length === 0 ? 'no_stream' : BigInt(events.length - 1));
  }
  const missing = [...acked].filter((id) => !seen.has(id));
  if (missing.length > 0) throw new Error(`${missing.length} acknowledged events lost, e.g. ${missing.slice(0, 3).join(', ')}`);
  const all = await collect(store.readAll());
  all.forEach((e, i) => {
    if (e.position !== BigInt(i)) throw new Error(`readAll: position ${e.position} at index ${i}`);
    const same = byStream.get(e.stream)?.[Number(e.revision)];
    if (!same || same.id !== e.id || same.position !== e.position) throw new Error(`readAll event ${e.id} disagrees with read(${e.stream})`);
  });
  const total = [...byStream.values()].reduce((n, evs) => n + evs.length, 0);
  if (all.length !== total) throw new Error(`readAll has ${all.length} events, the streams ${total}`);
  return byStream;
};
