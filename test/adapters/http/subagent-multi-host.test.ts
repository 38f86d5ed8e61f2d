import { afterAll, expect, it } from 'vitest';
import { openPostgresOwnership } from '../../../adapters/lease/postgres-ownership.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { openStore } from '../../../adapters/store/open-store.js';
import type { LogEvent } from '../../../domain/events.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { childTools } from '../../../runtime/children/child-tools.js';
import { Host } from '../../../host/host.js';
import type { CallResult } from '../../../host/host-types.js';
import { loadSession } from '../../../runtime/load-session.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { createRuntime, type Runtime } from '../../../runtime/runtime.js';
import { stepInputs } from '../../support/gate-model.js';
import { PG_URL, describePg, dropSchema, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { notateChild } from '../../runtime/children/child-harness.js';
import { until } from '../../runtime/children/support.js';

/**
 * A continuable child cold-resumed on a host that did not start it: hosts A and B share one PostgreSQL (sessions
 * leased per host). A starts child `c` of parent `p`; `c` settles; A stops. B resumes `p` (its lease), and `c` comes
 * back on B twice — by `p`'s model (`send_message`, epoch 2) and by a user's `subagent.prompt` (epoch 3) — each time
 * authorised against the lineage (the live parent on B, the child's header) before its log is folded. A parent `q`
 * of B cannot reach it. Both logs are asserted event by event.
 */
const schema = uniqueSchema('childhosts');
const url = new URL(PG_URL);
url.searchParams.set('schema', schema);
const spec = url.toString();
afterAll(() => dropSchema(schema));

/**
 * The child (persona `worker`) answers at once, except that its step given the parent's follow-up waits for `held`
 * (so p's turn ends first and nothing races); the parent sends `c` a follow-up when its step carries `[send]`.
 */
const model = (held: Promise<void> = Promise.resolve()) =>
  new ScriptedModel([], {
    whenExhausted: async (request) => {
      if (request.system === 'worker') {
        if (stepInputs(request).includes('from the parent')) await held;
        if (stepInputs(request).at(-1) === 'hold until stopped') {
          await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
          throw new Error('aborted');
        }
        return `done ${stepInputs(request).join(' + ')}`;
      }
      if (stepInputs(request).some((t) => t.includes('[send]'))) return { toolCalls: [{ callId: 'call-send', name: 'send_message', arguments: { subagent_id: 'c', message: 'from the parent' } }] };
      return 'ok';
    },
  });

interface TestHostOnPg {
  readonly host: Host;
  readonly runtime: Runtime;
  readonly children: ChildManager;
  readonly store: EventStore;
  call(method: string, payload: unknown): Promise<CallResult>;
}
const startHost = async (name: 'A' | 'B', block: number, held?: Promise<void>): Promise<TestHostOnPg> => {
  const store = await openStore(spec);
  let n = 0;
  let children!: ChildManager;
  const runtime = createRuntime({ store, model: model(held), tools: childTools(() => children), clock: steppingClock(), ids: sequentialIds(block), logger: silentLogger, writeBatchDelayMs: 2 });
  children = new ChildManager({ runtime, ids: { next: () => `${name}${++n}` }, logger: silentLogger });
  const ownership = await openPostgresOwnership({ url: spec, hostId: `host-${name}`, leaseMs: 5_000 });
  const host = new Host({ runtime, ownership, children, logger: silentLogger, newMessageId: () => `${name}-prompt-${++n}` });
  let rpc = 0;
  return { host, runtime, children, store, call: (method, payload) => host.call(method, payload, { rpcId: `${name}-rpc-${++rpc}`, principal: { id: 'local' } }) };
};

const ok = (r: CallResult): Record<string, unknown> => {
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.value as Record<string, unknown>;
};
const quiet = (h: TestHostOnPg, epochs: number) => () => {
  const p = h.host.live.get('p')?.agent;
  return p !== undefined && p.status === 'idle' && h.children.state('c') === 'absent' && p.events.filter((e) => e.type === 'subagent/end').length === epochs;
};
/** The scenario notation (a request's provenance folded into its answer, as in test/runtime/harness.ts). */
const notation = (events: readonly LogEvent[]): string[] =>
  events.filter((e) => e.type !== 'request/header' && e.type !== 'request/context').map((e) => notateChild(e));

describePg('a continuable child resumed on another host (PostgreSQL)', () => {
  it('A starts and settles c, A stops; on B, p\'s send_message and a user\'s subagent.prompt each cold-resume c as a new epoch; q cannot reach it', async () => {
    const a = await startHost('A', 0xa);
    ok(await a.call('session.create', { sessionId: 'p' }));
    const started = await a.children.startContinuable(a.host.live.get('p')!.agent, { content: 'task', childSessionId: 'c', label: 'worker', persona: 'worker' });
    expect(started).toEqual({ childSessionId: 'c', messageId: 'A1' });
    await until(quiet(a, 1));
    await a.host.close();
    await a.store.close();

    let open!: () => void;
    const b = await startHost('B', 0xb, new Promise<void>((r) => (open = r)));
    try {
      // the parent is not live on B yet: a follow-up needs it
      expect(await b.call('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: [{ type: 'text', text: 'x' }] })).toMatchObject({ ok: false, error: { code: 'subagent-parent-unavailable' } });
      // B resumes p (its lease); p's model sends c a follow-up: c is cold-resumed on B (epoch 2)
      ok(await b.call('session.prompt', { sessionId: 'p', mode: 'queue', content: [{ type: 'text', text: '[send] go on' }] }));
      await until(() => b.host.live.get('p')!.agent.status === 'idle' && b.children.state('c') === 'running');
      open();
      await until(quiet(b, 2));
      // a user's follow-up through B's route (epoch 3)
      expect(ok(await b.call('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: [{ type: 'text', text: 'from the user' }] }))).toEqual({ messageId: 'B5' });
      await until(quiet(b, 3));

      // another parent on B: the catalog does not list c as its child, and the manager refuses it before reading c
      ok(await b.call('session.create', { sessionId: 'q' }));
      expect(await b.call('subagent.prompt', { parentSessionId: 'q', childSessionId: 'c', mode: 'continuable', content: [{ type: 'text', text: 'x' }] })).toMatchObject({ ok: false, error: { code: 'subagent-not-found' } });
      const q = b.host.live.get('q')!.agent;
      await expect(b.children.followup(q, 'c', 'hijack')).rejects.toMatchObject({ code: 'subagent-unauthorized' });
      expect(b.children.state('c')).toBe('absent');
      expect(q.events.map((e) => e.type)).toEqual(['session/created']);

      await b.host.live.get('p')!.agent.checkpoint();
      const p = (await loadSession(b.store, 'p')).events;
      const c = (await loadSession(b.store, 'c')).events;
      expect(notation(p)).toEqual([
        'session/created',
        // on A: epoch 1, its settlement (a follow-up: p was idle) runs as p's turn 1
        'START(c,1)',
        'SPL(NT,0,[A3])',
        'TS(1)',
        'SPL(NT,0,rc=1)',
        'END(c,1,completed)',
        'SS(1,1)',
        'UM(A3:subagent-settled)',
        'AM',
        'SE(1,1)',
        'TE(1,completed)',
        // on B: the user's prompt, p's send_message resumes c (epoch 2), its settlement is p's turn 3
        'SPL(NT,0,[B-prompt-1])',
        'TS(2)',
        'SPL(NT,0,rc=1)',
        'SS(2,1)',
        'UM(B-prompt-1)',
        'AM',
        'TC(call-send)',
        'START(c,2)',
        'TR(call-send)',
        'SE(2,1)',
        'SS(2,2)',
        'AM',
        'SE(2,2)',
        'TE(2,completed)',
        'SPL(NT,0,[B4])',
        'TS(3)',
        'SPL(NT,0,rc=1)',
        'END(c,2,completed)',
        'SS(3,1)',
        'UM(B4:subagent-settled)',
        'AM',
        'SE(3,1)',
        'TE(3,completed)',
        // the user's subagent.prompt resumes c (epoch 3); its settlement is p's turn 4
        'START(c,3)',
        'SPL(NT,0,[B7])',
        'TS(4)',
        'SPL(NT,0,rc=1)',
        'END(c,3,completed)',
        'SS(4,1)',
        'UM(B7:subagent-settled)',
        'AM',
        'SE(4,1)',
        'TE(4,completed)',
      ]);
      expect(notation(c)).toEqual([
        'session/created',
        'DESC(continuable)',
        // epoch 1 on A
        'SPL(NT,0,[A1])',
        'TS(1)',
        'SPL(NT,0,rc=1)',
        'SS(1,1)',
        'UM(A1)',
        'AM',
        'SE(1,1)',
        'TE(1,completed)',
        // epoch 2 on B: p's send_message (source coordinator)
        'SPL(NT,0,[B2])',
        'TS(2)',
        'SPL(NT,0,rc=1)',
        'SS(2,1)',
        'UM(B2:coordinator)',
        'AM',
        'SE(2,1)',
        'TE(2,completed)',
        // epoch 3 on B: the user's subagent.prompt
        'SPL(NT,0,[B5])',
        'TS(3)',
        'SPL(NT,0,rc=1)',
        'SS(3,1)',
        'UM(B5)',
        'AM',
        'SE(3,1)',
        'TE(3,completed)',
      ]);
    } finally {
      await b.host.close();
      await b.store.close();
    }
  });
  it('A stops while its child is resident: the child is drained (canceled by its parent, settled into the parked parent); B resumes both', async () => {
    const a = await startHost('A', 0xc);
    ok(await a.call('session.create', { sessionId: 'p2' }));
    await a.children.startContinuable(a.host.live.get('p2')!.agent, { content: 'hold until stopped', childSessionId: 'c2', label: 'worker', persona: 'worker' });
    await until(() => a.runtime.liveAgent('c2')?.events.some((e) => e.type === 'step/start') === true);
    await a.host.close();
    await a.store.close();

    const b = await startHost('B', 0xd);
    try {
      const stopped = (await loadSession(b.store, 'c2')).events;
      expect(notation(stopped)).toEqual(['session/created', 'DESC(continuable)', 'SPL(NT,0,[A1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A1)', 'SE(1,1)', 'TE(1,aborted:parent)']);
      // the parent's log: the settlement was injected (no wake) and is parked in next-step; the epoch ended stopped
      expect(notation((await loadSession(b.store, 'p2')).events)).toEqual(['session/created', 'START(c2,1)', 'SPL(NS,0,[A3])', 'END(c2,1,stopped)']);
      // B: the user's prompt resumes p2, whose first turn claims the parked settlement with it; then c2 comes back
      ok(await b.call('session.prompt', { sessionId: 'p2', mode: 'queue', content: [{ type: 'text', text: 'what happened?' }] }));
      await until(() => b.host.live.get('p2')!.agent.status === 'idle' && b.host.live.get('p2')!.agent.events.some((e) => e.type === 'turn/end'));
      expect(ok(await b.call('subagent.prompt', { parentSessionId: 'p2', childSessionId: 'c2', mode: 'continuable', content: [{ type: 'text', text: 'again' }] }))).toEqual({ messageId: 'B2' });
      const p2 = b.host.live.get('p2')!.agent;
      await until(() => p2.status === 'idle' && b.children.state('c2') === 'absent' && p2.events.filter((e) => e.type === 'subagent/end').length === 2);
      await p2.checkpoint();
      expect(notation((await loadSession(b.store, 'p2')).events).slice(4)).toEqual([
        'SPL(NT,0,[B-prompt-1])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A3:subagent-settled)', 'UM(B-prompt-1)', 'AM', 'SE(1,1)', 'TE(1,completed)',
        'START(c2,2)', 'SPL(NT,0,[B4])', 'TS(2)', 'SPL(NT,0,rc=1)', 'END(c2,2,completed)', 'SS(2,1)', 'UM(B4:subagent-settled)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      ]);
      expect(notation((await loadSession(b.store, 'c2')).events).slice(9)).toEqual(['SPL(NT,0,[B2])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(B2)', 'AM', 'SE(2,1)', 'TE(2,completed)']);
    } finally {
      await b.host.close();
      await b.store.close();
    }
  });
});
