import * as E from 'fp-ts/lib/Either.js';
import { actorMetadata, type Actor, type EventMetadata } from '../domain/event-metadata.js';
import type { AssistantBlock, TurnError } from '../domain/events.js';
import { decideInbox } from '../domain/inbox/inbox-decide.js';
import { evolveInbox } from '../domain/inbox/inbox-evolve.js';
import type { InboxState } from '../domain/inbox/inbox-state.js';
import type { UserMessage } from '../domain/message.js';
import type { ModelMessage } from '../domain/model-messages.js';
import { assembleDeltas, type StreamDelta } from '../domain/stream-assembly.js';
import { stepResultOf, type StepResult } from '../domain/turn-machine.js';
import { isMessageTooLargeError, ModelError } from './errors.js';
import * as L from '../domain/inbox/pending-list.js';
import { fitToolResult, oversizedContexts } from './tool-result-size.js';
import type { RequestErrorListener } from './hooks.js';
import type { FinishReason, ModelPort, ModelResponse } from './ports/model.js';
import { runRequestError } from './request-error.js';
import type { RetryPolicy } from './retry-policy.js';
import { errorFacts, modelFailureFacts } from './turn-error.js';
import type { RequestRecord } from './request-record.js';
import type { SessionLog } from './session-log.js';
import type { LoopGate } from './loop-slices.js';
import { runToolCalls, type LateToolResults, type ToolCallBlock } from './tool-runner.js';
import type { Tool } from './tools.js';

/** Thrown inside the turn when its signal is aborted. */
export class TurnAborted extends Error {
  constructor() {
    super('turn aborted');
    this.name = 'TurnAborted';
  }
}

/** What one model step needs from its agent. */
export interface ModelStepPort<A> {
  readonly log: SessionLog;
  readonly model: ModelPort;
  readonly tools: ReadonlyMap<string, Tool<A>>;
  readonly agent: A;
  /** Every surface message of the log so far, in order. */
  readonly messages: () => readonly ModelMessage[];
  /**
   * Resolves once `messages()` holds the whole surface (an agent resumed from a fold snapshot reads the messages
   * before its window from the store before its first request). @defaultValue always ready
   */
  readonly surfaceReady?: () => Promise<void>;
  /** The live inbox (to decide whether a result's contexts can be staged). */
  readonly inbox: () => InboxState;
  /** Stages one context to next-step (one durable splice); `metadata`: its provenance (the tool, the tool/result that staged it). */
  readonly stageContext: (message: UserMessage, metadata: EventMetadata) => void;
  readonly toolConcurrency: number;
  readonly lateToolResults: LateToolResults;
  /** The innermost answer to a failed request, and the wait between attempts. */
  readonly retryPolicy: RetryPolicy;
  /** The `request-error` listeners, in registration order. */
  readonly requestErrorListeners: () => readonly RequestErrorListener<A>[];
  /** Epoch ms (the runtime's clock): measures the time a step spent on its attempts. */
  readonly now: () => number;
  /** Writes the step's provenance (`request/header`, `request/context`) before a request, when it is new. */
  readonly requests: RequestRecord;
  /**
   * Where the turn waits, after each checkpoint and once the model answered, for its next slice of the event loop: the
   * work after it (the step's appends, the request) runs when the gate releases it, not in the same turn of the loop
   * as every other session's. To the outside the wait is part of the checkpoint's, or of the model call's.
   * Undefined: the turn goes on at once.
   */
  readonly gate: LoopGate | undefined;
}

/** The tools a request offers the model. */
const toolSpecsOf = <A>(port: ModelStepPort<A>) => [...port.tools.values()].map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}) }));

/**
 * The actor of the context a tool's result stages (docs/host.md, "Actors: who did what"): the tool, a `plugin` named
 * `tool:<name>` — code the deployment installed, acting for the session.
 */
const toolActor = (name: string): Actor => ({ id: `tool:${name}`, kind: 'plugin' });

/** Why these contexts cannot be appended to next-step in this order (a duplicate id, …), or null: decides only. */
const contextProblem = (inbox: InboxState, contexts: readonly UserMessage[]): string | null => {
  let state = inbox;
  for (const message of contexts) {
    const d = decideInbox({ kind: 'append', target: 'next-step', message }, state);
    if (E.isLeft(d)) return d.left.message;
    for (const splice of d.right.events) state = evolveInbox(state, splice);
  }
  return null;
};

