import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { describeArchiveSuite } from './archive.shared.js';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { archiveSessions } from '../../../audit/archive-sessions.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { collect } from '../../contract/event-store.contract.js';
import { CUTOFF, MOVED, populate } from './support/archive-fixture.js';

describeArchiveSuite('memory', { open: async () => ({ store: new MemoryEventStore(), spec: null }) });


/** The port without its optional capability, as a store of one's own (or EventStoreDB) has it. */
const withoutDeletion = (memory: MemoryEventStore): EventStore => ({
  maxEventBytes: memory.maxEventBytes,
  append: (s, e, x) => memory.append(s, e, x),
  read: (s, o) => memory.read(s, o),
  subscribe: (s, o) => memory.subscribe(s, o),
  readAll: (o) => memory.readAll(o),
  subscribeAll: (o) => memory.subscribeAll(o),
  revision: (s) => memory.revision(s),
  close: () => memory.close(),
});

it('a store without StreamDeletion is refused before anything is written (archive-unsupported-store); --dry-run still lists', async () => {
  const memory = new MemoryEventStore();
  await populate(memory);
  const plain = withoutDeletion(memory);
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-archive-unsupported-'));
  await expect(archiveSessions(plain, { out: join(dir, 'a.jsonl.gz'), before: CUTOFF })).rejects.toMatchObject({ code: 'archive-unsupported-store' });
  expect(readdirSync(dir)).toEqual([]);
  const dry = await archiveSessions(plain, { out: join(dir, 'a.jsonl.gz'), before: CUTOFF, dryRun: true });
  expect(dry.archived.map((a) => a.session)).toEqual(MOVED);
  expect((await collect(() => memory.readAll())).length).toBeGreaterThan(0);
});

it('a session that receives an event after it was archived is not deleted: it stays live and whole (exit 1 in the CLI)', async () => {
  const memory = new MemoryEventStore();
  await populate(memory);
  // an append slips in between the archive's read of old-a and its deletion
  let slipped = false;
  const racing = Object.assign(withoutDeletion(memory), {
    deleteStream: async (stream: string, expected: Parameters<MemoryEventStore['deleteStream']>[1]) => {
      if (stream === 'old-a' && !slipped) {
        slipped = true;
        await memory.append('old-a', [{ id: 'late', type: 'test/late', time: CUTOFF + 1, data: {} }], 'any');
      }
      return memory.deleteStream(stream, expected);
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-archive-race-'));
  const result = await archiveSessions(racing, { out: join(dir, 'a.jsonl.gz'), before: CUTOFF });
  expect(result.ok).toBe(false);
  expect(result.archived.map((a) => [a.session, a.deleted, a.error?.code ?? null])).toEqual([
    ['old-a', false, 'concurrency'],
    ['old-parent', true, null],
    ['old-child', true, null],
  ]);
  expect((await collect(() => memory.read('old-a'))).at(-1)?.id).toBe('late');
});
