import { describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptStep } from '../../adapters/model/scripted/scripted-model.js';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { enter, reject } from '../../runtime/hooks.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';
import type { Agent } from '../../runtime/agent.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { deferred, expectLogAgrees, setup } from './harness.js';
import { testStore, uniqueSessionId } from '../support/test-store.js';

type Program = { readonly name: string; readonly script?: readonly ScriptStep[]; readonly tools?: readonly Tool<Agent>[]; readonly run: (agent: Agent) => Promise<void> };

/** A model step that streams, signals `streaming`, then hangs until the turn is aborted. */
const hang = (streaming: { resolve: () => void }): ScriptStep => (req) =>
  new Promise((_, rej) => {
    req.onChunk({ type: 'text', text: 'part' });
    req.signal.addEventListener('abort', () => rej(new Error('aborted')));
    streaming.resolve();
  });
const midStep = deferred();
const midStep2 = deferred();

/** Programs that reproduce the spec's scenarios; each leaves a log to cut at every boundary. */
const programs: Program[] = [
  { name: 'idle follow-up and burst (1, 2)', run: async (a) => { a.followup(msg('A')); a.followup(msg('B')); a.followup(msg('C')); await a.whenIdle(); } },
  { name: 'idle steers (4, 5)', run: async (a) => { a.steer(msg('S1')); a.steer(msg('S2')); await a.whenIdle(); } },
  { name: 'parked context and composition (6–8)', run: async (a) => { a.inject(ctx('C')); a.inject(msg('S')); a.inbox.append('next-turn', msg('Q')); a.followup(msg('A')); await a.whenIdle(); a.inject(ctx('late')); } },
  {
    name: 'tool round with steer and contexts (26–28)',
    script: [{ toolCalls: [{ callId: 'c1', name: 'work' }, { callId: 'c2', name: 'work' }] }, 'done'],
    tools: [{ name: 'work', parallel: true, execute: (_x, c) => (c.callId === 'c1' && c.agent.steer(msg('S')), { content: 'ok', additionalContexts: [ctx(`ctx-${c.callId}`)] }) }],
    run: async (a) => { a.followup(msg('A')); await a.whenIdle(); },
  },
  { name: 'reject parks the next prompt (19, 20)', run: async (a) => { a.on('pre-step', (c, next) => (c.turn === 1 ? reject() : next())); a.followup(msg('secret')); a.followup(msg('safe')); await a.whenIdle(); } },
  { name: 'empty first batch (25) and turn-stopping inject (32)', run: async (a) => {
    let once = true;
    a.on('pre-step', (c, next) => (c.turn === 1 ? enter([]) : c.step === 2 ? enter([]) : next()));
    a.on('turn-stopping', (c) => { if (once) c.agent.inject(ctx('C')); once = false; });
    a.followup(msg('A')); a.followup(msg('B')); await a.whenIdle(); a.followup(msg('D')); await a.whenIdle();
  } },
  { name: 'max-tokens sticky (34)', script: [{ text: 'cut', finishReason: 'max-tokens' }, 'fine'], run: async (a) => {
    let once = true; a.on('turn-stopping', (c) => { if (once) c.agent.steer(msg('more')); once = false; }); a.followup(msg('A')); await a.whenIdle();
  } },
  { name: 'default cancel mid-step (35)', script: [hang(midStep)], run: async (a) => { a.followup(msg('A')); await midStep.promise; a.followup(msg('T')); a.cancel(); await a.whenIdle(); } },
  { name: 'keepInbox cancel and latch (36, 37)', script: [hang(midStep2)], run: async (a) => { a.followup(msg('A')); await midStep2.promise; a.followup(msg('T')); a.cancel({ kind: 'user' }, { keepInbox: true }); a.followup(msg('B')); await a.whenIdle(); } },
  { name: 'maintenance latch (47)', run: async (a) => { const t = deferred(); const d = a.runMaintenance(() => t.promise); a.followup(msg('A')); a.inject(ctx('C')); t.resolve(); await d; await a.whenIdle(); } },
  { name: 'queue edits (56–58)', script: [(r) => (r.turn === 1 ? new Promise((res) => setTimeout(() => res('slow'), 10)) : 'ok')], run: async (a) => {
    a.followup(msg('A')); a.followup(msg('Q')); a.followup(msg('R')); a.queue.edit('R', 'edited'); a.queue.steer('Q'); await a.whenIdle(); a.inbox.append('next-turn', msg('Z')); a.queue.remove('Z');
  } },
  {
    name: 'crash inside a tool round (54)',
    script: [{ toolCalls: [{ callId: 'c1', name: 'slow' }] }, 'after'],
    tools: [{ name: 'slow', execute: () => new Promise((r) => setTimeout(() => r({ content: 'slow done' }), 5)) }],
    run: async (a) => { a.followup(msg('A')); a.followup(msg('B')); await a.whenIdle(); },
  },
];

const logOf = async (p: Program): Promise<readonly LogEvent[]> => {
  const h = setup({ ...(p.script ? { script: p.script } : {}), ...(p.tools ? { tools: p.tools } : {}) });
  await p.run(h.agent);
  await h.agent.whenIdle();
  return h.agent.events;
};

describe('resume at every event boundary', () => {
  it.each(programs.map((p) => [p.name, p] as const))('%s: cut after every event, resume, wake: valid log, audit agrees with the live agent', async (_, program) => {
    const log = await logOf(program);
    expect(auditLines('full', log.map((e) => JSON.stringify(e))).ok).toBe(true);
    for (let k = 1; k <= log.length; k++) {
      const store = testStore();
      const stream = uniqueSessionId(`cut-${k}`);
      await store.append(stream, log.slice(0, k).map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
      const rt = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(2e12), ids: sequentialIds(9), logger: silentLogger, writeBatchDelayMs: 1 });
      const agent = await rt.resume(stream);
      expect(agent.status).toBe('idle');
      agent.wake();
      await agent.whenIdle();
      agent.followup(msg(`wake-${k}`));
      await agent.whenIdle();
      const where = `${program.name}, cut after ${k} of ${log.length}`;
      await expectLogAgrees(agent, store, where);
      const report = auditLines('s', agent.events.map((e) => JSON.stringify(e)));
      expect(report.turns.every((t) => t.reason !== null), where).toBe(true);
      expect(agent.inbox.nextTurn, where).toEqual([]);
    }
  });
});
