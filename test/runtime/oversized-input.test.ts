import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptStep } from '../../adapters/model/scripted/scripted-model.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { openPostgresEventStore } from '../../adapters/store/postgres/index.js';
import { openEventStoreDbStore } from '../../adapters/store/eventstoredb/index.js';
import { FakeEsdb } from '../adapters/store/eventstoredb/fake/esdb-fake.js';
import type { MessageId } from '../../domain/brand.js';
import { createUserMessage, type MessageSource, type UserMessage } from '../../domain/message.js';
import type { Agent } from '../../runtime/agent.js';
import { isMessageTooLargeError, type MessageTooLargeError } from '../../runtime/errors.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { eventSizeBytes } from '../../runtime/ports/store-validation.js';
import { createRuntime, type Runtime } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';
import { uniqueSessionId } from '../support/test-store.js';
import { dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { deferred, expectLogAgrees } from './harness.js';

/**
 * One oversized input never poisons a session: on every store, input whose event would exceed the store's maximum
 * event size is refused at admission with `message-too-large {limit, size}` and nothing is logged; oversized tool
 * outcomes and model answers end as an error result / an `error` turn; the session keeps working and its store holds
 * exactly its live log.
 */

/** The stores' limit in these tests: small, so the tests stay fast; the mechanism is the same at 1 MiB. */
const LIMIT = 8192;
/** Every id the runtime draws in these tests has this length (sequentialIds are UUID-shaped). */
const ID = '00000000-0000-4000-8000-000000000000';

const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});

/** The EventStoreDB adapter against the in-process protocol fake (not a real server: see docs/store-eventstoredb.md). */
const esdbFake = new FakeEsdb({ features: 'batch-append' });
let esdbStarted: Promise<void> | null = null;
afterAll(async () => {
  if (esdbStarted) await esdbFake.stop();
});

const STORES: readonly { readonly name: string; readonly open: (maxEventBytes: number) => Promise<EventStore> }[] = [
  { name: 'memory', open: async (maxEventBytes) => new MemoryEventStore({ maxEventBytes }) },
  {
    name: 'jsonl',
    open: async (maxEventBytes) => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-oversized-'));
      dirs.push(dir);
      return openJsonlEventStore(dir, { maxEventBytes, durability: 'none' });
    },
  },
  {
    name: 'postgres',
    open: async (maxEventBytes) => {
      const schema = uniqueSchema('big');
      schemas.push(schema);
      return openPostgresEventStore({ connectionString: PG_URL, schema, maxEventBytes });
    },
  },
  {
    name: 'eventstoredb (protocol fake)',
    open: async (maxEventBytes) => {
      await (esdbStarted ??= esdbFake.start());
      return openEventStoreDbStore({ connectionString: esdbFake.connectionString, maxEventBytes });
    },
  },
];

const message = (id: string, text: string, source: MessageSource = { kind: 'user' }): UserMessage =>
  createUserMessage(text, source, { newId: () => id as MessageId });
const big = (id: string, bytes = LIMIT + 1): UserMessage => message(id, 'x'.repeat(bytes));

/** The size of the splice that inserts `m` at `start` of `target`, as the store measures it. */
const spliceSize = (m: UserMessage, target = 'next-turn', start = 0): number =>
  eventSizeBytes({ id: ID, type: 'agent/inbox/spliced', data: { target, start, inserted: [m] } });

/** The size of the user/message a message becomes when it enters a step (caused by its claim: a UUID-sized id). */
const enteredSize = (m: UserMessage): number => eventSizeBytes({ id: ID, type: 'user/message', data: m, metadata: { causationId: ID } });
/** What admission measures: the larger of the message's insertion splice and the user/message it will become. */
const admissionSize = (m: UserMessage, target = 'next-turn', start = 0): number => Math.max(spliceSize(m, target, start), enteredSize(m));

