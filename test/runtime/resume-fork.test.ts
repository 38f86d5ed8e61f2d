import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import { isRuntimeError } from '../../runtime/errors.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { deferred, ids, notate } from './harness.js';

const runtimeOn = (store: MemoryEventStore, prefix = 0) =>
  createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(prefix), logger: silentLogger, writeBatchDelayMs: 1 });
const durable = (events: readonly LogEvent[]) => events.filter((e) => e.type !== 'session/created').map(notate);
const audit = (events: readonly LogEvent[]) => auditLines('s', events.map((e) => JSON.stringify(e)));
const rejection = async (p: Promise<unknown>) => p.then(() => { throw new Error('expected a rejection'); }, (e: unknown) => e);

describe('resume (scenario 52)', () => {
  it('rebuilds pending lists and the last turn from the store, never wakes, and runs parked work in claim order at the next waking send', async () => {
    const store2 = new MemoryEventStore();
    const a = runtimeOn(store2).createSession({ sessionId: 's-52' });
    a.followup(msg('A'));
    await a.whenIdle();
    a.inject(ctx('C'));
    a.inbox.append('next-turn', msg('Q'));
    await a.checkpoint();

    const r = runtimeOn(store2, 1);
    const resumed = await r.resume('s-52');
    expect(resumed.status).toBe('idle');
    expect(ids(resumed.inbox.nextStep)).toEqual(['C']);
    expect(ids(resumed.inbox.nextTurn)).toEqual(['Q']);
    expect(resumed.events.length).toBe(a.events.length);
    resumed.followup(msg('B'));
    await resumed.whenIdle();
    const after = durable(resumed.events).slice(durable(a.events).length);
    expect(after).toEqual([
      // the resumed runtime's first request says so; the route is the one the log already holds (no request/context)
      'SPL(NT,1,[B])', 'TS(2)', 'SPL(NS,0,rc=1)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(C)', 'UM(Q)', 'RH(resume)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      'TS(3)', 'SPL(NT,0,rc=1)', 'SS(3,1)', 'UM(B)', 'AM', 'SE(3,1)', 'TE(3,completed)',
    ]);
    await resumed.checkpoint();
    expect(audit(resumed.events).ok).toBe(true);
  });

  it('refuses a live session, an unknown session and a corrupt log with typed errors', async () => {
    const store = new MemoryEventStore();
    const rt = runtimeOn(store);
    const a = rt.createSession({ sessionId: 'live' });
    await a.checkpoint();
    expect((await rejection(rt.resume('live')) as { code: string }).code).toBe('session-live');
    expect((await rejection(rt.resume('nope')) as { code: string }).code).toBe('session-not-found');
    await store.append('corrupt', [{ id: '00000000-0000-4000-8000-0000000000aa', type: 'turn/start', time: 1, data: { turn: 1 } }], 'no_stream');
    const e = await rejection(rt.resume('corrupt'));
    expect(isRuntimeError(e) && e.code).toBe('session-corrupt');
    await a.dispose();
    expect((await rt.resume('live')).sessionId).toBe('live');
  });
});

describe('crash repair (scenario 54)', () => {
  it('closes an open tail turn: results for calls without one, step/end, turn/end interrupted; claimed input is not restored', async () => {
    const store = new MemoryEventStore();
    const started = deferred();
    const rt = createRuntime({
      store,
      model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'hang' }, { callId: 'c2', name: 'hang' }] }]),
      tools: [{ name: 'hang', execute: () => (started.resolve(), new Promise(() => {})) }],
      clock: steppingClock(),
      ids: sequentialIds(),
      logger: silentLogger,
      writeBatchDelayMs: 1,
    });
    const a = rt.createSession({ sessionId: 'crash' });
    a.followup(msg('A'));
    await started.promise;
    await a.checkpoint();
    // "crash": the process is gone; a new runtime on the same store resumes
    const resumed = await runtimeOn(store, 2).resume('crash');
    const tail = durable(resumed.events).slice(-4);
    expect(tail).toEqual(['TR(c1)', 'TR(c2)', 'SE(1,1)', 'TE(1,interrupted)']);
    const codes = resumed.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error: { code: string } }).error.code);
    expect(codes).toEqual(['TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED']);
    const lastReal = resumed.events.find((e) => e.type === 'tool/call')!.time;
    expect(resumed.events.slice(-4).every((e) => e.time === lastReal)).toBe(true);
    expect(resumed.inbox.nextTurn).toEqual([]);
    await resumed.checkpoint();
    const r = audit(resumed.events);
    expect(r.ok).toBe(true);
    expect(r.consumedWork.endTurn).toBe(1);
    resumed.followup(msg('B'));
    await resumed.whenIdle();
    expect(durable(resumed.events).at(-1)).toBe('TE(2,completed)');
  });
});

describe('fork (scenario 53)', () => {
  it('seeds the child with the parent up to a boundary, never inherits pending input, continues turn numbers', async () => {
    const store = new MemoryEventStore();
    const rt = runtimeOn(store);
    const parent = rt.createSession({ sessionId: 'parent' });
    parent.followup(msg('A'));
    await parent.whenIdle();
    parent.inbox.append('next-turn', msg('P'));
    await parent.checkpoint();
    const child = await rt.fork('parent', { sessionId: 'child' });
    expect(child.events[0]).toMatchObject({ type: 'session/created', data: { parentSession: 'parent', seedLength: parent.events.length } });
    expect(child.events.at(-1)!.type).toBe('session/end-seed');
    expect(child.inbox.nextTurn).toEqual([]);
    child.followup(msg('X'));
    await child.whenIdle();
    // the fork's seed holds the parent's request/header: the child's first request is a resume
    expect(durable(child.events).slice(-9)).toEqual(['SPL(NT,0,[X])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(X)', 'RH(resume)', 'AM', 'SE(2,1)', 'TE(2,completed)']);
    await child.checkpoint();
    expect(audit(child.events).ok).toBe(true);
    // a fork of the fork keeps both seeds apart
    const grandchild = await rt.fork('child', { sessionId: 'grandchild' });
    expect(grandchild.inbox.nextTurn).toEqual([]);
    grandchild.followup(msg('Y'));
    await grandchild.whenIdle();
    await grandchild.checkpoint();
    const g = audit(grandchild.events);
    expect(g.ok).toBe(true);
    expect(g.turns.at(-1)?.turn).toBe(3);
  });

  it('refuses a boundary inside an open turn or outside the log', async () => {
    const store = new MemoryEventStore();
    const rt = runtimeOn(store);
    const parent = rt.createSession({ sessionId: 'p2' });
    parent.followup(msg('A'));
    await parent.whenIdle();
    await parent.checkpoint();
    const turnStart = parent.events.findIndex((e) => e.type === 'turn/start');
    expect((await rejection(rt.fork('p2', { boundary: turnStart + 2 })) as { code: string }).code).toBe('invalid-fork-boundary');
    expect((await rejection(rt.fork('p2', { boundary: 0 })) as { code: string }).code).toBe('invalid-fork-boundary');
    expect((await rejection(rt.fork('p2', { boundary: 10_000 })) as { code: string }).code).toBe('invalid-fork-boundary');
    const ok = await rt.fork('p2', { boundary: turnStart });
    expect(ok.events[0]!.data).toMatchObject({ seedLength: turnStart });
  });
});
