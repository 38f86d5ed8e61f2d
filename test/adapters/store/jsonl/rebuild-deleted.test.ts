import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELETIONS_FILE, encodeDeletion } from '../../../../adapters/store/jsonl/deletions.js';
import { streamFileName } from '../../../../adapters/store/jsonl/file-name.js';
import { INDEX_FILE } from '../../../../adapters/store/jsonl/global-index.js';
import { checkJsonlStore, openJsonlEventStore, rebuildJsonlIndex, type JsonlDurability } from '../../../../adapters/store/jsonl/index.js';
import { decodeIndexRecord, INDEX_RECORD_BYTES, type IndexRecord } from '../../../../adapters/store/jsonl/line-codec.js';
import { isStoreCorruptError, isStreamDeletedError } from '../../../../runtime/ports/store-errors.js';
import { CUTOFF, finishedSession, OLD, RECENT } from '../../archive/support/archive-fixture.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { runCli } from '../../cli/support/run-cli.js';
import { scratchParent, snapshotStore } from './support/damage.js';

/**
 * `store repair --rebuild-index` of a store with deleted (archived) streams: their events' positions stay retired
 * (readAll skips them, every other event keeps its position, the ids stay deleted), whether the previous index is
 * gone or damaged; positions no deletion accounts for, and a damaged deletion log, are still refused untouched.
 */
const MOVED = ['old-a', 'old-b', 'old-c'];
const LIVE = ['new-x', 'new-y', 'new-z'];
let parent: string;
const seeds = new Map<JsonlDurability, string>();

/** Sessions written side by side (their commits interleave), the old ones archived, then one more session. */
const seed = async (durability: JsonlDurability): Promise<string> => {
  const dir = join(parent, `seed-${durability}`);
  const store = await openJsonlEventStore(dir, { durability });
  await Promise.all([
    finishedSession(store, OLD, { sessionId: 'old-a' }),
    finishedSession(store, RECENT, { sessionId: 'new-x' }),
    finishedSession(store, OLD + 1000, { sessionId: 'old-b' }),
    finishedSession(store, RECENT + 1000, { sessionId: 'new-y' }),
    finishedSession(store, OLD + 2000, { sessionId: 'old-c' }),
  ]);
  await store.close();
  const archived = await runCli('archive', '--store', `jsonl:${dir}`, '--before', String(CUTOFF), '--out', join(parent, `${durability}.jsonl.gz`), '--json');
  expect(archived.code, archived.stderr).toBe(0);
  expect((JSON.parse(archived.stdout) as { archived: { session: string }[] }).archived.map((a) => a.session).sort()).toEqual(MOVED);
  const after = await openJsonlEventStore(dir, { durability });
  await finishedSession(after, RECENT + 2000, { sessionId: 'new-z' });
  await after.close();
  return dir;
};

beforeAll(async () => {
  parent = scratchParent('steerlog-rebuild-deleted-');
  for (const d of ['none', 'group'] as const) seeds.set(d, await seed(d));
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));

let copies = 0;
const copyOf = (durability: JsonlDurability): string => {
  const dir = mkdtempSync(join(parent, `copy-${copies++}-`));
  cpSync(seeds.get(durability)!, dir, { recursive: true });
  return dir;
};

const recordsOf = (dir: string): IndexRecord[] => {
  const bytes = readFileSync(join(dir, INDEX_FILE));
  const out: IndexRecord[] = [];
  for (let at = 0; at + INDEX_RECORD_BYTES <= bytes.length; at += INDEX_RECORD_BYTES) {
    const r = decodeIndexRecord(bytes, at);
    if (typeof r === 'string') throw new Error(`record ${at / INDEX_RECORD_BYTES}: ${r}`);
    out.push(r);
  }
  return out;
};

