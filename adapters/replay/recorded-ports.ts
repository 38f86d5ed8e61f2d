import type { AssistantBlock, LogEvent, RequestErrorData, ToolResultData } from '../../domain/events.js';
import type { UserMessage } from '../../domain/message.js';
import type { Agent } from '../../runtime/agent.js';
import type { ModelPort, ModelRequest, ModelResponse, ToolSpec } from '../../runtime/ports/model.js';
import type { Tool, ToolContext, ToolOutcome } from '../../runtime/tools.js';
import type { RecordedLog } from './recorded-log.js';

/**
 * The model and tools of a replay check: each call waits until the replay answers it from the recording (the
 * recorded chunks, answer or failure of a request; the recorded outcome of a tool call), so the replay decides
 * exactly when the runtime moves on, and can re-admit recorded inputs at the points they were recorded at.
 */

/** A model request waiting for its recorded answer. */
export interface PendingRequest {
  readonly request: ModelRequest;
  readonly answer: (response: ModelResponse) => void;
}
/** A tool call waiting for its recorded outcome. */
export interface PendingCall {
  readonly context: ToolContext<Agent>;
  readonly settle: (outcome: ToolOutcome | { readonly thrown: Error }) => void;
}

/** What the replay is waiting on. */
export interface Pending {
  request: PendingRequest | null;
  readonly calls: Map<string, PendingCall>;
}

/** A model that names the recorded route (for the event at `position()`) and waits for the replay's answer. */
export const recordedModel = (log: RecordedLog, position: () => number, pending: Pending): ModelPort => ({
  get provider() {
    return log.routeAt(position())?.provider;
  },
  get model() {
    return log.routeAt(position())?.model;
  },
  get contextWindow() {
    return log.routeAt(position())?.contextWindow;
  },
  complete: (request) =>
    new Promise<ModelResponse>((resolve, reject) => {
      const onAbort = (): void => {
        if (pending.request === waiting) pending.request = null;
        reject(new Error('the turn was aborted'));
      };
      // answered: the turn's signal no longer needs this request's listener (a long turn would pile them up)
      const waiting: PendingRequest = {
        request,
        answer: (response) => {
          request.signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
      };
      pending.request = waiting;
      request.signal.addEventListener('abort', onAbort, { once: true });
    }),
});

/**
 * The tools the recording offered (`specs`), each waiting for the replay to settle its call (or `own`'s tool of that
 * name, which runs).
 */
export const recordedTools = (specs: readonly ToolSpec[], log: RecordedLog, pending: Pending, own: readonly Tool<Agent>[]): Tool<Agent>[] =>
  specs.map((spec) => own.find((t) => t.name === spec.name) ?? {
    name: spec.name,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(log.parallelTools.has(spec.name) ? { parallel: true } : {}),
    execute: (_args, context) =>
      new Promise<ToolOutcome>((resolve, reject) => {
        pending.calls.set(context.callId, {
          context,
          settle: (outcome) => {
            pending.calls.delete(context.callId);
            if ('thrown' in outcome) reject(outcome.thrown);
            else resolve(outcome);
          },
        });
      }),
  });

/** The recorded answer of a request (`assistant/message`): its blocks, finish reason and usage. */
export const answerOf = (data: { readonly message: { readonly content: readonly AssistantBlock[] }; readonly usage?: ModelResponse['usage'] }, maxTokens: boolean): ModelResponse => ({
  content: data.message.content,
  finishReason: maxTokens ? 'max-tokens' : data.message.content.some((b) => b.type === 'tool-call') ? 'tool-calls' : 'stop',
  ...(data.usage ? { usage: data.usage } : {}),
});

/** The recorded failure of a request (`request/error`), as the model reports it. */
export const failureOf = (data: RequestErrorData): ModelResponse => ({ content: [], finishReason: 'error', error: data.error });

/** A thrown tool error as the runtime records it (its name, code and message). */
const thrownError = (name: string, code: string, message: string): Error => Object.assign(new Error(message), { name, code });

const textOf = (content: readonly { readonly type: string; readonly text?: string }[]): string => content.map((b) => b.text ?? '').join('');

/**
 * The recorded outcome of a tool call: its `tool/result` at `seq`, and the contexts its result staged (the splices
 * right after it that it caused, as `tool:<name>`; in a log that records no metadata, the next-step insertions right
 * after it). A recorded thrown error is thrown again.
 */
export const outcomeOf = (events: readonly LogEvent[], seq: number, toolName: string, noMetadata = false): ToolOutcome | { readonly thrown: Error } => {
  const result = events[seq]!;
  const data = result.data as ToolResultData;
  const withheld = (data.meta?.withheld ?? null) as (ToolOutcome & { error?: { name: string; code: string } }) | null;
  const staged: UserMessage[] = [];
  for (let i = seq + 1; i < events.length; i++) {
    const e = events[i]!;
    if (e.type !== 'agent/inbox/spliced') break;
    const d = e.data as { target: string; removedCount?: number };
    const byResult = noMetadata ? d.target === 'next-step' && d.removedCount === undefined : e.metadata?.causationId === result.id && e.metadata.actor === `tool:${toolName}`;
    if (!byResult) break;
    staged.push(...(e.data as { inserted: UserMessage[] }).inserted);
  }
  const source = withheld ?? { content: data.message.content, ...(data.message.isError ? { isError: true } : {}), ...(data.error ? { error: data.error } : {}) };
  if (source.error) return { thrown: thrownError(source.error.name, source.error.code, textOf(source.content as { type: string; text?: string }[])) };
  return {
    content: source.content,
    ...(source.isError ? { isError: true } : {}),
    ...(withheld?.additionalContexts ? { additionalContexts: withheld.additionalContexts } : staged.length ? { additionalContexts: staged } : {}),
    ...(withheld?.concludesTurn ? { concludesTurn: true } : {}),
  };
};

/**
 * Did the tool result at `index` conclude its turn (`concludesTurn`, which the log does not record)? A step whose
 * answer asked for tools ends its turn `completed` only when a result concluded it: so the last result of such a
 * step that did not throw, when the step's `step/end` is followed by the turn's `turn/end {completed}`, is answered as
 * concluding.
 */
export const concludedBy = (recorded: readonly LogEvent[], index: number): boolean => {
  const { turn, step } = recorded[index]!.data as { turn: number; step: number };
  const same = (e: LogEvent): boolean => (e.data as { turn?: number; step?: number }).turn === turn && (e.data as { step?: number }).step === step;
  for (let i = index + 1; i < recorded.length; i++) {
    const e = recorded[i]!;
    // a later result that recorded a thrown error cannot have concluded the turn: the one before it did
    if (e.type === 'tool/result' && same(e) && (e.data as { error?: unknown }).error === undefined) return false;
    if (e.type === 'step/end' && same(e)) {
      const after = recorded[i + 1];
      return after?.type === 'turn/end' && (after.data as { turn: number; reason: { kind: string } }).turn === turn && (after.data as { reason: { kind: string } }).reason.kind === 'completed';
    }
  }
  return false;
};
