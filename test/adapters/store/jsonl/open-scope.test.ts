import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkJsonlStore, openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { encodeIntent, readIntent } from '../../../../adapters/store/jsonl/commit-intent.js';
import { nodeFsOps, type FsOps } from '../../../../adapters/store/jsonl/fs-ops.js';
import { isStoreCorruptError } from '../../../../runtime/ports/store-errors.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { collect, fileOf } from './support/verify.js';

/**
 * Opening checks what the last unfinished commit can have touched (the files its commit intent names, the index
 * tail, the journal), not every stream file: the work of opening does not grow with the number of streams, and
 * every other file is checked when it is first read.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-open-scope-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const ev = (id: string): NewEvent => ({ id, type: 'scope/test', time: 1, data: { id } });

/** node:fs, counting the stream files opened. */
const countingFs = (): FsOps & { streamOpens: string[] } => {
  const streamOpens: string[] = [];
  return {
    ...nodeFsOps,
    streamOpens,
    open: (path, mode) => {
      if (path.includes('/streams/')) streamOpens.push(basename(path));
      return nodeFsOps.open(path, mode);
    },
  };
};

const storeOf = async (streams: number): Promise<string> => {
  const dir = join(root, `s${n++}`);
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  await Promise.all(Array.from({ length: streams }, (_, i) => store.append(`st-${i}`, [ev(`e${i}-0`), ev(`e${i}-1`)], 'no_stream')));
  await store.append('st-0', [ev('last')], 1n);
  await store.close();
  return dir;
};

