import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { resumePoints } from '../../../adapters/replay/recorded-resumes.js';
import type { LogEvent } from '../../../domain/events.js';
import { installFor, resumedSegments, runResumedSession, type ResumedSegment } from '../../support/resumed-session.js';
import { runRandomSession, type RandomProgram } from '../../support/random-session.js';
import { loadLog } from '../../../audit/load-log.js';
import { storeSource } from '../../../audit/log-source.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { childSetup, restartedSetup } from '../../runtime/children/child-harness.js';
import { spawnTool, until } from '../../runtime/children/support.js';
import type { ChildManager } from '../../../runtime/children/child-manager.js';
import { msg } from '../../../testing/log-builder.js';

const stored = async (store: EventStore, session: string): Promise<readonly LogEvent[]> => {
  const loaded = (await loadLog(storeSource(store, session)))!;
  expect(loaded.error).toBeNull();
  return loaded.events;
};

/**
 * Sessions resumed in their middle (after a crash inside a turn, or while idle) replay-check as recorded. The random
 * properties run a few cases here; replay-check-resume-many.test.ts (e2e) runs them at 80.
 */
describe('replayCheck of resumed sessions', () => {
  const program = (p: Partial<RandomProgram> = {}): RandomProgram => ({ top: [{ send: 'followup' }], replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false, ...p });

  it('a crash inside a tool round: the resume closes the turn, and the replay resumes there', async () => {
    // the first runtime dies right after the tool call it started (the call's outcome is unknown)
    const segments: ResumedSegment[] = [
      { program: program(), cut: 0, wakes: false },
      { program: program({ replies: ['text'] }), cut: 1, wakes: true },
    ];
    const first = await runResumedSession([{ ...segments[0]!, cut: 1 }]);
    const call = first.events.findIndex((e) => e.type === 'tool/call');
    const cut = (call + 1 - 1) / (first.events.length - 1);
    const { events, starts } = await runResumedSession([{ ...segments[0]!, cut }, segments[1]!]);
    expect(events.slice(call + 1, starts[1]).map((e) => [e.type, (e.data as { error?: { code: string } }).error?.code ?? (e.data as { reason?: { kind: string } }).reason?.kind ?? null])).toEqual([
      ['tool/result', 'TOOL_OUTCOME_UNKNOWN'],
      ['step/end', null],
      ['turn/end', 'interrupted'],
    ]);
    expect(events.find((e) => e.type === 'request/header' && (e.data as { reason: string }).reason === 'resume')).toBeDefined();
    expect(resumePoints(events)).toEqual([call + 1]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a second crash while the resume was storing its closers: the next resume appends the rest, and the replay writes them as one repair', async () => {
    const first = await runResumedSession([{ program: program(), cut: 1, wakes: false }]);
    const call = first.events.findIndex((e) => e.type === 'tool/call');
    const seg0: ResumedSegment = { program: program(), cut: 0, wakes: false, cutAt: call + 1 };
    // the second runtime dies with only the first of its closers stored
    const { events } = await runResumedSession([seg0, { program: program({ replies: ['text'] }), cut: 0, wakes: false, cutAt: call + 2 }, { program: program({ replies: ['text'] }), cut: 1, wakes: true }]);
    expect(events.slice(call + 1, call + 4).map((e) => e.type)).toEqual(['tool/result', 'step/end', 'turn/end']);
    expect(resumePoints(events)).toEqual([call + 1]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a resume while idle: seen only in the resumed runtime’s request/header {resume}, and replayed after the last turn', async () => {
    const { events, starts } = await runResumedSession([
      { program: program({ replies: ['text'] }), cut: 1, wakes: false },
      { program: program({ replies: ['text'] }), cut: 1, wakes: false },
    ]);
    expect(starts[1]).toBe(events.findLastIndex((e, i) => i < starts[1]! && e.type === 'turn/end') + 1);
    expect(resumePoints(events)).toEqual([starts[1]]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a host restart while a child is inside its turn: the parent (its resume closes the run from the child\'s log) and the child (crash-repaired, then run again) are each reproduced', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.model.script(c1, () => new Promise<string>(() => {}));
    // the parent asks a request first: its resumed runtime's first request then records the resume
    h.parent.followup(msg('hello'));
    await h.parent.whenIdle();
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.model.requests.some((r) => r.session === c1));
    await h.runtime.liveAgent(c1)!.checkpoint();
    await h.parent.checkpoint();
    // the host dies: nothing is disposed; a new runtime over the same store resumes the parent, and a follow-up the child
    const r = await restartedSetup(h.store, h.model, h.parent.sessionId);
    h.model.script(c1, 'second epoch done');
    await r.manager.followup(r.parent, c1, 'again');
    await until(() => r.manager.state(c1) === 'absent');
    await r.parent.whenIdle();
    await r.parent.checkpoint();
    const parent = await stored(h.store, h.parent.sessionId);
    const child = await stored(h.store, c1);
    const start = parent.findIndex((e) => e.type === 'subagent/start');
    expect(parent[start + 1]!.type).toBe('subagent/end');
    // the parent's resume is placed after its last turn: the replay's resumed runtime does not close the run itself
    // (the child's log is not part of the replay) and the recorded end is re-admitted where it was recorded
    expect(resumePoints(parent)).toEqual([start]);
    expect(child.some((e) => e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'interrupted')).toBe(true);
    expect(resumePoints(child)).toHaveLength(1);
    for (const events of [parent, child]) expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a host restart inside the parent\'s turn, after its tool started a child: the parent\'s replay resumes at the closers and re-admits the recorded end of the run', async () => {
    let manager!: ChildManager;
    const h = childSetup({ tools: [spawnTool(() => manager)] });
    manager = h.manager;
    const c1 = `${h.prefix}-c1`;
    const asked = { n: 0 };
    h.model.script('parent', { toolCalls: [{ callId: 't1', name: 'spawn', arguments: { id: c1, task: 'sub' } }] }, () => {
      asked.n++;
      return new Promise<string>(() => {});
    });
    h.model.script(c1, () => new Promise<string>(() => {}));
    h.parent.followup(msg('go'));
    await until(() => asked.n === 1 && h.model.requests.some((r) => r.session === c1));
    await h.runtime.liveAgent(c1)!.checkpoint();
    await h.parent.checkpoint();
    const r = await restartedSetup(h.store, h.model, h.parent.sessionId);
    h.model.script('parent', 'after the restart');
    r.parent.followup(msg('again'));
    await r.parent.whenIdle();
    await r.parent.checkpoint();
    const parent = await stored(h.store, h.parent.sessionId);
    const interrupted = parent.findIndex((e) => e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'interrupted');
    expect(parent[interrupted + 1]).toMatchObject({ type: 'subagent/end', data: { childSessionId: c1, stopReason: 'stopped' } });
    expect(resumePoints(parent)).toHaveLength(1);
    expect(await replayCheck(parent)).toEqual({ ok: true, events: parent.length });
  });

  it('a fork resumed while idle and again after a crash inside its turn: reproduced', async () => {
    const { runtime } = await runRandomSession(program({ replies: ['text'] }), 'origin');
    const fork = await runtime.fork('origin', { sessionId: 'fork', systemPrompt: 'one system' });
    fork.followup(msg('in-fork'));
    await fork.whenIdle();
    await fork.dispose();
    const again = await runtime.resume('fork', { systemPrompt: 'one system' });
    again.followup(msg('after-resume'));
    await again.whenIdle();
    await again.checkpoint();
    const events = again.events;
    expect(events.filter((e) => e.type === 'request/header').map((e) => (e.data as { reason: string }).reason).slice(-2)).toEqual(['resume', 'resume']);
    expect(resumePoints(events)).toHaveLength(1);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('random sessions resumed once, at random points: reproduced', async () => {
    await fc.assert(
      fc.asyncProperty(resumedSegments(1), async (segments) => {
        const { events } = await runResumedSession(segments);
        expect(await replayCheck(events, { install: installFor(segments[0]!.program) })).toEqual({ ok: true, events: events.length });
      }),
      { numRuns: 4 },
    );
  });

  it('random sessions resumed twice, at random points: reproduced', async () => {
    await fc.assert(
      fc.asyncProperty(resumedSegments(2), async (segments) => {
        const { events } = await runResumedSession(segments);
        expect(await replayCheck(events, { install: installFor(segments[0]!.program) })).toEqual({ ok: true, events: events.length });
      }),
      { numRuns: 3 },
    );
  });

  it('a resumed session mutated after its resume: the check names the mutated event', async () => {
    await fc.assert(
      fc.asyncProperty(resumedSegments(2), fc.nat(), async (segments, pick) => {
        const { events, starts } = await runResumedSession(segments);
        // what the model was given at a step after the last resume, as the log says it: one message's text changed
        const candidates = events.map((e, i) => [e, i] as const).filter(([e, i]) => i >= starts.at(-1)! && e.type === 'user/message');
        fc.pre(candidates.length > 0);
        const [target, at] = candidates[pick % candidates.length]!;
        const data = target.data as { content: { type: string; text?: string }[] };
        const mutated = events.map((e, i) => (i === at ? ({ ...e, data: { ...data, content: [{ type: 'text', text: 'not what it was given' }] } } as LogEvent) : e));
        const result = await replayCheck(mutated, { install: installFor(segments[0]!.program) });
        expect(result).toMatchObject({ ok: false, divergence: { seq: at, type: 'user/message', recorded: mutated[at], produced: { type: 'user/message', data: target.data } } });
      }),
      { numRuns: 3 },
    );
  });
});
