import fc from 'fast-check';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel, type ScriptedResponse } from '../../adapters/model/scripted/scripted-model.js';
import type { Agent } from '../../runtime/agent.js';
import { enter } from '../../runtime/hooks.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';
import { ctx, msg } from '../../testing/log-builder.js';

/**
 * Random sessions for the replay-analysis properties (context, replay check): sends at random points, tool rounds
 * whose bodies steer, inject or stage context, failed requests that are retried, a system prompt that changes with
 * the turn, and a pre-step hook that sometimes drops a message. Deterministic ids and clock, a memory store.
 */
type Send = 'followup' | 'steer' | 'inject';
export interface RandomProgram {
  readonly top: readonly ({ readonly send: Send } | { readonly wait: 'tick' | 'idle' })[];
  /** Per model request: text, a tool call, or a failed attempt (retried). */
  readonly replies: readonly ('text' | 'tool' | 'fail')[];
  /** Sends the tool body makes, in order. */
  readonly inner: readonly Send[];
  readonly dropsOddSteering: boolean;
  readonly systemPerTurn: boolean;
}
const send = fc.constantFrom<Send>('followup', 'followup', 'steer', 'inject');
/** The programs. */
export const randomProgram: fc.Arbitrary<RandomProgram> = fc.record({
  top: fc.array(fc.oneof({ weight: 4, arbitrary: send.map((s) => ({ send: s })) }, { weight: 1, arbitrary: fc.constantFrom<'tick' | 'idle'>('tick', 'idle').map((w) => ({ wait: w })) }), { minLength: 1, maxLength: 8 }),
  replies: fc.array(fc.constantFrom<'text' | 'tool' | 'fail'>('text', 'text', 'tool', 'fail'), { minLength: 1, maxLength: 6 }),
  inner: fc.array(send, { maxLength: 3 }),
  dropsOddSteering: fc.boolean(),
  systemPerTurn: fc.boolean(),
});

/** The tool the random sessions offer: its body performs the next inner send, and stages one context. */
export const randomTools = (innerSend: (agent: Agent) => void): Tool<Agent>[] => [
  {
    name: 'act',
    description: 'Acts.',
    execute: (_a, c) => {
      innerSend(c.agent);
      return { content: `acted ${c.callId}`, additionalContexts: [ctx(`staged-${c.callId}`)] };
    },
  },
];

/** The answer of request number `index` (0-based) of a program. */
export const randomReply = (p: RandomProgram, index: number, attempt: number): ScriptedResponse => {
  const r = p.replies[index % p.replies.length];
  // bounded: a failed attempt only as a first attempt, tool rounds only in the first 10 requests
  if (r === 'fail' && attempt === 1) return { chunks: ['par'], error: { message: 'busy', code: 'HTTP_503', status: 503 } };
  return r === 'tool' && index < 10 ? { text: 'calling', toolCalls: [{ callId: `c${index}`, name: 'act', arguments: { n: index } }] } : { text: `ok ${index}`, usage: { inputTokens: index + 1, outputTokens: 2 } };
};

/**
 * The retry wait of the random sessions: the next macrotask of the check phase (`setImmediate`), or at once when the
 * turn is aborted. A `{ wait: 'tick' }` is a `setImmediate` too, so where a send lands relative to a retry is fixed
 * by their order. The default wait of 0 ms is a timer, and whether a 1 ms timer or an immediate runs first depends
 * on how long the event loop took to get there: on a loaded machine two runs of one program put the send on either
 * side of the retried request, and the properties that compare two runs (or a run with its replay) saw them differ.
 */
export const nextImmediate = (_ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearImmediate(handle);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const handle = setImmediate(done);
    signal.addEventListener('abort', done, { once: true });
  });

/** Runs a program on a fresh memory store and returns the session, its model (which recorded every request) and store. */
export const runRandomSession = async (p: RandomProgram, sessionId = 'rand') => {
  let n = 0;
  let inner = 0;
  const doSend = (agent: Agent, s: Send) => {
    const id = `${s}-${n++}`;
    if (s === 'followup') agent.followup(msg(id));
    else if (s === 'steer') agent.steer(msg(id));
    else agent.inject(ctx(id));
  };
  const innerSend = (agent: Agent) => {
    if (inner < p.inner.length) doSend(agent, p.inner[inner++]!);
  };
  const store = new MemoryEventStore();
  const model = new ScriptedModel([], { whenExhausted: (req, { index }) => randomReply(p, index, req.attempt) });
  const runtime = createRuntime({
    store,
    model,
    tools: randomTools(innerSend),
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
    retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, random: () => 0, sleep: nextImmediate },
  });
  const agent = runtime.createSession({ sessionId, systemPrompt: p.systemPerTurn ? ({ turn }) => `system for turn ${turn}` : 'one system' });
  if (p.dropsOddSteering) agent.on('pre-step', (c, next) => (c.step % 2 === 0 ? enter(c.messages.filter((m) => !m.id.startsWith('steer'))) : next()));
  for (const a of p.top) {
    if ('send' in a) doSend(agent, a.send);
    else if (a.wait === 'tick') await new Promise<void>((r) => setImmediate(r));
    else await agent.whenIdle();
  }
  agent.followup(msg('final'));
  await agent.whenIdle();
  await agent.checkpoint();
  return { agent, model, store, runtime };
};
