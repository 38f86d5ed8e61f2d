import * as E from 'fp-ts/lib/Either.js';
import type { AssistantBlock } from '../domain/events.js';
import { admitMessage } from '../domain/inbox/inbox-decide.js';
import { parseContent, type ContentBlock, type UserMessage } from '../domain/message.js';
import { errorChain, RuntimeError } from './errors.js';
import type { Tool, ToolOutcome } from './tools.js';

/** A tool-call block of an assistant message. */
export type ToolCallBlock = Extract<AssistantBlock, { type: 'tool-call' }>;

/** The error facts a `tool/result` records: the error's name and a stable code. */
export interface ToolErrorFacts {
  readonly name: string;
  readonly code: string;
}

/**
 * A tool's outcome as the log holds it: content as blocks, additional contexts admitted (valid, frozen messages),
 * the error facts of a failed or synthetic result, and `meta` (not shown to the model).
 */
export interface ToolRun {
  readonly content: readonly ContentBlock[];
  readonly isError?: true;
  readonly additionalContexts?: readonly UserMessage[];
  readonly concludesTurn?: true;
  readonly error?: ToolErrorFacts;
  readonly meta?: Readonly<Record<string, unknown>>;
}

/**
 * The stable codes of error results. `TOOL_FAILED` is the fallback for a thrown error without a string `code` of
 * its own; a thrown error that has one keeps it.
 */
export const ToolResultCode = {
  /** The call never ran: the turn was aborted before its body was dispatched (a synthetic call + result pair). */
  ABORTED_BEFORE_DISPATCH: 'ABORTED_BEFORE_DISPATCH',
  /** The body ran but settled after the turn was aborted: its outcome is withheld from the model. */
  ABORTED: 'ABORTED',
  TOOL_FAILED: 'TOOL_FAILED',
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  INVALID_TOOL_OUTCOME: 'INVALID_TOOL_OUTCOME',
  /** The step failed (the log refused a write) before this call could run or its result could be committed. */
  STEP_FAILED: 'STEP_FAILED',
} as const;

const errorResult = (name: string, code: string, text: string, meta?: Readonly<Record<string, unknown>>): ToolRun => ({
  content: [{ type: 'text', text }],
  isError: true,
  error: { name, code },
  ...(meta ? { meta } : {}),
});

/** The result of a call the turn's abort stopped before its body ran. */
export const abortedBeforeDispatch = (): ToolRun => errorResult('AbortError', ToolResultCode.ABORTED_BEFORE_DISPATCH, 'aborted before dispatch');

/**
 * The result that replaces the outcome of a body that settled after the turn was aborted (the default): the model
 * sees an abort error; the log keeps what the tool returned under `meta.withheld` (never shown to the model, its
 * contexts never staged).
 */
export const withheldAfterAbort = (run: ToolRun): ToolRun =>
  errorResult('AbortError', ToolResultCode.ABORTED, 'aborted: the turn was stopped while this tool ran; its outcome is withheld', {
    withheld: {
      content: run.content,
      ...(run.isError ? { isError: true } : {}),
      ...(run.error ? { error: run.error } : {}),
      ...(run.additionalContexts?.length ? { additionalContexts: run.additionalContexts } : {}),
      ...(run.concludesTurn ? { concludesTurn: true } : {}),
    },
  });

/** A late outcome kept as is (option `lateToolResults: 'keep'`), marked `meta.settledAfterAbort`. */
export const keptAfterAbort = (run: ToolRun): ToolRun => ({ ...run, meta: { ...run.meta, settledAfterAbort: true } });

/** The result of a call the step's failure left without one: never ran, or its result could not be committed. */
export const stepFailed = (failure: unknown): ToolRun =>
  errorResult('StepFailed', ToolResultCode.STEP_FAILED, `not run or not recorded: the step failed (${errorChain(failure)})`);

/** A thrown tool error: its name, and its own string `code` if it has one, else `TOOL_FAILED`. */
export const thrownResult = (e: unknown): ToolRun => {
  const own = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  const name = e instanceof Error ? e.name : 'Error';
  return errorResult(name, typeof own === 'string' && own !== '' ? own : ToolResultCode.TOOL_FAILED, errorChain(e));
};