/** A message whose admission at next-turn[0] measures exactly `bytes` bytes. */
const sized = (id: string, bytes: number): UserMessage => {
  const empty = message(id, '');
  return message(id, 'x'.repeat(bytes - admissionSize(empty)));
};

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

const expectTooLarge = (e: unknown, limit = LIMIT): MessageTooLargeError => {
  expect(isMessageTooLargeError(e), String(e)).toBe(true);
  const err = e as MessageTooLargeError;
  expect(err.code).toBe('message-too-large');
  expect(err.limit).toBe(limit);
  expect(err.size).toBeGreaterThan(limit);
  return err;
};

interface Setup {
  readonly runtime: Runtime;
  readonly agent: Agent;
  readonly store: EventStore;
  readonly errors: string[];
}

describe.each(STORES)('oversized input on the $name store', ({ open }) => {
  const setup = async (opts: { script?: readonly ScriptStep[]; tools?: readonly Tool<Agent>[]; maxEventBytes?: number; storeLimit?: number } = {}): Promise<Setup> => {
    const store = await open(opts.storeLimit ?? LIMIT);
    const runtime = createRuntime({
      store,
      model: new ScriptedModel(opts.script ?? [], { whenExhausted: 'ok' }),
      ...(opts.tools ? { tools: opts.tools } : {}),
      clock: steppingClock(),
      ids: sequentialIds(),
      logger: silentLogger,
      writeBatchDelayMs: 5,
      ...(opts.maxEventBytes !== undefined ? { maxEventBytes: opts.maxEventBytes } : {}),
    });
    const agent = runtime.createSession({ sessionId: uniqueSessionId('big') });
    const errors: string[] = [];
    agent.on('error', (e) => errors.push(e.error.code));
    return { runtime, agent, store, errors };
  };

  /** The session still works: a normal follow-up runs a completed turn, and everything reaches the store. */
  const expectHealthy = async ({ agent, store }: Setup, id = 'after'): Promise<void> => {
    agent.followup(message(id, 'still here'));
    await agent.whenIdle();
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
    await expectLogAgrees(agent, store);
    await agent.dispose();
    await store.close();
  };

  it('the store says its limit, and the first input being too large still leaves session/created stored (resume finds the session)', async () => {
    const s = await setup();
    expect(s.store.maxEventBytes).toBe(LIMIT);
    expectTooLarge(thrown(() => s.agent.followup(big('A'))));
    expect(s.agent.events.map((e) => e.type)).toEqual(['session/created']);
    expect(s.agent.status).toBe('idle');
    await s.agent.dispose();
    const resumed = await s.runtime.resume(s.agent.sessionId);
    expect(resumed.events.map((e) => e.type)).toEqual(['session/created']);
    await resumed.dispose();
    await s.store.close();
  });

  it('measures as the store does: a splice of exactly the limit is admitted and stored, one byte more is refused with its size', async () => {
    const s = await setup();
    const exact = sized('E', LIMIT);
    expect(admissionSize(exact)).toBe(LIMIT);
    s.agent.inject(exact);
    await s.agent.checkpoint();
    const over = sized('F', LIMIT + 1);
    const e = expectTooLarge(thrown(() => s.agent.inject(over)));
    // next-turn[0] is free, so its splice is the measured one
    expect(e.size).toBe(LIMIT + 1);
    expect(s.agent.inbox.nextStep.map((m) => m.id)).toEqual(['E']);
    await expectHealthy(s);
  });

  it('followup, steer, inject, send and inbox edits: refused synchronously, nothing logged, no wake', async () => {
    const s = await setup();
    const before = s.agent.events.length;
    expectTooLarge(thrown(() => s.agent.followup(big('A'))));
    expectTooLarge(thrown(() => s.agent.steer(big('B'))));
    expectTooLarge(thrown(() => s.agent.inject(big('C'))));
    expectTooLarge(thrown(() => s.agent.send(big('D'), 'next-turn', false)));
    expectTooLarge(thrown(() => s.agent.inbox.append('next-step', big('E'))));
    expectTooLarge(thrown(() => s.agent.inbox.splice('next-turn', 0, 0, message('F', 'small'), big('G'))));
    // metadata: a large source record is part of the message
    expectTooLarge(thrown(() => s.agent.followup(message('H', 'hi', { kind: 'plugin', plugin: 'p', blob: 'x'.repeat(LIMIT) }))));
    s.agent.inject(message('P', 'pending'));
    expectTooLarge(thrown(() => s.agent.inbox.replace('P', big('P'))));
    expect(s.agent.events.length).toBe(before + 1);
    expect(s.agent.inbox.nextStep.map((m) => m.id)).toEqual(['P']);
    expect(s.agent.inbox.nextTurn).toHaveLength(0);
    expect(s.agent.status).toBe('idle');
    await expectHealthy(s);
  });

  it('accept() rejects with the typed error and logs nothing', async () => {
    const s = await setup();
    const before = s.agent.events.length;
    expectTooLarge(await s.agent.accept(big('A')).catch((e: unknown) => e));
    expect(s.agent.events.length).toBe(before);
    await expectHealthy(s);
  });

  it('queue.edit with oversized text is a typed refusal; the item keeps its old text', async () => {
    const s = await setup();
    s.agent.send(message('Q', 'short'), 'next-turn', false);
    const before = s.agent.events.length;
    const r = s.agent.queue.edit('Q', 'x'.repeat(LIMIT + 1));
    expect(E.isLeft(r)).toBe(true);
    expectTooLarge(E.isLeft(r) ? r.left : null);
    expect(s.agent.events.length).toBe(before);
    expect(s.agent.inbox.nextTurn[0]!.content).toEqual([{ type: 'text', text: 'short' }]);
    await expectHealthy(s);
  });

  it('queue.steer of an item whose re-insertion into next-step would be too large is refused before the removal; the item stays queued', async () => {
    const s = await setup();
    const hold = deferred();
    s.agent.on('pre-step', async (c, next) => {
      if (c.turn === 1) await hold.promise;
      return next();
    });
    s.agent.followup(message('A', 'go'));
    // Q's admission at next-turn[1] is exactly the limit; moved to next-step[n] (n contexts ahead of it) its splice
    // grows with the digits of n until it is larger than the limit
    const q = message('Q', 'x'.repeat(LIMIT - admissionSize(message('Q', ''), 'next-turn', 1)));
    expect(admissionSize(q, 'next-turn', 1)).toBe(LIMIT);
    s.agent.send(q, 'next-turn', false);
    let n = 0;
    while (spliceSize(q, 'next-step', n) <= LIMIT) s.agent.inject(message(`c${n++}`, 'c', { kind: 'plugin', plugin: 'p' }));
    expect(n).toBeGreaterThan(0);
    const before = s.agent.events.length;
    const r = s.agent.queue.steer('Q');
    expect(E.isLeft(r)).toBe(true);
    expect(expectTooLarge(E.isLeft(r) ? r.left : null).size).toBe(spliceSize(q, 'next-step', n));
    expect(s.agent.events.length).toBe(before);
    expect(s.agent.inbox.nextTurn.map((m) => m.id)).toEqual(['Q']);
    hold.resolve();
    await s.agent.whenIdle();
    await expectHealthy(s);
  });

  it('a cancel cause too large for turn/end is refused before anything is canceled', async () => {
    const s = await setup();
    s.agent.send(message('Q', 'short'), 'next-turn', false);
    const before = s.agent.events.length;
    expectTooLarge(thrown(() => s.agent.cancel({ kind: 'hook', reason: 'x'.repeat(LIMIT) })));
    expect(s.agent.events.length).toBe(before);
    expect(s.agent.inbox.nextTurn.map((m) => m.id)).toEqual(['Q']);
    await expectHealthy(s);
  });

  it('an oversized tool result becomes an error result the model sees; the turn goes on', async () => {
    const s = await setup({
      script: [{ toolCalls: [{ callId: 'c1', name: 'dump' }, { callId: 'c2', name: 'ctx' }] }, 'handled'],
      tools: [
        { name: 'dump', execute: () => ({ content: 'x'.repeat(LIMIT + 1) }) },
        { name: 'ctx', execute: () => ({ content: 'ok', additionalContexts: [big('K')] }) },
      ],
    });
    s.agent.followup(message('A', 'go'));
    await s.agent.whenIdle();
    const results = s.agent.events.filter((e) => e.type === 'tool/result').map((e) => e.data as { error?: { code: string }; message: { isError?: boolean; content: { text: string }[] } });
    // the oversized result is replaced by an error result; the oversized context makes the outcome invalid (nothing staged)
    expect(results.map((r) => r.error?.code)).toEqual(['TOOL_RESULT_TOO_LARGE', 'INVALID_TOOL_OUTCOME']);
    expect(results.every((r) => r.message.isError === true)).toBe(true);
    for (const r of results) expect(r.message.content[0]!.text).toContain(`too large to record`);
    expect(results[0]!.message.content[0]!.text).toContain(`the limit is ${LIMIT}`);
    expect(s.agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
    expect(s.agent.inbox.nextStep).toHaveLength(0);
    await expectHealthy(s);
  });

  it("a tool's context is measured with the metadata its splice carries (the tool/result's id, the tool as actor): one byte over is refused at admission, the limit itself is staged", async () => {
    // the splice that stages a context of tool `ctx` into an empty next-step, with its metadata
    const staged = (m: UserMessage): number =>
      eventSizeBytes({ id: ID, type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, inserted: [m] }, metadata: { causationId: ID, actor: 'tool:ctx', actorKind: 'plugin' } });
    const ofSize = (id: string, bytes: number) => message(id, 'x'.repeat(1 + bytes - staged(message(id, 'x', { kind: 'plugin', plugin: 'p' }))), { kind: 'plugin', plugin: 'p' });
    const over = ofSize('K', LIMIT + 1);
    const fits = ofSize('J', LIMIT);
    expect([staged(over), staged(fits)]).toEqual([LIMIT + 1, LIMIT]);
    // without its metadata the splice (and the user/message it becomes) would fit
    expect(admissionSize(over, 'next-step')).toBeLessThanOrEqual(LIMIT);
    const s = await setup({
      script: [{ toolCalls: [{ callId: 'c1', name: 'ctx' }] }, { toolCalls: [{ callId: 'c2', name: 'ctx' }] }, 'handled'],
      tools: [{ name: 'ctx', execute: (_args, { callId }) => ({ content: 'ok', additionalContexts: [callId === 'c1' ? over : fits] }) }],
    });
    s.agent.followup(message('A', 'go'));
    await s.agent.whenIdle();
    const results = s.agent.events.filter((e) => e.type === 'tool/result').map((e) => e.data as { error?: { code: string }; message: { content: { text: string }[] } });
    expect(results.map((r) => r.error?.code)).toEqual(['INVALID_TOOL_OUTCOME', undefined]);
    expect(results[0]!.message.content[0]!.text).toContain(`additional context 0 is too large to record: ${LIMIT + 1} bytes; the limit is ${LIMIT}`);
    const splices = s.agent.events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { target: string }).target === 'next-step');
    expect(splices.map((e) => (e.data as { inserted: { id: string }[] }).inserted.map((m) => m.id))).toEqual([['J'], []]);
    expect(s.agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
    expect(s.errors).toEqual([]);
    await expectHealthy(s);
  });

  it('an oversized model answer ends the turn error MESSAGE_TOO_LARGE; the next turn runs', async () => {
    const s = await setup({ script: ['x'.repeat(LIMIT + 1)] });
    s.agent.followup(message('A', 'go'));
    await s.agent.whenIdle();
    expect(s.agent.events.some((e) => e.type === 'assistant/message')).toBe(false);
    expect(s.agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'MESSAGE_TOO_LARGE' } } } });
    expect(s.errors).toEqual(['MESSAGE_TOO_LARGE']);
    await expectHealthy(s);
  });

  it('a pre-step rewrite that enters an oversized message ends the turn error MESSAGE_TOO_LARGE; nothing oversized is logged', async () => {
    const s = await setup();
    s.agent.on('pre-step', async (c, next) => (c.turn === 1 ? { kind: 'enter', messages: [big('R')] } : next()));
    s.agent.followup(message('A', 'go'));
    await s.agent.whenIdle();
    expect(s.agent.events.some((e) => e.type === 'user/message')).toBe(false);
    expect(s.agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'MESSAGE_TOO_LARGE' } } } });
    await expectHealthy(s);
  });

  it('an oversized streamed chunk ends the turn error MESSAGE_TOO_LARGE', async () => {
    const s = await setup({ script: [{ text: 'done', chunks: ['a', 'x'.repeat(LIMIT + 1), 'b'] }] });
    s.agent.followup(message('A', 'go'));
    await s.agent.whenIdle();
    expect(s.agent.events.filter((e) => e.type === 'assistant/chunk')).toHaveLength(1);
    expect(s.agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error', error: { code: 'MESSAGE_TOO_LARGE' } } } });
    await expectHealthy(s);
  });

  it('a runtime maxEventBytes lowers the limit (never raises it)', async () => {
    const lowered = await setup({ maxEventBytes: 2048 });
    expectTooLarge(thrown(() => lowered.agent.followup(big('A', 3000))), 2048);
    await expectHealthy(lowered);
    const raised = await setup({ maxEventBytes: 10 * LIMIT });
    expectTooLarge(thrown(() => raised.agent.followup(big('A'))), LIMIT);
    await expectHealthy(raised);
  });

  it('session creation and fork: an event the runtime cannot log refuses the call and nothing is written', async () => {
    const store = await open(LIMIT);
    const tiny = createRuntime({ store, model: new ScriptedModel([]), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1, maxEventBytes: 64 });
    const id = uniqueSessionId('tiny');
    expectTooLarge(thrown(() => tiny.createSession({ sessionId: id })), 64);
    // a parent written under the store's limit, forked by a runtime whose limit its seed exceeds
    const parent = createRuntime({ store, model: new ScriptedModel([]), ids: sequentialIds(1), logger: silentLogger, writeBatchDelayMs: 1 }).createSession({ sessionId: uniqueSessionId('parent') });
    parent.inject(message('A', 'y'.repeat(3000)));
    await parent.dispose();
    const lowered = createRuntime({ store, model: new ScriptedModel([]), ids: sequentialIds(2), logger: silentLogger, writeBatchDelayMs: 1, maxEventBytes: 2048 });
    const child = uniqueSessionId('child');
    expectTooLarge(await lowered.fork(parent.sessionId, { sessionId: child }).catch((e: unknown) => e), 2048);
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.revision(id)).toBe('no_stream');
    expect(await store.revision(child)).toBe('no_stream');
    await store.close();
  });
});

describe('at the default limit (1 MiB) of the memory store', () => {
  it('a 1 MiB paste is refused at admission; checkpoint, later turns and dispose still work', async () => {
    const store = new MemoryEventStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 5 });
    const agent = runtime.createSession();
    const e = expectTooLarge(thrown(() => agent.followup(big('A', 1024 * 1024))), 1024 * 1024);
    expect(e.size).toBe(admissionSize(big('A', 1024 * 1024)));
    await agent.checkpoint();
    agent.followup(message('B', 'small'));
    await agent.whenIdle();
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
    await expectLogAgrees(agent, store);
    await agent.dispose();
  });
});
