import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { silentLogger } from '../../../runtime/logger.js';
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
const TOKENS = [
  { principal: 'alice', token: 'alice-token-0123456789' },
  { principal: 'bob', token: 'bob-token-0123456789ab' },
];
const as = (who: 'alice' | 'bob') => ({ headers: { authorization: `Bearer ${TOKENS.find((t) => t.principal === who)!.token}` } });
type Action = { kind: string; id: string | null; turn: number | null; actor: string | null; actorKind: string | null };
const audit = async (h: TestHost, sessionId: string): Promise<{ actions: Action[]; inputs: { id: string; actor: string | null }[] }> => {
  const res = await fetch(`${h.url}/api/audit/${sessionId}`, as('alice'));
  return (await res.json()) as { actions: Action[]; inputs: { id: string; actor: string | null }[] };
};
const actorOf = (e: LogEvent | undefined) => (e ? [e.metadata?.actor ?? null, e.metadata?.actorKind ?? null] : null);

describe('the host records the authenticated principal on everything a request does', () => {
  it('create, prompts, queue edits, a stop, a wake and a fork: each with the actor of the token that sent it', async () => {
    const h = await start({ http: { tokens: TOKENS } });
    valueOf(await h.rpc('session.create', { sessionId: 's' }, as('alice')));
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('one'), messageId: 'p1' }, as('alice')));
    await h.model.started(1);
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('two'), messageId: 'p2' }, as('bob')));
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('three'), messageId: 'p3' }, as('bob')));
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'p2', action: { kind: 'edit', content: text('two!') } }, as('alice')));
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'p3', action: { kind: 'remove' } }, as('bob')));
    valueOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'p2', action: { kind: 'steer' } }, as('alice')));
    valueOf(await h.rpc('session.cancel', { sessionId: 's' }, as('bob')));
    const agent = h.host.live.get('s')!.agent;
    await agent.whenIdle();
    h.model.releaseAll();
    expect(valueOf<{ woke: boolean }>(await h.rpc('session.wake', { sessionId: 's' }, as('alice'))).woke).toBe(true);
    await agent.whenIdle();
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'steer', content: text('four'), messageId: 'p4', durable: true }, as('bob')));
    await agent.whenIdle();
    valueOf(await h.rpc('session.fork', { sessionId: 's', newSessionId: 'f' }, as('bob')));

    const { actions, inputs } = await audit(h, 's');
    expect(actions.map((a) => [a.kind, a.id ?? a.turn, a.actor, a.actorKind])).toEqual([
      ['created', null, 'alice', 'user'],
      ['admitted', 'p1', 'alice', 'user'],
      ['admitted', 'p2', 'bob', 'user'],
      ['admitted', 'p3', 'bob', 'user'],
      ['edited', 'p2', 'alice', 'user'],
      ['canceled', 'p3', 'bob', 'user'],
      ['canceled', 'p2', 'alice', 'user'],
      ['moved', 'p2', 'alice', 'user'],
      ['stopped', 1, 'bob', 'user'],
      ['woke', 2, 'alice', 'user'],
      ['admitted', 'p4', 'bob', 'user'],
    ]);
    expect(Object.fromEntries(inputs.map((i) => [i.id, i.actor]))).toEqual({ p1: 'alice', p2: 'bob', p3: 'bob', p4: 'bob' });
    // the message keeps who sent it too (its source), the same principal as the splice's metadata
    const p4 = agent.events.find((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: { id: string }[] }).inserted.some((m) => m.id === 'p4'))!;
    expect((p4.data as { inserted: { source: unknown }[] }).inserted[0]!.source).toMatchObject({ kind: 'user', actor: 'bob' });
    expect(actorOf(p4)).toEqual(['bob', 'user']);
    const fork = h.host.live.get('f')!.agent;
    expect(actorOf(fork.events[0])).toEqual(['bob', 'user']);
    expect((await audit(h, 'f')).actions.map((a) => [a.kind, a.actor])).toEqual([['forked', 'bob']]);
  });

  it('without a token every request is the principal local, a user', async () => {
    const h = await start();
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('hi'), messageId: 'p1' }));
    const { actions } = await audit(h, 's');
    expect(actions.map((a) => [a.kind, a.actor, a.actorKind])).toEqual([
      ['created', 'local', 'user'],
      ['admitted', 'local', 'user'],
    ]);
  });

  it('a shutdown stops a running turn as the system, not as a user', async () => {
    const store = new MemoryEventStore();
    const h = await start({ store });
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('hi') }));
    await h.model.started(1);
    await h.server.close();
    await h.host.close();
    hosts = [];
    const stored: LogEvent[] = [];
    for await (const e of store.read('s')) stored.push({ ...e, seq: Number(e.revision) } as unknown as LogEvent);
    const end = stored.find((e) => e.type === 'turn/end')!;
    expect(end.data).toMatchObject({ reason: { kind: 'aborted', reason: { kind: 'hook', reason: 'host-shutdown' } } });
    expect(actorOf(end)).toEqual(['steerlog-host', 'system']);
  });
});

