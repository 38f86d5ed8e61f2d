import { expect } from 'vitest';
import { ScriptedModel, type ScriptStep } from '../../adapters/model/scripted/scripted-model.js';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent, TurnEndReason } from '../../domain/events.js';
import { deriveNotifications } from '../../domain/session-fold.js';
import type { Agent } from '../../runtime/agent.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { createRuntime, type CreateSessionOptions, type RuntimeOptions } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';
import { expectReplayReproduces, recordDeployment, type ReplayExpectation } from './harness-replay.js';
import { plainNotifications } from '../support/plain-notifications.js';
import { testStore, testStoreKind, uniqueSessionId } from '../support/test-store.js';

const T: Record<string, string> = { 'next-turn': 'NT', 'next-step': 'NS' };
const reasonText = (r: TurnEndReason): string =>
  r.kind === 'aborted' ? `aborted:${r.reason.kind}` : r.kind === 'error' ? `error:${r.error.code}` : r.kind;

/**
 * The spec's notation for a durable event: SPL(NT,0,rc=1,[B],C), TS(1), SS(1,1), UM(A), RH(initial), RC, AM, TC(c1),
 * TR(c1), SE(1,1), TE(1,completed) (RH: request/header with its reason, RC: request/context).
 */
export const notate = (e: LogEvent): string => {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'agent/inbox/spliced': {
      const ins = d.inserted as { id: string }[];
      const parts = [T[d.target as string], String(d.start)];
      if (d.removedCount !== undefined) parts.push(`rc=${d.removedCount}`);
      if (ins.length) parts.push(`[${ins.map((m) => m.id).join(',')}]`);
      if (d.outcome) parts.push('C');
      return `SPL(${parts.join(',')})`;
    }
    case 'turn/start':
      return `TS(${d.turn})`;
    case 'turn/end':
      return `TE(${d.turn},${reasonText(d.reason as TurnEndReason)})`;
    case 'step/start':
      return `SS(${d.turn},${d.step})`;
    case 'step/end':
      return `SE(${d.turn},${d.step})`;
    case 'user/message':
      return `UM(${d.id})`;
    case 'assistant/message':
      return d.interrupted ? 'AM!' : 'AM';
    case 'assistant/chunk':
      return 'CH';
    case 'request/header':
      return `RH(${d.reason})`;
    case 'request/context':
      return 'RC';
    case 'request/error':
      return `RE(${d.attempt},${(d.error as { code: string }).code}${d.retryInMs !== undefined ? `,retry ${d.retryInMs}` : ''})`;
    case 'tool/call':
      return `TC(${d.callId})`;
    case 'tool/result':
      return `TR(${(d.message as { callId: string }).callId})`;
    default:
      return e.type;
  }
};

export interface HarnessOptions {
  readonly script?: readonly ScriptStep[];
  readonly tools?: readonly Tool<Agent>[];
  readonly session?: CreateSessionOptions;
  readonly store?: EventStore;
  /** @defaultValue answer 'ok' to every request */
  readonly whenExhausted?: ScriptStep;
  /** Tool scheduling options of the runtime. @defaultValue the runtime's defaults */
  readonly toolOptions?: Pick<RuntimeOptions, 'toolConcurrency' | 'lateToolResults'>;
  /** The retry policy of failed model requests. @defaultValue false (a failed request ends the turn, as the scenarios expect) */
  readonly retry?: RuntimeOptions['retry'];
}

