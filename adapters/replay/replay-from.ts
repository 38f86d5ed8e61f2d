import { isKnownEvent, type LogEvent, type ToolCallData } from '../../domain/events.js';
import { hasPending } from '../../domain/inbox/inbox-state.js';
import type { Agent, AgentOptions } from '../../runtime/agent.js';
import { loadSession } from '../../runtime/load-session.js';
import { silentLogger } from '../../runtime/logger.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { ModelPort } from '../../runtime/ports/model.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { RetryPolicyOptions } from '../../runtime/retry-policy.js';
import type { Tool, ToolOutcome } from '../../runtime/tools.js';
import { answerOf, outcomeOf } from './recorded-ports.js';
import { comparePoints, recordedInputs, type RecordedInput, type TurnPoint } from './recorded-inputs.js';
import { recordedCancels } from './recorded-cancels.js';

/**
 * A counterfactual replay (`steerlog replay <session> --from … --model …`): the session forked at the start of the
 * turn that holds the chosen point (a fork never begins inside a turn), the requests before the point answered from
 * the recording, every request from it on made to the new model, and the recorded inputs re-admitted at the points
 * of the turn structure they arrived at (what was pending at the fork first; a send where its list now ends; a
 * recorded edit or cancel exactly when it still fits, else by the ids it removed). The result is a new session whose
 * `session/created` names its origin (`parentSession`, `seedLength`, origin `fork`), ready for `diff`.
 */

/** Where the new model takes over: an event's seq, or a step. */
export type ReplayPoint = { readonly seq: number } | { readonly turn: number; readonly step: number };

/** The point names no event or step of the session. Stable `code`: `invalid-replay-point`. */
export class ReplayPointError extends Error {
  readonly code = 'invalid-replay-point' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ReplayPointError';
  }
}
/** Is this a {@link ReplayPointError}? (by its stable `code`) */
export const isReplayPointError = (e: unknown): e is ReplayPointError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-replay-point';

/** Options of {@link replaySession}. */
export interface ReplaySessionOptions {
  /** The store that holds the session; the new session is written there. */
  readonly store: EventStore;
  readonly from: ReplayPoint;
  /** The model of every request from the point on. */
  readonly model: ModelPort;
  /** Tools whose code runs from the point on. @defaultValue none */
  readonly tools?: readonly Tool<Agent>[];
  /**
   * Answers a tool call no given tool runs with a recorded result: the one of the same call id, else the first unused
   * one of the same tool and arguments, else of the same tool. @defaultValue false: such a call fails (`TOOL_FAILED`)
   */
  readonly recordedTools?: boolean;
  /** The new session's id. @defaultValue `<origin>-replay-<random>` */
  readonly sessionId?: string;
  /**
   * Installs the deployment's hooks and plugins on the new session's agent; the inputs its hooks sent after the fork
   * point (actor `hook:<name>`) are then theirs to send again, not re-admitted from the origin. @defaultValue none
   */
  readonly install?: (agent: Agent) => void;
  /** The new session's system prompt. @defaultValue the one the origin's last `request/header` recorded (none if none) */
  readonly systemPrompt?: AgentOptions['systemPrompt'];
  /** As `RuntimeOptions.retry`. @defaultValue `{}` (the default policy) */
  readonly retry?: RetryPolicyOptions | false;
}

/** What a counterfactual replay made. */
export interface ReplaySessionResult {
  readonly sessionId: string;
  readonly origin: string;
  /** The origin's events the new session inherits (its seed). */
  readonly boundary: number;
  /** The first step the new model answered. */
  readonly point: { readonly turn: number; readonly step: number };
  /** Recorded inputs re-admitted as recorded, adapted (a send where its list now ends; an edit by id), or dropped (nothing left to edit). */
  readonly inputs: { readonly exact: number; readonly adapted: number; readonly dropped: number };
  readonly events: readonly LogEvent[];
}

/** The fork boundary and the first step of the new model, for a point of `events`. */
export const replayBoundary = (events: readonly LogEvent[], from: ReplayPoint): { readonly boundary: number; readonly point: { turn: number; step: number } } => {
  let lastTurn = 0;
  let turnStart: number | null = null;
  const steps: { turn: number; step: number; start: number; turnStart: number; end: number }[] = [];
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'turn/start') turnStart = e.seq;
    else if (e.type === 'turn/end') (lastTurn = e.data.turn), (turnStart = null);
    else if (e.type === 'step/start') steps.push({ ...e.data, start: e.seq, turnStart: turnStart ?? e.seq, end: events.length });
    else if (e.type === 'step/end') steps.at(-1)!.end = e.seq;
  }
  if ('seq' in from) {
    if (!Number.isSafeInteger(from.seq) || from.seq < 1 || from.seq > events.length) throw new ReplayPointError(`seq ${from.seq} is outside the session's ${events.length} events`);
    const step = steps.find((s) => from.seq <= s.end);
    if (!step || from.seq < step.turnStart) return { boundary: from.seq, point: step ? { turn: step.turn, step: step.step } : { turn: lastTurn + 1, step: 1 } };
    return { boundary: step.turnStart, point: { turn: step.turn, step: step.step } };
  }
  const step = steps.find((s) => s.turn === from.turn && s.step === from.step);
  if (!step) throw new ReplayPointError(`the session has no step ${from.turn}.${from.step}`);
  return { boundary: step.turnStart, point: { turn: step.turn, step: step.step } };
};

