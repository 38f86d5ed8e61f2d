import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createRuntime, type Runtime } from '../../../runtime/runtime.js';
import { createUserMessage } from '../../../domain/message.js';
import { GateModel } from '../../support/gate-model.js';
import { errorOf, startTestHost, valueOf, type TestHost } from './http-support.js';

let hosts: TestHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.close();
  hosts = [];
});
const start = async (...args: Parameters<typeof startTestHost>) => {
  const h = await startTestHost(...args);
  hosts.push(h);
  return h;
};
const text = (t: string) => [{ type: 'text' as const, text: t }];
const storedTypes = async (store: MemoryEventStore, id: string) => {
  const out: string[] = [];
  for await (const e of store.read(id)) out.push(e.type);
  return out;
};

describe('session.prompt', () => {
  it('checks the time zone before the session, then the session; canonicalises a valid zone', async () => {
    const h = await start();
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'nobody', mode: 'queue', content: text('a'), clientTimeZone: 'Mars/Base' }))).toEqual({
      code: 'invalid-time-zone',
      message: expect.any(String),
      details: { value: 'Mars/Base' },
    });
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'nobody', mode: 'queue', content: text('a'), clientTimeZone: '+01:00' })).code).toBe('invalid-time-zone');
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'nobody', mode: 'queue', content: text('a') }))).toMatchObject({ code: 'session-not-found', details: { sessionId: 'nobody' } });
    const { sessionId } = valueOf<{ sessionId: string }>(await h.rpc('session.create', { sessionId: 's1' }));
    expect(sessionId).toBe('s1');
    expect(errorOf(await h.rpc('session.create', { sessionId: 's1' })).code).toBe('session-exists');
    const r = valueOf<{ seq: number }>(await h.rpc('session.prompt', { sessionId, mode: 'queue', content: text('a'), clientTimeZone: 'us/pacific' }, { rpcId: 'tz' }));
    const splice = h.host.live.get(sessionId)!.agent.events[r.seq]!.data as { inserted: { source: unknown }[] };
    expect(splice.inserted[0]!.source).toEqual({ kind: 'user', rpcId: 'tz', clientTimeZone: 'America/Los_Angeles', actor: 'local' });
  });

  it('refuses images the model cannot take or that are too large, after resolving the session', async () => {
    const h = await start({ host: { maxImageBytes: 6 } });
    await h.rpc('session.create', { sessionId: 's' });
    const img = (data: string) => [{ type: 'image', mediaType: 'image/png', data, name: 'x.png' }];
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: img('AAAAAAAAAAAA') }))).toMatchObject({ code: 'attachment-error', details: { reason: 'IMAGE_TOO_LARGE' } });
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'nope', mode: 'queue', content: img('AAAAAAAAAAAA') })).code).toBe('session-not-found');
    const ok = valueOf<{ seq: number }>(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: img('AAAA') }));
    const msg = (h.host.live.get('s')!.agent.events[ok.seq]!.data as { inserted: { content: unknown }[] }).inserted[0]!;
    expect(msg.content).toEqual([{ type: 'image', mediaType: 'image/png', data: 'AAAA' }]);
    const noImages = await start({ host: { modelAcceptsImages: false } });
    await noImages.rpc('session.create', { sessionId: 's' });
    expect(errorOf(await noImages.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: img('AAAA') }))).toMatchObject({ details: { reason: 'MODEL_DOES_NOT_SUPPORT_IMAGES' } });
    const unavailable = await start({ host: { modelUnavailable: () => ({ provider: 'openai', model: 'x' }) } });
    await unavailable.rpc('session.create', { sessionId: 's' });
    expect(errorOf(await unavailable.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('a') }))).toMatchObject({ code: 'model-unavailable', details: { provider: 'openai', model: 'x' } });
  });

  it('returns {accepted, messageId, seq}: the seq is the admission splice; durable:true replies only once the store has it', async () => {
    const store = new MemoryEventStore();
    const h = await start({ store, runtime: (o) => createRuntime({ ...o, writeBatchDelayMs: 60_000 }) });
    await h.rpc('session.create', { sessionId: 's' });
    const r1 = valueOf<{ messageId: string; seq: number; accepted: boolean; durable: boolean }>(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A') }));
    expect(r1).toMatchObject({ accepted: true, durable: false });
    const agent = h.host.live.get('s')!.agent;
    expect(agent.events[r1.seq]).toMatchObject({ type: 'agent/inbox/spliced', data: { target: 'next-turn', inserted: [{ id: r1.messageId }] } });
    await h.model.started(1);
    const r2 = valueOf<{ messageId: string; seq: number }>(await h.rpc('session.prompt', { sessionId: 's', mode: 'steer', content: text('B'), durable: true }));
    expect((await storedTypes(store, 's')).length).toBeGreaterThan(r2.seq);
    expect(agent.events[r2.seq]).toMatchObject({ type: 'agent/inbox/spliced', data: { target: 'next-step', inserted: [{ id: r2.messageId }] } });
  });
});

