import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { archiveSessions } from '../../../audit/archive-sessions.js';
import { nodeArchiveDurability, type ArchiveDurability } from '../../../formats/archive/write-archive.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { EventStore, ReadStreamOptions, RecordedEvent } from '../../../runtime/ports/event-store.js';
import { collect } from '../../contract/event-store.contract.js';
import { tempDir } from './archive.shared.js';
import { CUTOFF, MOVED, populate } from './support/archive-fixture.js';

/**
 * The read-back before the deletions: the archive is written, fsynced, read back and every chain recomputed before
 * any session leaves the store. Here what was written is not what was sent — the file changes between the write and
 * the read-back (a flipped byte; an event changed with every digest recomputed, so only the chain can tell), or the
 * source session's chain is broken when it is read for the archive — and the run must refuse (`archive-unverified`),
 * publish no file and delete nothing.
 */

/** The archive's lines with one event of `session` changed, every section digest and the manifest recomputed. */
const forgeEvent = (text: string, session: string): string => {
  const lines = text.split('\n');
  const out: string[] = [];
  let current: string | null = null;
  let section: string[] = [];
  let changed = false;
  const sums = new Map<string, string>();
  for (const l of lines) {
    if (l === '') {
      out.push(l);
      continue;
    }
    const v = JSON.parse(l) as Record<string, unknown>;
    if (v.archive === 'session') {
      current = v.session as string;
      section = [];
    } else if (v.archive === 'end') {
      const sha = createHash('sha256').update(section.map((s) => `${s}\n`).join('')).digest('hex');
      sums.set(v.session as string, sha);
      out.push(JSON.stringify({ ...v, sha256: sha }));
      continue;
    } else if (v.archive === 'manifest') {
      out.push(JSON.stringify({ ...v, sessions: (v.sessions as { session: string }[]).map((s) => ({ ...s, sha256: sums.get(s.session) })) }));
      continue;
    } else if (!('format' in v)) {
      let line = l;
      if (current === session && !changed && v.seq === 1) {
        line = JSON.stringify({ ...v, time: (v.time as number) + 1 });
        changed = true;
      }
      section.push(line);
      out.push(line);
      continue;
    }
    out.push(l);
  }
  expect(changed).toBe(true);
  return out.join('\n');
};

/** fsyncs as usual, then changes the file before it is read back (what a lying disk or a concurrent writer does). */
const changeAfterSync = (change: (bytes: Buffer) => Buffer): ArchiveDurability => ({
  syncFile: async (path) => {
    await nodeArchiveDurability.syncFile(path);
    writeFileSync(path, change(readFileSync(path)));
  },
  syncDir: nodeArchiveDurability.syncDir,
});

/** The store, whose reads of `session` after the first (selection's) serve its event of seq 1 with other data. */
const brokenOnSecondRead = (store: MemoryEventStore, session: string): EventStore => {
  let reads = 0;
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'read') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      return (stream: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent> => {
        const inner = target.read(stream, options);
        if (stream !== session || ++reads === 1) return inner;
        return (async function* () {
          for await (const e of inner) yield e.revision === 1n ? { ...e, data: { ...(e.data as object), changed: true } } : e;
        })();
      };
    },
  });
};

const streamsOf = async (store: EventStore): Promise<string[]> => (await collect(() => store.readAll())).map((e) => `${e.stream}#${e.revision}`);

describe('archive: the read-back before the deletions', () => {
  const cases: { name: string; durability?: ArchiveDurability; broken?: string }[] = [
    { name: 'a byte of the written file flipped after the fsync', durability: changeAfterSync((b) => Buffer.concat([b.subarray(0, 40), Buffer.from([b[40]! ^ 0x10]), b.subarray(41)])) },
    {
      name: 'an event of the written file changed, every digest recomputed (only the chain tells)',
      durability: changeAfterSync((b) => gzipSync(forgeEvent(gunzipSync(b).toString('utf8'), 'old-parent'))),
    },
    { name: 'a source session whose chain is broken when it is read for the archive', broken: 'old-parent' },
  ];
  for (const c of cases) {
    it(`${c.name}: refused archive-unverified, no file, nothing deleted`, async () => {
      const memory = new MemoryEventStore();
      await populate(memory);
      const store = c.broken !== undefined ? brokenOnSecondRead(memory, c.broken) : memory;
      const before = await streamsOf(memory);
      for (const s of MOVED) expect(before.some((e) => e.startsWith(`${s}#`))).toBe(true);
      const dir = tempDir();
      const out = join(dir, 'sessions.jsonl.gz');
      await expect(archiveSessions(store, { out, before: CUTOFF, clock: () => 1, ...(c.durability ? { durability: c.durability } : {}) })).rejects.toMatchObject({
        code: 'archive-unverified',
      });
      expect(await streamsOf(memory)).toEqual(before);
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  it('the same store and file, untouched, archive and delete (the cases above differ only by the change)', async () => {
    const memory = new MemoryEventStore();
    await populate(memory);
    const dir = tempDir();
    const result = await archiveSessions(memory, { out: join(dir, 'sessions.jsonl.gz'), before: CUTOFF, clock: () => 1, durability: changeAfterSync((b) => b) });
    expect(result.archived.map((a) => [a.session, a.deleted])).toEqual(MOVED.map((s) => [s, true]));
    expect(readdirSync(dir)).toEqual(['sessions.jsonl.gz']);
  });
});