describe('opening a JSONL store', () => {
  it('opens only the stream files the last commit named, however many there are (writable and read-only)', async () => {
    const dir = await storeOf(60);
    for (const readOnly of [false, true]) {
      const fs = countingFs();
      const store = await openJsonlEventStore(dir, { durability: 'none', readOnly, fs });
      expect(fs.streamOpens, `readOnly ${readOnly}`).toEqual([basename(fileOf(dir, 'st-0'))]);
      expect((await collect(store.readAll())).length).toBe(121);
      await store.close();
    }
  });

  it('cuts (into the quarantine) what a crash left in a file the intent names', async () => {
    const dir = await storeOf(5);
    const before = statSync(fileOf(dir, 'st-0')).size;
    appendFileSync(fileOf(dir, 'st-0'), '{"c":"0000');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    expect(statSync(fileOf(dir, 'st-0')).size).toBe(before);
    expect(readFileSync(join(dir, 'quarantine', 'quarantine.log'), 'utf8')).toMatch(/unfinished commit/);
    expect((await collect(store.read('st-0'))).map((e) => e.id)).toEqual(['e0-0', 'e0-1', 'last']);
    await store.close();
  });

  it('quarantines the temporary file of a stream creation the intent names', async () => {
    const dir = await storeOf(2);
    expect(await readIntent(dir)).toEqual({ g: 4, files: [basename(fileOf(dir, 'st-0'))], temporary: [] });
    const tmp = `${basename(fileOf(dir, 'new'))}.tmp-abc123`;
    writeFileSync(join(dir, 'streams', tmp), 'half a new stream');
    // the intent's commit started at the index's end (it never committed): not a lost commit
    writeFileSync(join(dir, 'commit.intent'), encodeIntent({ g: 5, files: [basename(fileOf(dir, 'new'))], temporary: [tmp] }));
    await (await openJsonlEventStore(dir, { durability: 'none' })).close();
    expect(existsSync(join(dir, 'streams', tmp))).toBe(false);
    expect(readdirSync(join(dir, 'quarantine')).some((x) => x.includes('.tmp-abc123'))).toBe(true);
  });

  it('checks an untouched file when it is first read; store check still checks every file', async () => {
    const dir = await storeOf(5);
    // damage the last line of a stream the last commit did not touch
    const file = fileOf(dir, 'st-3');
    truncateSync(file, statSync(file).size - 1);
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    expect(isStoreCorruptError(await collect(store.read('st-3')).then(() => undefined, (e: unknown) => e))).toBe(true);
    expect((await collect(store.read('st-2'))).length).toBe(2);
    await store.close();
    const report = await checkJsonlStore(dir);
    expect(report.ok).toBe(false);
    expect(report.problems.some((p) => p.file.includes(basename(file)))).toBe(true);
  });

  const refusal = async (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

  it('refuses a stream file the last commit did not touch that lost whole lines at its end, at its first read', async () => {
    const dir = await storeOf(5);
    const file = fileOf(dir, 'st-3');
    const before = readFileSync(file);
    // cut the last line exactly: what is left is a valid, shorter stream
    truncateSync(file, before.lastIndexOf(0x0a, before.length - 2) + 1);
    const cut = readFileSync(file);
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    for (const attempt of [() => collect(store.read('st-3')), () => store.revision('st-3'), () => collect(store.read('st-3', { direction: 'backwards' }))]) {
      const e = await refusal(attempt());
      expect(isStoreCorruptError(e)).toBe(true);
      expect(String((e as Error).message)).toContain(basename(file));
      expect(String((e as Error).message)).toMatch(/revision 0.*revision 1|revision 1.*revision 0/);
    }
    expect((await collect(store.read('st-2'))).length).toBe(2);
    await store.close();
    expect(readFileSync(file).equals(cut)).toBe(true); // refused, nothing written
  });

  it('refuses a deleted stream file the index still points into, at its first read', async () => {
    const dir = await storeOf(5);
    rmSync(fileOf(dir, 'st-3'));
    const store = await openJsonlEventStore(dir, { durability: 'none', readOnly: true });
    expect(isStoreCorruptError(await refusal(store.revision('st-3')))).toBe(true);
    expect(isStoreCorruptError(await refusal(collect(store.read('st-3'))))).toBe(true);
    expect(await store.revision('never-written')).toBe('no_stream');
    await store.close();
    expect(existsSync(fileOf(dir, 'st-3'))).toBe(false);
  });

  it('refuses to append to such a file, and writes nothing', async () => {
    const dir = await storeOf(5);
    const file = fileOf(dir, 'st-3');
    const before = readFileSync(file);
    truncateSync(file, before.lastIndexOf(0x0a, before.length - 2) + 1);
    rmSync(fileOf(dir, 'st-4'));
    const index = statSync(join(dir, 'global.idx')).size;
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    expect(isStoreCorruptError(await refusal(store.append('st-3', [ev('x')], 0n)))).toBe(true);
    expect(isStoreCorruptError(await refusal(store.append('st-4', [ev('y')], 'no_stream')))).toBe(true);
    await store.close();
    expect(existsSync(fileOf(dir, 'st-4'))).toBe(false);
    expect(statSync(file).size).toBe(before.lastIndexOf(0x0a, before.length - 2) + 1);
    expect(statSync(join(dir, 'global.idx')).size).toBe(index);
  });

  it('reads an intact store after further appends by this instance and by another one', async () => {
    const dir = await storeOf(3);
    const reader = await openJsonlEventStore(dir, { durability: 'none', readOnly: true });
    expect(await reader.revision('st-1')).toBe(1n);
    const writer = await openJsonlEventStore(dir, { durability: 'none' });
    await writer.append('st-1', [ev('w1'), ev('w2')], 1n);
    await writer.append('st-9', [ev('w9')], 'no_stream');
    await writer.close();
    expect((await collect(reader.read('st-1'))).map((e) => e.id)).toEqual(['e1-0', 'e1-1', 'w1', 'w2']);
    expect(await reader.revision('st-9')).toBe(0n);
    expect(await reader.revision('st-2')).toBe(1n);
    await reader.close();
    const again = await openJsonlEventStore(dir, { durability: 'none' });
    expect(await again.revision('st-0')).toBe(2n);
    await again.append('st-0', [ev('own')], 2n);
    await again.append('st-new', [ev('n0')], 'no_stream');
    expect((await collect(again.read('st-0'))).map((e) => e.id)).toEqual(['e0-0', 'e0-1', 'last', 'own']);
    expect(await again.revision('st-new')).toBe(0n);
    await again.close();
  });

  it('checks every file when the intent is missing, or its commit started past the index end (the index lost commits)', async () => {
    const dir = await storeOf(4);
    // lose the last commit's index records and the commit before it: the files still hold their lines
    const index = join(dir, 'global.idx');
    const size = statSync(index).size;
    truncateSync(index, size - 80 * 3);
    const opened = await openJsonlEventStore(dir, { durability: 'none' }).then(
      (s) => s.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(isStoreCorruptError(opened)).toBe(true);
    rmSync(join(dir, 'commit.intent'));
    expect(isStoreCorruptError(await openJsonlEventStore(dir, { durability: 'none' }).then(() => undefined, (e: unknown) => e))).toBe(true);
  });
});