/** A scripted agent on a memory store with deterministic ids and clock, tracing live notifications and status. */
export const setup = (opts: HarnessOptions = {}) => {
  const store = opts.store ?? testStore();
  const model = new ScriptedModel(opts.script ?? [], { whenExhausted: opts.whenExhausted ?? 'ok' });
  const runtime = createRuntime({
    store,
    model,
    ...(opts.tools ? { tools: opts.tools } : {}),
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 5,
    retry: opts.retry ?? false,
    ...opts.toolOptions,
  });
  const agent = runtime.createSession({ sessionId: uniqueSessionId(), ...opts.session });
  // what the replay check of expectConsistent re-drives with: the same hooks and tool scheduling; the model's answers
  // and the tools' outcomes are the recorded ones (the scripted model and the tests' tools are what was recorded)
  const deployment = recordDeployment(agent, {
    ...(opts.session?.systemPrompt !== undefined ? { systemPrompt: opts.session.systemPrompt } : {}),
    ...(opts.toolOptions?.toolConcurrency !== undefined ? { toolConcurrency: opts.toolOptions.toolConcurrency } : {}),
    ...(opts.toolOptions?.lateToolResults !== undefined ? { lateToolResults: opts.toolOptions.lateToolResults } : {}),
  });
  const live: string[] = [];
  agent.on('inbox/inserted', (m) => live.push(`inserted ${m.id}`));
  agent.on('inbox/discarded', (m) => live.push(`discarded ${m.id}`));
  agent.on('inbox/claimed', (m, turn) => live.push(`claimed ${m.id}@${turn}`));
  agent.on('status', (s) => live.push(`status ${s}`));
  agent.on('error', (e) => live.push(`error ${e.turn}.${e.step} ${e.error.code}`));
  // the spec's scenarios fold a request's provenance (request/header, request/context) into its answer (REQ): the
  // provenance itself is checked in test/runtime/request-provenance.test.ts
  const durable = () => agent.events.filter((e) => e.type !== 'session/created' && e.type !== 'request/header' && e.type !== 'request/context').map(notate);
  return { agent, model, store, live, durable, deployment };
};

/**
 * What every scenario must satisfy at rest: the audit of the agent's own log is ok and agrees with the live agent
 * (lists and turn count); the notifications emitted live and those derived from the log both equal a separate plain
 * model's (test/support/plain-notifications.ts); the store holds exactly the live log; and the replay check
 * (`replayCheck`, with the session's hooks) reproduces the log event for event — unless `replay` says the
 * check must refuse it, or names the divergence it must find (each with its reason at the call).
 */
export const expectConsistent = async (h: ReturnType<typeof setup>, replay?: ReplayExpectation): Promise<void> => {
  const { agent, live, store } = h;
  await agent.whenIdle();
  await expectLogAgrees(agent, store);
  const derived = deriveNotifications(agent.events).map((n) =>
    n.type === 'agent/inbox/claimed' ? `claimed ${n.message.id}@${n.turn}` : `${n.type.split('/').at(-1)} ${n.message.id}`,
  );
  const emitted = live.filter((l) => /^(inserted|discarded|claimed) /.test(l));
  // both against a separate plain model of the log, not only against each other (they share notificationsOfSplice)
  const plain = plainNotifications(agent.events);
  expect(emitted).toEqual(plain);
  expect(derived).toEqual(plain);
  // the replay check re-drives a runtime of its own from the log, whatever store wrote it: the project that runs these
  // programs on PostgreSQL (for the store's sake) leaves it to the memory-store project, which checks every run
  if (testStoreKind() === 'memory') await expectReplayReproduces(agent.events, h.deployment, replay);
};

/**
 * The agent's log is valid, its audit agrees with the live lists and turn count, and once checkpointed the store
 * holds exactly the live log. `where` labels failures.
 */
export const expectLogAgrees = async (agent: Agent, store: EventStore, where = agent.sessionId): Promise<void> => {
  const report = auditLines(agent.sessionId, agent.events.map((e) => JSON.stringify(e)));
  expect(report.errors, where).toEqual([]);
  expect(report.ok, where).toBe(true);
  expect(report.inbox, where).toEqual({ nextTurn: agent.inbox.nextTurn.map((m) => m.id), nextStep: agent.inbox.nextStep.map((m) => m.id) });
  expect(report.turns.length, where).toBe(agent.events.filter((e) => e.type === 'turn/start').length);
  await agent.checkpoint();
  const stored = [];
  for await (const e of store.read(agent.sessionId)) stored.push({ seq: Number(e.revision), id: e.id, time: e.time, type: e.type, data: e.data });
  expect(stored, where).toEqual(agent.events.map((e) => ({ seq: e.seq, id: e.id, time: e.time, type: e.type, data: e.data })));
};

export const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);
/** Resolves after pending microtasks and one macrotask. */
export const tick = () => new Promise<void>((r) => setImmediate(r));
export const deferred = <T = void>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};