/** How one attempt of a step ended: an answer (any finish but `error`), or a failure the waterfall judges. */
type Answer = ModelResponse & { readonly finishReason: Exclude<FinishReason, 'error'> };
type AttemptOutcome = { readonly kind: 'answer'; readonly response: Answer } | { readonly kind: 'failed'; readonly failure: TurnError };

/**
 * One request of a step: its chunks are logged as they stream. An abort keeps what this attempt assembled (text and
 * reasoning, in stream order) as an interrupted assistant message, then throws; a chunk the store refused fails the
 * step; a throw or a finish `error` is a failed attempt.
 */
const requestOnce = async <A>(
  port: ModelStepPort<A>,
  at: { readonly turn: number; readonly step: number; readonly system: string | undefined; readonly signal: AbortSignal; readonly attempt: number },
): Promise<AttemptOutcome> => {
  const { turn, step, system, signal, attempt } = at;
  const { log, model } = port;
  const deltas: StreamDelta[] = [];
  const keepAssembled = (): void => {
    const content = assembleDeltas(deltas);
    if (content.length === 0) return;
    try {
      log.append('assistant/message', { turn, step, message: { role: 'assistant', content }, interrupted: true });
    } catch (e) {
      // the assembled prefix is larger than one event may be: its chunks stay in the log; the turn still ends aborted
      if (!isMessageTooLargeError(e)) throw e;
    }
  };
  /** A streamed chunk the store could not hold: the step fails with it once the model returns. */
  let refusedChunk: { readonly error: unknown } | null = null;
  let response: ModelResponse;
  try {
    if (port.surfaceReady) await port.surfaceReady();
    response = await model.complete({
      ...(system !== undefined ? { system } : {}),
      messages: [...port.messages()],
      turn,
      step,
      attempt,
      tools: toolSpecsOf(port),
      signal,
      onChunk: (chunk) => {
        if (signal.aborted || refusedChunk !== null) return;
        const delta: StreamDelta = { type: chunk.type, text: chunk.text };
        try {
          log.append('assistant/chunk', { turn, step, chunk: delta });
        } catch (e) {
          refusedChunk = { error: e };
          return;
        }
        deltas.push(delta);
      },
    });
  } catch (e) {
    if (signal.aborted) {
      keepAssembled();
      throw e;
    }
    if (refusedChunk !== null) throw (refusedChunk as { readonly error: unknown }).error;
    return { kind: 'failed', failure: errorFacts(e) };
  }
  if (signal.aborted) {
    keepAssembled();
    throw new TurnAborted();
  }
  if (refusedChunk !== null) throw (refusedChunk as { readonly error: unknown }).error;
  if (response.finishReason === 'error') {
    return { kind: 'failed', failure: modelFailureFacts(response.error ?? { message: 'the model finished with an error', code: 'MODEL_ERROR' }) };
  }
  return { kind: 'answer', response: response as Answer };
};

/**
 * One model step: the request (after a checkpoint: step/start and its user messages are durable first), the
 * streamed chunks, the assistant message, then the tool calls in model order. On an abort mid-stream every block
 * assembled so far (text and reasoning, in stream order) is kept as an interrupted assistant message, then the
 * step throws. A failed request goes through the `request-error` waterfall (docs/models.md): a retry is a new attempt of the
 * same step, logged after a `request/error` event; otherwise the step throws the failure. Returns how the step ended.
 */
