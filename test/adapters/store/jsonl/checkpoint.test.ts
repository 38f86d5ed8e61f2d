import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeFsOps, openJsonlEventStore, type FileOps, type FsOps } from '../../../../adapters/store/jsonl/index.js';
import { streamRevision, type NewEvent } from '../../../../runtime/ports/event-store.js';
import { seededRandom } from '../../../support/seeded-random.js';
import { PowerFs } from './support/power-fs.js';

// A group-journal checkpoint fsyncs every stream file the journal names. The instance that wrote the journal since
// its last checkpoint knows those files: it must not read 8 MiB of journal back to learn them, and must still
// flush exactly them (the events survive a reopen, which replays whatever the journal holds).
const dir = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real file system, counting reads of the journal and fsyncs by file name. */
class CountingFs implements FsOps {
  journalReads = 0;
  readonly synced: string[] = [];
  open = async (path: string, mode: Parameters<FsOps['open']>[1]): Promise<FileOps> => {
    const file = await nodeFsOps.open(path, mode);
    const name = basename(path);
    return {
      ...file,
      read: (b, o, l, p) => {
        if (name === 'group.journal') this.journalReads++;
        return file.read(b, o, l, p);
      },
      sync: () => {
        this.synced.push(name);
        return file.sync();
      },
      write: (b, p) => file.write(b, p),
      truncate: (l) => file.truncate(l),
      size: () => file.size(),
      close: () => file.close(),
    };
  };
  syncDir = (p: string) => nodeFsOps.syncDir(p);
  link = (a: string, b: string) => nodeFsOps.link(a, b);
  unlink = (p: string) => nodeFsOps.unlink(p);
  mkdir = (p: string) => nodeFsOps.mkdir(p);
  readdir = (p: string) => nodeFsOps.readdir(p);
  sizeOf = (p: string) => nodeFsOps.sizeOf(p);
}

const events = (prefix: string, n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, type: 'checkpoint/test', time: 1, data: { pad: 'x'.repeat(8000) } }));

describe('group journal checkpoint', () => {
  it('flushes the journaled stream files without reading the journal back, and nothing is lost', async () => {
    const fs = new CountingFs();
    const store = await openJsonlEventStore(join(dir, 'store'), { durability: 'group', fs });
    await store.append('a', events('a0', 1), 'no_stream');
    await store.append('b', events('b0', 1), 'no_stream');
    const readsAtOpen = fs.journalReads;
    fs.synced.length = 0;
    // ~11 KiB of journal per commit (an 8 KB event's line, in base64): past 8 MiB, a checkpoint runs
    let revA = 0n;
    let revB = 0n;
    for (let i = 1; i <= 800; i++) {
      await store.append('a', events(`a${i}`, 1), revA);
      revA++;
      if (i % 2 === 0) {
        await store.append('b', events(`b${i}`, 1), revB);
        revB++;
      }
    }
    const streamFiles = new Set(fs.synced.filter((n) => n !== 'group.journal' && n !== 'global.idx'));
    expect(streamFiles.size).toBe(2); // the checkpoint flushed both stream files…
    expect(fs.synced).toContain('global.idx'); // …and the index
    expect(fs.journalReads).toBe(readsAtOpen); // without reading the journal back
    await store.close();
    const reopened = await openJsonlEventStore(join(dir, 'store'), { durability: 'group' });
    let n = 0;
    for await (const _ of reopened.readAll()) n++;
    expect(n).toBe(2 + 800 + 400);
    await reopened.close();
  });

  it('a power loss after a checkpoint keeps every acknowledged event (the files it flushed were the journal\'s)', async () => {
    const where = join(dir, 'power');
    await (await import('node:fs/promises')).mkdir(where, { recursive: true });
    const random = seededRandom(1);
    const fs = new PowerFs(where);
    const store = await openJsonlEventStore(where, { durability: 'group', fs });
    const streams = ['p/a', 'p/b', 'p/c'];
    const revs = new Map<string, bigint>();
    const acked = new Set<string>();
    const small = (id: string): NewEvent[] => [{ id, type: 'checkpoint/test', time: 1, data: { pad: 'x'.repeat(100) } }];
    const append = async (i: number): Promise<void> => {
      const stream = streams[Math.floor(random() * streams.length)]!;
      const rev = revs.get(stream);
      await store.append(stream, small(`e${i}`), rev === undefined ? 'no_stream' : rev);
      revs.set(stream, (rev ?? -1n) + 1n);
      acked.add(`e${i}`);
    };
    for (let i = 0; i < 150; i++) await append(i);
    // deleting a stream checkpoints the journal first: the journaled lines of p/a, p/b and p/c are flushed then
    await store.append('p/gone', small('gone'), 'no_stream');
    await store.deleteStream('p/gone', streamRevision(0n));
    for (let i = 150; i < 200; i++) await append(i);
    fs.cutAfter(0);
    fs.powerLoss(random);
    // (verifyLog expects gapless positions; the deleted stream's position stays taken)
    const reopened = await openJsonlEventStore(where, { durability: 'group' });
    const kept = new Set<string>();
    for (const stream of streams) for await (const e of reopened.read(stream)) kept.add(e.id);
    await reopened.close();
    expect(kept).toEqual(acked);
  });
});
