import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, takeWhile, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryEventStore, createRuntime, createUserMessage, ScriptedModel, silentLogger } from '../../index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../../adapters/store/postgres/index.js';
import { FakeEsdb } from '../../test/adapters/store/eventstoredb/fake/esdb-fake.js';
import { dropSchema, PG_URL, uniqueSchema } from '../../test/adapters/store/postgres/pg-test-support.js';
import { eventStoreDbExample, jsonlExample, pagedReadAllExample, pagedReadExample, postgresExample } from './store-usage.js';
import { sharedFramesExample, turnsPerSessionExample } from './projection-usage.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'steerlog-snippet-'));

describe('store snippets run', () => {
  it('docs/store-jsonl.md', async () => {
    const dir = tmp();
    await jsonlExample(dir, '00000000-0000-4000-8000-00000000abcd', { text: 'hi' });
    const store = await openJsonlEventStore(dir);
    const events = [];
    for await (const e of store.read('session-42')) events.push(e);
    await store.close();
    expect(events.map((e) => e.data)).toEqual([{ text: 'hi' }]);
  });

  it('README.md, paged reads: the events of read, from a store with pages and from one without', async () => {
    const dir = tmp();
    const jsonl = await openJsonlEventStore(dir, { durability: 'none' });
    const memory = new MemoryEventStore();
    const events = Array.from({ length: 2500 }, (_, i) => ({ id: `e${i}`, type: `t/${i % 7}`, time: 1, data: { i } }));
    for (const store of [jsonl, memory]) await store.append('s', events, 'no_stream');
    const withoutPages = { ...memory, read: memory.read.bind(memory), readPages: undefined } as unknown as EventStore;
    for (const store of [jsonl, memory, withoutPages]) expect(await pagedReadExample(store, 's')).toEqual(events.map((e) => e.type));
    await jsonl.close();
  });

  it('README.md, paged all-streams reads: every stream counted, from a store with pages and from one without', async () => {
    const jsonl = await openJsonlEventStore(tmp(), { durability: 'none' });
    const memory = new MemoryEventStore();
    for (const store of [jsonl, memory]) {
      for (let i = 0; i < 1500; i++) await store.append(`s${i % 3}`, [{ id: `e${i}`, type: 't', time: 1, data: { i } }], 'any');
    }
    const withoutPages = { ...memory, readAll: memory.readAll.bind(memory), readAllPages: undefined } as unknown as EventStore;
    for (const store of [jsonl, memory, withoutPages]) expect(await pagedReadAllExample(store)).toEqual(new Map([['s0', 500], ['s1', 500], ['s2', 500]]));
    await jsonl.close();
  });

  it('docs/store-postgres.md', async () => {
    const schema = uniqueSchema('snippet');
    try {
      await postgresExample(PG_URL, schema);
      const store = await openPostgresEventStore({ connectionString: PG_URL, schema });
      expect(await store.revision('session-1')).toBe(0n);
      await store.close();
    } finally {
      await dropSchema(schema);
    }
  });

  describe('docs/store-eventstoredb.md (against the protocol fake)', () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    beforeAll(() => fake.start());
    afterAll(() => fake.stop());
    it('opens a store from a connection string and from a client', async () => {
      await expect(eventStoreDbExample(fake.connectionString)).resolves.toBeUndefined();
    });
  });
});

describe('projection snippets run', () => {
  const session = async () => {
    const store = new MemoryEventStore();
    const agent = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger }).createSession({ sessionId: 's1' });
    agent.followup(createUserMessage('one'));
    agent.followup(createUserMessage('two'));
    agent.steer(createUserMessage('steer'));
    await agent.whenIdle();
    await agent.dispose();
    return { store, agent };
  };

  it('docs/projections.md §3: the custom projection counts turns per session and checkpoints to a file', async () => {
    const { store } = await session();
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const state = await turnsPerSessionExample(store, tmp());
    log.mockRestore();
    expect(state).toEqual({ turns: { s1: 2 } });
  });

  it('docs/projections.md §2: one shared fold feeds the queue and the history', async () => {
    const { store, agent } = await session();
    const { queue$, history$ } = sharedFramesExample(store, 's1');
    const lastSplice = agent.events.filter((e) => e.type === 'agent/inbox/spliced').at(-1)!.seq;
    const messages = agent.events.filter((e) => e.type === 'user/message').length;
    const [queue, history] = await Promise.all([
      firstValueFrom(queue$.pipe(takeWhile((f) => f.seq < lastSplice, true), toArray())),
      firstValueFrom(history$.pipe(take(messages), toArray())),
    ]);
    expect(queue.at(-1)).toEqual({ seq: lastSplice, items: [] });
    expect(queue.some((f) => f.items.some((i) => i.placement === 'queued'))).toBe(true);
    expect(history.map((h) => h.class)).toEqual(['prompt', 'steering', 'prompt']);
  });
});