/** An outcome whose contexts cannot be staged (e.g. a duplicate id): an error result the model sees, nothing staged. */
export const invalidOutcome = (problem: string): ToolRun =>
  errorResult('InvalidToolOutcome', ToolResultCode.INVALID_TOOL_OUTCOME, `the tool returned an invalid outcome: ${problem}`);

/** A tool's outcome as the log can hold it; anything else becomes an error result the model sees. */
export const checkToolOutcome = (outcome: unknown): ToolRun => {
  const o = outcome as ToolOutcome | null;
  const parsed = parseContent(o?.content);
  if (!parsed.ok) return invalidOutcome(parsed.problem);
  const contexts: UserMessage[] = [];
  if (o!.additionalContexts !== undefined) {
    if (!Array.isArray(o!.additionalContexts)) return invalidOutcome('additionalContexts must be an array of messages');
    for (let i = 0; i < o!.additionalContexts.length; i++) {
      const admitted = admitMessage(o!.additionalContexts[i], `additionalContexts[${i}]`);
      if (E.isLeft(admitted)) return invalidOutcome(admitted.left.message);
      contexts.push(admitted.right);
    }
  }
  return {
    content: parsed.blocks,
    ...(o!.isError ? { isError: true as const } : {}),
    ...(contexts.length ? { additionalContexts: contexts } : {}),
    ...(o!.concludesTurn ? { concludesTurn: true as const } : {}),
  };
};

/** What running one body produced, and whether it settled after the turn was aborted. */
export interface BodyRun {
  readonly run: ToolRun;
  /** The body ran and settled after the abort. */
  readonly late: boolean;
}

/**
 * Runs one tool body: unknown tools, non-JSON arguments, throws and malformed outcomes become error results. The
 * checkpoint before the body makes everything logged so far durable; it failing rejects (a step failure); an abort
 * meanwhile gives `ABORTED_BEFORE_DISPATCH` without running the body.
 */
export const runToolBody = async <A>(
  tool: Tool<A> | undefined,
  call: ToolCallBlock,
  ctx: {
    readonly agent: A;
    readonly turn: number;
    readonly step: number;
    readonly signal: AbortSignal;
    readonly checkpoint: () => Promise<void>;
    /** Whether the abort came before now in microtask order (see {@link abortOrder}). */
    readonly afterAbort: () => boolean;
  },
): Promise<BodyRun> => {
  if (!tool) return { run: errorResult('ToolNotFound', ToolResultCode.TOOL_NOT_FOUND, `unknown tool "${call.name}"`), late: false };
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (e) {
    return { run: errorResult('InvalidArguments', ToolResultCode.INVALID_ARGUMENTS, `arguments are not JSON: ${errorChain(e)}`), late: false };
  }
  try {
    await ctx.checkpoint();
  } catch (e) {
    throw new RuntimeError('checkpoint-failed', `checkpoint before tool ${call.name} failed: ${errorChain(e)}`, { cause: e });
  }
  if (ctx.signal.aborted) return { run: abortedBeforeDispatch(), late: false };
  let run: ToolRun;
  try {
    run = checkToolOutcome(await tool.execute(args, { signal: ctx.signal, agent: ctx.agent, callId: call.callId, turn: ctx.turn, step: ctx.step }));
  } catch (e) {
    run = thrownResult(e);
  }
  // late when the body settled after the abort, not merely when this continuation runs after it: a body that
  // returned just before another body's synchronous cancel is resumed here after that cancel, and is not late
  return { run, late: ctx.afterAbort() };
};

/**
 * Orders a signal's abort among microtasks: the function returned says whether the abort happened before the
 * microtask that calls it was queued. At the abort it queues a marker microtask; a promise settled before the abort
 * had its reactions queued before the marker (they run while the function still says false), one settled after it
 * has them queued after (they see true). So an `await` that resumes and asks tells whether what it awaited settled
 * after the abort, even when it resumes after the abort. `stop()` removes the listener.
 */
export const abortOrder = (signal: AbortSignal): { readonly afterAbort: () => boolean; readonly stop: () => void } => {
  let passed = signal.aborted;
  const onAbort = (): void => queueMicrotask(() => void (passed = true));
  if (!passed) signal.addEventListener('abort', onAbort, { once: true });
  return { afterAbort: () => passed, stop: () => signal.removeEventListener('abort', onAbort) };
};
