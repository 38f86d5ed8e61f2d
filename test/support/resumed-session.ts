import fc from 'fast-check';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import type { LogEvent } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import { enter } from '../../runtime/hooks.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { nextImmediate, randomProgram, randomReply, randomTools, type RandomProgram } from './random-session.js';

/**
 * Random sessions resumed in their middle: a random program runs, the runtime dies after a random number of the
 * events it wrote (a crash: the store holds only those; inside a turn, the resume repairs it with closers), another
 * runtime resumes the session from the store, optionally wakes it, and runs the next program on it; and so on. Each
 * runtime has its own ids, clock and model (whose tool calls are named per runtime), as separate processes would.
 */

/** One runtime's share of a resumed session: its program, and where in its log it dies (a fraction of it). */
export interface ResumedSegment {
  readonly program: RandomProgram;
  /** Where the runtime dies: after this fraction of the events it wrote (1: after all of them, idle). */
  readonly cut: number;
  /** Does the resumed runtime wake the session before its program (pending input runs at once)? */
  readonly wakes: boolean;
  /** Where the runtime dies, as a number of the log's events (overrides `cut`; may fall inside what the resume appended). */
  readonly cutAt?: number;
}

/** Segments: the first one runs from the session's creation, each later one resumes where the previous one died. */
export const resumedSegments = (resumes: number): fc.Arbitrary<readonly ResumedSegment[]> =>
  fc.array(fc.record({ program: randomProgram, cut: fc.double({ min: 0, max: 1, noNaN: true }), wakes: fc.boolean() }), { minLength: resumes + 1, maxLength: resumes + 1 });

/** The pre-step hook of a program: drops the steering of even steps, as the random sessions do. */
export const installFor = (p: RandomProgram) => (a: Agent): void => {
  if (p.dropsOddSteering) a.on('pre-step', (c, next) => (c.step % 2 === 0 ? enter(c.messages.filter((m) => !m.id.startsWith('steer'))) : next()));
};

const envelope = (e: LogEvent) => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.ignorable ? { ignorable: true as const } : {}), ...(e.metadata ? { metadata: e.metadata } : {}) });

/**
 * Runs `segments` on one session (`rand`), the first created, each later one resumed from what the previous runtime
 * left in the store, and returns the session's log and where each runtime began (the length of the log it loaded).
 * Every segment installs the hook of the first one (a deployment installs the same hooks on every runtime).
 */
export const runResumedSession = async (segments: readonly ResumedSegment[]): Promise<{ readonly events: readonly LogEvent[]; readonly starts: readonly number[] }> => {
  const install = installFor(segments[0]!.program);
  let durable: readonly LogEvent[] = [];
  const starts: number[] = [];
  for (const [index, segment] of segments.entries()) {
    const p = segment.program;
    const tag = `r${index}`;
    let n = 0;
    let inner = 0;
    const doSend = (agent: Agent, s: 'followup' | 'steer' | 'inject'): void => {
      const id = `${s}-${tag}.${n++}`;
      if (s === 'followup') agent.followup(msg(id));
      else if (s === 'steer') agent.steer(msg(id));
      else agent.inject(ctx(id));
    };
    const store = new MemoryEventStore();
    if (durable.length > 0) await store.append('rand', durable.map(envelope), 'no_stream');
    const runtime = createRuntime({
      store,
      model: new ScriptedModel([], {
        whenExhausted: (req, { index: i }) => {
          const r = randomReply(p, i, req.attempt);
          return r.toolCalls ? { ...r, toolCalls: r.toolCalls.map((c) => ({ ...c, callId: `${tag}${c.callId}` })) } : r;
        },
      }),
      tools: randomTools((agent) => {
        if (inner < p.inner.length) doSend(agent, p.inner[inner++]!);
      }),
      clock: steppingClock(1_700_000_000_000 + index * 1_000_000),
      ids: sequentialIds(index),
      logger: silentLogger,
      writeBatchDelayMs: 0,
      retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, random: () => 0, sleep: nextImmediate },
    });
    const agent = durable.length === 0 ? runtime.createSession({ sessionId: 'rand', systemPrompt: p.systemPerTurn ? ({ turn }) => `system for turn ${turn}` : 'one system' }) : await runtime.resume('rand', { systemPrompt: p.systemPerTurn ? ({ turn }) => `system for turn ${turn}` : 'one system' });
    starts.push(agent.events.length);
    install(agent);
    if (segment.wakes) agent.wake();
    for (const a of p.top) {
      if ('send' in a) doSend(agent, a.send);
      else if (a.wait === 'tick') await new Promise<void>((r) => setImmediate(r));
      else await agent.whenIdle();
    }
    agent.followup(msg(`final-${tag}`));
    await agent.whenIdle();
    await agent.checkpoint();
    const written = agent.events;
    const last = index === segments.length - 1;
    // the runtime dies after a share of what it wrote itself (never inside what the resume appended on loading)
    const from = starts.at(-1)!;
    durable = last ? written : written.slice(0, segment.cutAt ?? from + Math.round(segment.cut * (written.length - from)));
    await agent.dispose();
  }
  return { events: durable, starts };
};