describe('idempotent prompts', () => {
  it('a retry with the same messageId (or Idempotency-Key) returns the first receipt and appends nothing; other content is a conflict', async () => {
    const h = await start();
    await h.rpc('session.create', { sessionId: 's' });
    const first = valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'm-1' }));
    const agent = h.host.live.get('s')!.agent;
    const length = agent.events.length;
    const again = valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'm-1' }));
    expect(again).toEqual({ ...first, duplicate: true });
    const byHeader = valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A') }, { headers: { 'idempotency-key': 'm-1' } }));
    expect(byHeader).toEqual({ ...first, duplicate: true });
    expect(agent.events.length).toBe(length);
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('B'), messageId: 'm-1' })).code).toBe('idempotency-conflict');
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'm-2' }, { headers: { 'idempotency-key': 'm-3' } })).code).toBe('bad-request');
    expect(agent.events.length).toBe(length);
  });

  it('after a crash: a durable receipt survives (the retry gets it back, nothing appended); a non-durable admission lost in the crash is admitted again', async () => {
    const store = new MemoryEventStore();
    const model = new GateModel();
    const a = await start({ store, model, runtime: (o) => createRuntime({ ...o, writeBatchDelayMs: 60_000 }) });
    await a.rpc('session.create', { sessionId: 's' });
    const durable = valueOf<{ seq: number; messageId: string }>(await a.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'd-1', durable: true }));
    await model.started(1);
    const lost = valueOf<{ seq: number }>(await a.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('B'), messageId: 'n-1' }));
    expect(lost.seq).toBeGreaterThan(durable.seq);
    // crash: host a vanishes without writing its tail (the store keeps only what was durable)
    await a.server.close();
    hosts = hosts.filter((x) => x !== a);
    const stored = await storedTypes(store, 's');
    expect(stored.length).toBeLessThanOrEqual(lost.seq);

    const b = await start({ store });
    const retry = valueOf(await b.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'd-1', durable: true }));
    expect(retry).toEqual({ accepted: true, messageId: 'd-1', seq: durable.seq, durable: true, duplicate: true });
    const readmitted = valueOf<{ duplicate?: true; seq: number }>(await b.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('B'), messageId: 'n-1', durable: true }));
    expect(readmitted.duplicate).toBeUndefined();
    const ids: string[] = [];
    for await (const e of store.read('s')) if (e.type === 'agent/inbox/spliced') for (const m of (e.data as { inserted: { id: string }[] }).inserted) ids.push(m.id);
    expect(ids.filter((i) => i === 'd-1')).toHaveLength(1);
    expect(ids.filter((i) => i === 'n-1')).toHaveLength(1);
  });
});