describe('children: who admitted what in a child, and who stopped it', () => {
  it("the parent starts the child (parent-session), a user's subagent.prompt and subagent.interrupt are the user's, a report is the child's", async () => {
    let manager!: ChildManager;
    const h = await start({ http: { tokens: TOKENS }, children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
    valueOf(await h.rpc('session.create', { sessionId: 'p' }, as('alice')));
    const parent = h.host.live.get('p')!.agent;
    await manager.startContinuable(parent, { content: 'task', childSessionId: 'c', label: 'worker' });
    await h.model.started(1);
    const child = h.runtime.liveAgent('c')!;
    const sent = valueOf<{ messageId: string }>(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('more') }, as('bob')));
    valueOf(await h.rpc('subagent.interrupt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable' }, as('alice')));
    await child.whenIdle();
    const report = manager.report(child, 'half done');
    const byKind = (events: readonly LogEvent[]) =>
      events.flatMap((e) =>
        e.type === 'session/created' || (e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'aborted')
          ? [[e.type, ...actorOf(e)!]]
          : e.type === 'agent/inbox/spliced'
            ? (e.data as { inserted: { id: string }[] }).inserted.map((m) => [m.id, ...actorOf(e)!])
            : [],
      );
    const [firstPrompt] = byKind(child.events).filter((r) => r[0] !== 'session/created');
    expect(byKind(child.events)).toEqual([
      ['session/created', 'p', 'parent-session'],
      [firstPrompt![0], 'p', 'parent-session'],
      [sent.messageId, 'bob', 'user'],
      ['turn/end', 'alice', 'user'],
    ]);
    expect(byKind(parent.events).filter((r) => r[0] === report)).toEqual([[report, 'c', 'child-session']]);
  });
});

describe('prompt refusals are never agent-busy', () => {
  it('a lone surrogate in a text block is bad-request naming the field; nothing is appended', async () => {
    const h = await start();
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    for (const bad of ['\ud800', 'a\udc00b', 'ok', '\ud83d']) {
      const content = [{ type: 'text', text: 'fine' }, { type: 'text', text: bad }];
      const r = await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content });
      if (bad === 'ok') {
        expect(r.result.ok).toBe(true);
        continue;
      }
      expect(errorOf(r)).toMatchObject({ code: 'bad-request', details: { issues: [{ path: ['content', 1, 'text'], message: expect.stringContaining('lone surrogate') }] } });
    }
    // the queue edit's content is checked the same way
    const edit = await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'x', action: { kind: 'edit', content: [{ type: 'text', text: '\ud800' }] } });
    expect(errorOf(edit)).toMatchObject({ code: 'bad-request', details: { issues: [{ path: ['action', 'content', 0, 'text'] }] } });
    // only the well-formed prompt was admitted
    const inserted = h.host.live.get('s')!.agent.events.flatMap((e) => (e.type === 'agent/inbox/spliced' ? (e.data as { inserted: { content: unknown }[] }).inserted : []));
    expect(inserted.map((m) => m.content)).toEqual([[{ type: 'text', text: 'fine' }, { type: 'text', text: 'ok' }]]);
  });

  it('a lone surrogate in the rpcId (kept in the message source) is bad-request naming rpcId, never a 500; nothing is appended', async () => {
    const h = await start();
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    const before = h.host.live.get('s')!.agent.events.length;
    const r = await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'x' }] }, { rpcId: 'a\ud800' });
    expect(errorOf(r)).toMatchObject({ code: 'bad-request', details: { issues: [{ path: ['rpcId'], message: expect.stringContaining('lone surrogate') }] } });
    expect(h.logs.some((l) => / 500 /.test(l))).toBe(false);
    expect(h.host.live.get('s')!.agent.events).toHaveLength(before);
  });

  it('a prompt over the event limit is message-too-large {limit, size}, nothing appended; so is an edit over it', async () => {
    const limit = 4096;
    const h = await start({ runtime: (o) => createRuntime({ ...o, maxEventBytes: limit }) });
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    const agent = h.host.live.get('s')!.agent;
    const before = agent.events.length;
    const big = errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('x'.repeat(limit)) }));
    expect(big).toMatchObject({ code: 'message-too-large', details: { limit } });
    expect((big.details as { size: number }).size).toBeGreaterThan(limit);
    expect(agent.events.length).toBe(before);
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('first'), messageId: 'p1' }));
    await h.model.started(1);
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('small'), messageId: 'p2' }));
    const edit = errorOf(await h.rpc('session.updateQueue', { sessionId: 's', itemId: 'p2', action: { kind: 'edit', content: text('y'.repeat(limit)) } }));
    expect(edit).toMatchObject({ code: 'message-too-large', details: { limit } });
  });
});