/** Forks `origin` at the point and re-runs it with the new model, re-admitting its recorded inputs. */
export const replaySession = async (origin: string, options: ReplaySessionOptions): Promise<ReplaySessionResult> => {
  const { events } = await loadSession(options.store, origin);
  if (events.length === 0) throw new ReplayPointError(`the store has no session ${origin}`);
  const { boundary, point } = replayBoundary(events, options.from);
  // the deployment's hooks, when installed, send their own inputs again
  const recorded = recordedInputs(events, boundary, { hookInputs: options.install === undefined });
  const before = (turn: number, step: number): boolean => comparePoints({ turn, step, phase: 1 }, { ...point, phase: 1 }) < 0;
  const answers = new Map(events.flatMap((e) => (e.type === 'assistant/message' && isKnownEvent(e) && e.type === 'assistant/message' && !e.data.interrupted ? [[`${e.data.turn}.${e.data.step}`, e] as const] : [])));
  const results = events.filter((e) => e.type === 'tool/result');
  const calls = events.filter((e): e is LogEvent & { data: ToolCallData } => e.type === 'tool/call');
  const used = new Set<number>();
  let agent: Agent | null = null;
  let next = 0;
  const counts = { exact: 0, adapted: 0, dropped: 0 };
  const apply = (input: RecordedInput): void => {
    const a = agent!;
    const options = input.metadata ? { metadata: input.metadata } : {};
    if (input.appends) {
      for (const m of input.splice.inserted) a.send(m, input.splice.target, false, options);
      counts.exact++;
      return;
    }
    try {
      a.readmit(input.splice, input.metadata);
      counts.exact++;
      return;
    } catch {
      // the recorded coordinates do not fit the new inbox: the same edit by the ids it removed
    }
    const removed = input.removedIds.filter((id) => a.queue.remove(id, options)._tag === 'Right');
    for (const m of input.splice.inserted) a.send(m, input.splice.target, false, options);
    if (removed.length > 0 || input.splice.inserted.length > 0) counts.adapted++;
    else counts.dropped++;
  };
  const cancels = recordedCancels(events, boundary);
  /**
   * A recorded cancel struck the same step in the same phase: it is issued again (keeping the inbox: the recorded
   * splices that followed it are re-admitted as inputs), and the request or call waits for the abort.
   */
  const cancelAt = (turn: number, step: number, phase: 1 | 2, signal: AbortSignal): Promise<never> | null => {
    const i = cancels.findIndex((c) => c.turn === turn && c.step === step && c.phase === phase);
    if (i < 0) return null;
    const [cancel] = cancels.splice(i, 1);
    counts.exact++;
    agent!.cancel(cancel!.cause, { keepInbox: true, metadata: cancel!.metadata });
    return new Promise<never>((_, reject) => {
      const aborted = () => reject(new Error('the turn was canceled, as recorded'));
      if (signal.aborted) aborted();
      else signal.addEventListener('abort', aborted, { once: true });
    });
  };
  const applyUpTo = (at: TurnPoint): void => {
    while (next < recorded.inputs.length && comparePoints(recorded.inputs[next]!.at, at) <= 0) apply(recorded.inputs[next++]!);
  };
  /** The step the new session is in (its last step/start), and the recorded route of a step before the point. */
  const currentStep = (): { turn: number; step: number } | null => {
    const start = agent?.events.findLast((e) => e.type === 'step/start');
    return start ? (start.data as { turn: number; step: number }) : null;
  };
  const recordedRoute = (): { provider?: string; model?: string; contextWindow?: number } | null => {
    const at = currentStep();
    if (!at || !before(at.turn, at.step)) return null;
    const answer = answers.get(`${at.turn}.${at.step}`);
    if (!answer) return null;
    const context = events.slice(0, answer.seq).findLast((e) => e.type === 'request/context');
    if (context) return context.data as { provider: string; model: string; contextWindow?: number };
    const source = (answer.data as { message: { source?: { kind: string; provider?: string; model?: string } } }).message.source;
    return source?.kind === 'model' ? { ...(source.provider !== undefined ? { provider: source.provider } : {}), ...(source.model !== undefined ? { model: source.model } : {}) } : {};
  };
  const model: ModelPort = {
    get provider() {
      const r = recordedRoute();
      return r ? r.provider : options.model.provider;
    },
    get model() {
      const r = recordedRoute();
      return r ? r.model : options.model.model;
    },
    get contextWindow() {
      const r = recordedRoute();
      return r ? r.contextWindow : options.model.contextWindow;
    },
    complete: async (request) => {
      applyUpTo({ turn: request.turn, step: request.step, phase: 1 });
      const canceled = cancelAt(request.turn, request.step, 1, request.signal);
      if (canceled) return canceled;
      const answer = answers.get(`${request.turn}.${request.step}`);
      if (before(request.turn, request.step) && answer && isKnownEvent(answer) && answer.type === 'assistant/message') return answerOf(answer.data, false);
      return options.model.complete(request);
    },
  };
  const recordedResult = (name: string, args: string, callId: string): ToolOutcome | { thrown: Error } | null => {
    const byId = results.findIndex((r) => (r.data as { message: { callId: string } }).message.callId === callId);
    const sameCall = (wantArgs: boolean) =>
      results.findIndex((r, i) => {
        const call = calls.find((c) => c.data.callId === (r.data as { message: { callId: string } }).message.callId);
        return !used.has(i) && call?.data.name === name && (!wantArgs || call.data.arguments === args);
      });
    const i = byId >= 0 && !used.has(byId) ? byId : sameCall(true) >= 0 ? sameCall(true) : sameCall(false);
    if (i < 0) return null;
    used.add(i);
    return outcomeOf(events, results[i]!.seq, name);
  };
  const own = new Map((options.tools ?? []).map((t) => [t.name, t]));
  const names = [...new Set([...own.keys(), ...calls.map((c) => c.data.name)])];
  const tools: Tool<Agent>[] = names.map((name) => ({
    name,
    ...(own.get(name)?.description !== undefined ? { description: own.get(name)!.description! } : {}),
    execute: async (args, context) => {
      applyUpTo({ turn: context.turn, step: context.step, phase: 2 });
      const canceled = cancelAt(context.turn, context.step, 2, context.signal);
      if (canceled) return canceled;
      const call = calls.find((c) => c.data.callId === context.callId && c.data.turn === context.turn);
      const early = before(context.turn, context.step) && call ? recordedResult(name, call.data.arguments, context.callId) : null;
      const outcome = early ?? (own.has(name) ? await own.get(name)!.execute(args, context) : options.recordedTools ? recordedResult(name, JSON.stringify(args), context.callId) : null);
      if (outcome === null) throw new Error(options.recordedTools ? `no recorded result of tool ${name} is left` : `the replay has no tool ${name} (give its module, or answer from the recorded results)`);
      if ('thrown' in outcome) throw outcome.thrown;
      return outcome;
    },
  }));
  const runtime = createRuntime({ store: options.store, model, tools, logger: silentLogger, ...(options.retry !== undefined ? { retry: options.retry } : {}) });
  const sessionId = options.sessionId ?? `${origin}-replay-${globalThis.crypto.randomUUID().slice(0, 8)}`;
  const header = events.findLast((e) => e.type === 'request/header');
  const system = options.systemPrompt ?? (header ? (header.data as { header: { system?: string } }).header.system : undefined);
  const forked = await runtime.fork(origin, { sessionId, boundary, origin: 'fork', ...(system !== undefined ? { systemPrompt: system } : {}) });
  agent = forked;
  options.install?.(forked);
  for (const p of recorded.pending) forked.send(p.message, p.target, false, p.metadata ? { metadata: p.metadata } : {});
  const laterTurns = (turn: number): boolean => events.some((e) => e.type === 'turn/start' && (e.data as { turn: number }).turn > turn);
  const lastTurn = (): number => forked.events.reduce((n, e) => (e.type === 'turn/end' ? (e.data as { turn: number }).turn : n), 0);
  for (let round = 0; round < 10_000; round++) {
    await forked.whenIdle();
    const turn = lastTurn();
    applyUpTo({ turn, step: Number.POSITIVE_INFINITY, phase: 3 });
    if (hasPending(forked.inbox.state) && laterTurns(turn) && forked.wake()) continue;
    if (next < recorded.inputs.length) {
      applyUpTo(recorded.inputs[next]!.at);
      continue;
    }
    break;
  }
  // a recorded cancel of a step the new run never reached is not re-issued
  counts.dropped += cancels.length;
  // durable, and left as it is: what the recording left pending stays pending (a dispose would cancel it)
  await forked.checkpoint();
  runtime.forget(sessionId);
  return { sessionId, origin, boundary, point, inputs: counts, events: forked.events };
};