describe('cold sessions', () => {
  it('resume once for concurrent prompts, never run parked work on resume, run it first at the next waking prompt', async () => {
    const store = new MemoryEventStore();
    const before = createRuntime({ store, model: new GateModel() });
    const agent = before.createSession({ sessionId: 's' });
    agent.inject(createUserMessage('parked context', { kind: 'plugin', plugin: 'p' }, { newId: () => 'X' }));
    await agent.checkpoint();
    let resumes = 0;
    const model = new GateModel();
    const h = await start({
      store,
      model,
      runtime: (o) => {
        const rt = createRuntime(o);
        return { ...rt, resume: (id, opts) => (resumes++, rt.resume(id, opts)) } satisfies Runtime;
      },
    });
    const get = valueOf<{ live: boolean; queue: { id: string }[] }>(await h.rpc('session.get', { sessionId: 's' }));
    expect(get).toMatchObject({ live: false, queue: [{ id: 'X', placement: 'context' }] });
    const [p1, p2] = await Promise.all([
      h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('W1'), messageId: 'W1' }),
      h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('W2'), messageId: 'W2' }),
    ]);
    valueOf(p1);
    valueOf(p2);
    expect(resumes).toBe(1);
    const req = await model.started(1);
    expect(req.messages.map((m) => (m.role === 'user' ? m.id : m.role))).toEqual(['X', 'W1']);
  });

  it('updateQueue and cancel never resume: queue-item-not-found and session-not-found on a cold session', async () => {
    const store = new MemoryEventStore();
    const rt = createRuntime({ store, model: new GateModel() });
    await rt.createSession({ sessionId: 'cold' }).checkpoint();
    const h = await start({ store });
    expect(errorOf(await h.rpc('session.updateQueue', { sessionId: 'cold', itemId: 'B', action: { kind: 'remove' } }))).toMatchObject({ code: 'queue-item-not-found', details: { itemId: 'B' } });
    expect(errorOf(await h.rpc('session.cancel', { sessionId: 'cold' })).code).toBe('session-not-found');
    expect(h.host.live.has('cold')).toBe(false);
  });

  it('a child session is agent-busy', async () => {
    const store = new MemoryEventStore();
    const rt = createRuntime({ store, model: new GateModel() });
    await rt.createSession({ sessionId: 'child', kind: 'continuable', parentSession: 'p' }).checkpoint();
    const h = await start({ store });
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'child', mode: 'queue', content: text('x') }))).toMatchObject({ code: 'agent-busy', details: { reason: 'subagent-owned' } });
  });

  it('every generic session route refuses a child session (continuable or one-shot) agent-busy', async () => {
    const store = new MemoryEventStore();
    const rt = createRuntime({ store, model: new GateModel() });
    await rt.createSession({ sessionId: 'c1', kind: 'continuable', parentSession: 'p' }).checkpoint();
    await rt.createSession({ sessionId: 'c2', kind: 'one-shot', parentSession: 'p' }).checkpoint();
    const h = await start({ store });
    for (const sessionId of ['c1', 'c2']) {
      const calls: [string, unknown][] = [
        ['session.prompt', { sessionId, mode: 'queue', content: text('x') }],
        ['session.updateQueue', { sessionId, itemId: 'B', action: { kind: 'remove' } }],
        ['session.cancel', { sessionId }],
        ['session.wake', { sessionId }],
        ['session.fork', { sessionId }],
      ];
      for (const [method, payload] of calls) {
        expect(errorOf(await h.rpc(method, payload)), `${method} ${sessionId}`).toMatchObject({ code: 'agent-busy', details: { reason: 'subagent-owned' } });
      }
    }
    expect(h.host.live.size).toBe(0);
    // the time zone is still checked first
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'c1', mode: 'queue', content: text('x'), clientTimeZone: '+01:00' })).code).toBe('invalid-time-zone');
  });
});