/** Everything a reader sees: readAll (id@position), each stream's events and revision, the deleted ids refused. */
const observe = async (dir: string) => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  try {
    const all = (await collect(() => store.readAll())).map((e) => `${e.stream}/${e.id}@${e.position}`);
    const streams: Record<string, { events: string[]; revision: unknown }> = {};
    for (const s of [...MOVED, ...LIVE]) streams[s] = { events: (await collect(() => store.read(s))).map((e) => `${e.id}@${e.position}`), revision: await store.revision(s) };
    const deleted: Record<string, boolean> = {};
    for (const s of MOVED) deleted[s] = isStreamDeletedError(await store.append(s, [ev('again')], 'any').catch((e: unknown) => e));
    return { all, streams, deleted };
  } finally {
    await store.close();
  }
};

const deletedHashes = new Map(MOVED.map((s) => [streamFileName(s).hash, s]));

describe.each(['none', 'group'] as const)('rebuild-index with deleted streams (durability %s)', (durability) => {
  it('the index deleted: rebuilt with the retired positions in deletion-log order; reads, positions and retired ids exactly as before', async () => {
    const dir = copyOf(durability);
    const before = await observe(copyOf(durability));
    expect(Object.values(before.deleted)).toEqual([true, true, true]);
    expect(MOVED.map((s) => before.streams[s]!.events)).toEqual([[], [], []]);
    const original = recordsOf(dir);
    const retired = original.flatMap((r, p) => (deletedHashes.has(r.fileHash) ? [p] : []));
    expect(retired.length).toBe(81); // 3 archived sessions of 27 events
    // the archived sessions' positions are interleaved with the others' (the interesting case)
    expect(retired.at(-1)! - retired[0]! + 1).toBeGreaterThan(retired.length);

    rmSync(join(dir, INDEX_FILE));
    expect(isStoreCorruptError(await openJsonlEventStore(dir).catch((e: unknown) => e))).toBe(true);
    const report = await rebuildJsonlIndex(dir, { sync: false });
    expect(report).toEqual({ events: original.length, streams: LIVE.length, retired: { events: 81, streams: 3, attribution: 'deletion-log' } });

    const rebuilt = recordsOf(dir);
    expect(rebuilt.length).toBe(original.length);
    const strip = ({ batchEnd: _b, ...r }: IndexRecord) => r;
    // every live record as it was; every retired position names a deleted stream, 27 each
    rebuilt.forEach((r, p) => {
      if (retired.includes(p)) expect(deletedHashes.has(r.fileHash), `position ${p}`).toBe(true);
      else expect(strip(r), `position ${p}`).toEqual(strip(original[p]!));
    });
    const perStream = new Map<string, number>();
    for (const p of retired) perStream.set(rebuilt[p]!.fileHash, (perStream.get(rebuilt[p]!.fileHash) ?? 0) + 1);
    expect([...perStream.values()]).toEqual([27, 27, 27]);
    // commits may only be split, never joined: every commit end of the original index is one of the rebuilt index
    original.forEach((r, p) => {
      if (r.batchEnd) expect(rebuilt[p]!.batchEnd, `commit end at ${p}`).toBe(true);
    });

    expect(await observe(dir)).toEqual(before);
    const check = await checkJsonlStore(dir);
    expect(check.problems).toEqual([]);
    // and the store goes on: the next event takes the next position
    const store = await openJsonlEventStore(dir, { durability });
    const revision = (await store.revision('new-z')) as bigint;
    await store.append('new-z', [ev('more')], revision);
    expect((await collect(() => store.readAll())).at(-1)).toMatchObject({ stream: 'new-z', position: BigInt(original.length) });
    await store.close();
  });

  it('the index damaged in a live record: rebuilt with the previous index\'s retired records, the same reads', async () => {
    const dir = copyOf(durability);
    const before = await observe(copyOf(durability));
    const original = recordsOf(dir);
    const live = original.findIndex((r, p) => p > 10 && !deletedHashes.has(r.fileHash));
    const bytes = readFileSync(join(dir, INDEX_FILE));
    bytes[live * INDEX_RECORD_BYTES + 30] = bytes[live * INDEX_RECORD_BYTES + 30]! ^ 0x01;
    writeFileSync(join(dir, INDEX_FILE), bytes);
    expect((await checkJsonlStore(dir)).ok).toBe(false);
    const report = await rebuildJsonlIndex(dir, { sync: false });
    expect(report).toMatchObject({ events: original.length, retired: { events: 81, streams: 3, attribution: 'previous-index' } });
    const rebuilt = recordsOf(dir);
    const strip = ({ batchEnd: _b, ...r }: IndexRecord) => r;
    expect(rebuilt.map(strip)).toEqual(original.map(strip));
    // the previous index is kept in the quarantine, byte for byte
    expect(readFileSync(join(dir, report.previousIndex!))).toEqual(bytes);
    expect(await observe(dir)).toEqual(before);
    expect((await checkJsonlStore(dir)).problems).toEqual([]);
  });

  it('through the CLI: store repair --rebuild-index says what it kept retired', async () => {
    const dir = copyOf(durability);
    rmSync(join(dir, INDEX_FILE));
    const human = await runCli('store', 'repair', `jsonl:${dir}`, '--rebuild-index');
    expect(human.code, human.stderr).toBe(0);
    const n = recordsOf(dir).length;
    expect(human.stdout).toBe(`rebuilt global.idx of jsonl:${dir}: ${n} events (81 of them retired: the events of 3 deleted streams, records in deletion-log order) from 3 stream files\n`);
    const json = await runCli('store', 'repair', `jsonl:${dir}`, '--rebuild-index', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, events: n, streams: 3, retired: { events: 81, streams: 3, attribution: 'previous-index' } });
  });

  it('still refuses what deleted streams do not explain, leaving every byte in place', async () => {
    // a live stream's last line gone: its position is missing, and no deletion accounts for it
    const cut = copyOf(durability);
    rmSync(join(cut, INDEX_FILE));
    const file = join(cut, 'streams', streamFileName('new-y').fileName);
    const text = readFileSync(file, 'utf8');
    truncateSync(file, text.slice(0, -1).lastIndexOf('\n') + 1);
    const cutBefore = snapshotStore(cut);
    const e = await rebuildJsonlIndex(cut, { sync: false }).catch((x: unknown) => x);
    expect(isStoreCorruptError(e)).toBe(true);
    expect((e as Error).message).toMatch(/no stream line holds position \d+ \(a line claims position \d+\) \(81 are the events of deleted streams, 82 positions have no line\): lines or a stream file are missing/);

    // a damaged line of the deletion log
    const damaged = copyOf(durability);
    rmSync(join(damaged, INDEX_FILE));
    const log = readFileSync(join(damaged, DELETIONS_FILE));
    log[40] = log[40]! ^ 0x01;
    writeFileSync(join(damaged, DELETIONS_FILE), log);
    const damagedBefore = snapshotStore(damaged);
    const d = await rebuildJsonlIndex(damaged, { sync: false }).catch((x: unknown) => x);
    expect(isStoreCorruptError(d)).toBe(true);
    expect((d as { file: string }).file).toBe(DELETIONS_FILE);

    // a deleted stream whose file is still there (a crash before its removal) with fewer lines than it had
    const leftover = copyOf(durability);
    rmSync(join(leftover, INDEX_FILE));
    const live = join(leftover, 'streams', streamFileName('new-x').fileName);
    appendFileSync(join(leftover, DELETIONS_FILE), encodeDeletion({ stream: 'new-x', hash: streamFileName('new-x').hash, revision: 99, time: 1 }));
    const leftoverBefore = snapshotStore(leftover);
    const l = await rebuildJsonlIndex(leftover, { sync: false }).catch((x: unknown) => x);
    expect(isStoreCorruptError(l)).toBe(true);
    expect((l as Error).message).toContain('the file of deleted stream "new-x" holds 27 events; the deletion log says it had 100: cannot rebuild');
    expect(readFileSync(live, 'utf8').length).toBeGreaterThan(0);
    expect([snapshotStore(cut), snapshotStore(damaged), snapshotStore(leftover)]).toEqual([cutBefore, damagedBefore, leftoverBefore]);
  });
});