export const runModelStep = async <A>(
  port: ModelStepPort<A>,
  at: { readonly turn: number; readonly step: number; readonly system: string | undefined; readonly signal: AbortSignal },
): Promise<StepResult> => {
  const { turn, step, system, signal } = at;
  const { log, model } = port;
  // the request's provenance, when new, is durable with step/start and its user messages before the request
  const provenance = (): void => port.requests.beforeRequest(log, { model, system, tools: toolSpecsOf(port) });
  provenance();
  await log.checkpoint();
  if (port.gate) await port.gate.next();
  const startedAt = port.now();
  let response: Answer;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw new TurnAborted();
    const outcome = await requestOnce(port, { turn, step, system, signal, attempt });
    if (outcome.kind === 'answer') {
      response = outcome.response;
      break;
    }
    // a failed attempt: no assistant message; its chunks stay; the waterfall decides whether another follows
    const failure = outcome.failure;
    const logFailure = (retryInMs: number | null): void => {
      log.appendAny('request/error', { turn, step, attempt, error: failure, ...(retryInMs !== null ? { retryInMs } : {}) }, { ignorable: true });
    };
    let retryInMs: number | null;
    try {
      retryInMs = await runRequestError(port.requestErrorListeners(), {
        agent: port.agent,
        turn,
        step,
        attempt,
        elapsedMs: port.now() - startedAt,
        provider: model.provider,
        failure,
        retryPolicy: port.retryPolicy,
        signal,
      });
    } catch (e) {
      logFailure(null);
      throw e;
    }
    if (signal.aborted) {
      logFailure(null);
      throw new TurnAborted();
    }
    logFailure(retryInMs);
    if (retryInMs === null) throw new ModelError(failure);
    await port.retryPolicy.sleep(retryInMs, signal);
    if (signal.aborted) throw new TurnAborted();
    // as before the first attempt: what the failed one logged is durable before the next request (fail closed)
    provenance();
    await log.checkpoint();
    if (port.gate) await port.gate.next();
  }
  // the answer arrived in a model's timer or I/O callback, often the same one as other sessions' answers: the step's
  // appends that follow (the answer, its tool calls, the turn's end and the next turn's start) run in this session's
  // slice of the loop, not all at once in that callback
  if (port.gate) await port.gate.next();
  const content: AssistantBlock[] = response.finishReason === 'max-tokens' ? response.content.filter((b) => b.type !== 'tool-call') : [...response.content];
  const answer = log.append('assistant/message', {
    turn,
    step,
    message: { role: 'assistant', content, ...(model.provider ? { source: { kind: 'model' as const, provider: model.provider, model: model.model ?? 'unknown' } } : {}) },
    ...(response.usage ? { usage: response.usage } : {}),
    // the one finish reason the answer's content does not show (a cut answer is logged without its tool calls)
    ...(response.finishReason === 'max-tokens' ? { finishReason: 'max-tokens' as const } : {}),
  });
  if (response.finishReason === 'max-tokens') return stepResultOf('max-tokens', 0, false);
  const calls = content.filter((b): b is ToolCallBlock => b.type === 'tool-call');
  if (calls.length === 0) return stepResultOf(response.finishReason, 0, false);
  // provenance: a tool/call is caused by the answer that requested it, a tool/result by its tool/call (by the answer
  // when the call never started), staged context by its tool/result (and its actor is the tool)
  const callEvents = new Map<string, string>();
  let lastResult: string | undefined;
  const concluded = await runToolCalls(
    {
      tools: port.tools,
      agent: port.agent,
      concurrency: port.toolConcurrency,
      lateResults: port.lateToolResults,
      logCall: (call) => {
        const logged = log.append('tool/call', { turn, step, callId: call.callId, name: call.name, arguments: call.arguments }, { metadata: { causationId: answer.id } });
        callEvents.set(call.callId, logged.id);
      },
      // a result the store could not hold becomes an error result the model sees, never an unwritable log
      appendResult: (call, run) => {
        const metadata = { causationId: callEvents.get(call.callId) ?? answer.id };
        lastResult = log.append(
          'tool/result',
          fitToolResult(
            {
              turn,
              step,
              message: { role: 'tool', callId: call.callId, content: [...run.content], ...(run.isError ? { isError: true } : {}) },
              ...(run.error ? { error: run.error } : {}),
              ...(run.meta ? { meta: run.meta } : {}),
            },
            log,
          ),
          { metadata },
        ).id;
      },
      // the size counts the metadata the splice will carry: a context that fits only without it is refused here
      checkContexts: (call, contexts) =>
        contextProblem(port.inbox(), contexts) ?? oversizedContexts(contexts, L.size(port.inbox().nextStep), log, actorMetadata(toolActor(call.name))),
      // called right after the appendResult of the same call
      stageContexts: (call, contexts) => {
        const metadata = { ...(lastResult !== undefined ? { causationId: lastResult } : {}), ...actorMetadata(toolActor(call.name)) };
        for (const c of contexts) port.stageContext(c, metadata);
      },
      checkpoint: () => log.checkpoint(),
    },
    calls,
    { turn, step, signal },
  );
  return stepResultOf(response.finishReason, calls.length, concluded);
};