describe('queue edits, cancel, wake, fork, history', () => {
  it('edit, remove and steer by message id with the error order; cancel keeps the queue parked; wake runs it', async () => {
    const h = await start();
    await h.rpc('session.create', { sessionId: 's' });
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'A' });
    await h.model.started(1);
    for (const id of ['B', 'D', 'E']) await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text(id), messageId: id });
    expect(errorOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'B', action: { kind: 'edit', content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }] } }))).toMatchObject({ code: 'attachment-error', details: { reason: 'QUEUE_EDIT_NON_TEXT' } });
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'B', action: { kind: 'edit', content: text('B2') } }));
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'E', action: { kind: 'remove' } }));
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'D', action: { kind: 'steer' } }));
    expect(errorOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'D', action: { kind: 'steer' } }))).toMatchObject({ code: 'steer-unavailable', details: { itemId: 'D' } });
    expect(errorOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'E', action: { kind: 'remove' } })).code).toBe('queue-item-not-found');
    const q = valueOf<{ queue: { id: string; placement: string; message: { content: unknown } }[] }>(await h.rpc('session.get', { sessionId: 's' })).queue;
    expect(q.map((r) => `${r.id}:${r.placement}`)).toEqual(['B:queued', 'D:steering']);
    expect(q[0]!.message.content).toEqual(text('B2'));
    valueOf(await h.rpc('session.cancel', { sessionId: 's' }));
    const agent = h.host.live.get('s')!.agent;
    await agent.whenIdle();
    expect(agent.status).toBe('idle');
    expect(valueOf<{ queue: { id: string }[] }>(await h.rpc('session.get', { sessionId: 's' })).queue.map((r) => r.id)).toEqual(['B', 'D']);
    h.model.releaseAll();
    expect(valueOf(await h.rpc('session.wake', { sessionId: 's' }))).toEqual({ accepted: true, woke: true });
    await agent.whenIdle();
    const hist = valueOf<{ events: { event: { type: string; data: { id?: string } }; class?: string }[] }>(await h.rpc('session.history', { sessionId: 's' }));
    const classes = hist.events.filter((e) => e.event.type === 'user/message').map((e) => `${e.event.data.id}:${e.class}`);
    expect(classes).toEqual(['A:prompt', 'D:steering', 'B:prompt']);
  });

  it('history pages by seq; fork copies the log and starts an empty inbox; list shows both', async () => {
    const h = await start();
    h.model.releaseAll();
    await h.rpc('session.create', { sessionId: 's' });
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A') });
    await h.host.live.get('s')!.agent.whenIdle();
    const all = valueOf<{ events: unknown[]; lastSeq: number; nextAfter: number | null }>(await h.rpc('session.history', { sessionId: 's' }));
    expect(all.nextAfter).toBeNull();
    const p1 = valueOf<{ events: { event: { seq: number } }[]; nextAfter: number }>(await h.rpc('session.history', { sessionId: 's', limit: 3 }));
    expect(p1.events.map((e) => e.event.seq)).toEqual([0, 1, 2]);
    const p2 = valueOf<{ events: { event: { seq: number } }[] }>(await h.rpc('session.history', { sessionId: 's', after: p1.nextAfter, limit: 3 }));
    expect(p2.events.map((e) => e.event.seq)).toEqual([3, 4, 5]);
    expect(valueOf(await h.rpc('session.fork', { sessionId: 's', newSessionId: 'f' }))).toEqual({ sessionId: 'f' });
    expect(errorOf(await h.rpc('session.fork', { sessionId: 's', boundary: 3 })).code).toBe('invalid-fork-boundary');
    expect(errorOf(await h.rpc('session.fork', { sessionId: 'zz' })).code).toBe('session-not-found');
    const list = valueOf<{ sessions: { sessionId: string; parentSessionId?: string; live: boolean }[] }>(await h.rpc('session.list', {}));
    expect(list.sessions.map((s) => [s.sessionId, s.parentSessionId ?? null, s.live])).toEqual([
      ['s', null, true],
      ['f', 's', true],
    ]);
  });
});
