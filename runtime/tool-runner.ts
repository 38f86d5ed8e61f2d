import type { AssistantBlock } from '../domain/events.js';
import { parseContent } from '../domain/message.js';
import { errorChain, RuntimeError } from './errors.js';
import type { Tool, ToolOutcome } from './tools.js';

export type ToolCallBlock = Extract<AssistantBlock, { type: 'tool-call' }>;
/** A tool's outcome plus the error facts the log records for failed or synthetic results. */
export type ToolRun = ToolOutcome & { readonly error?: { readonly name: string; readonly code: string } };

export const ABORTED_BEFORE_DISPATCH = 'ABORTED_BEFORE_DISPATCH';
const abortedBeforeDispatch = (): ToolRun => ({ content: 'aborted before dispatch', isError: true, error: { name: 'AbortError', code: ABORTED_BEFORE_DISPATCH } });

/** What the tool runner needs from the agent: its tools, and the effects it performs in the agent's log. */
export interface ToolRunnerPort<A> {
  readonly tools: ReadonlyMap<string, Tool<A>>;
  readonly agent: A;
  /** Parallel-safe calls at once. */
  readonly concurrency: number;
  /** Appends `tool/call` as the call starts. */
  readonly logCall: (call: ToolCallBlock) => void;
  /** Appends `tool/result`, then stages the outcome's additional contexts to next-step. */
  readonly commitResult: (call: ToolCallBlock, outcome: ToolRun) => void;
  /** Makes everything logged so far durable (before each tool body). */
  readonly checkpoint: () => Promise<void>;
}

/**
 * Runs one step's tool calls in model order: parallel-safe calls in a bounded pool, others alone as barriers; each
 * started call is logged; results commit in model order. After an abort, started calls drain and commit, and calls
 * not yet started get a synthetic error result. Resolves whether any committed result concluded the turn.
 */
export const runToolCalls = async <A>(
  port: ToolRunnerPort<A>,
  calls: readonly ToolCallBlock[],
  ctx: { readonly turn: number; readonly step: number; readonly signal: AbortSignal },
): Promise<boolean> => {
  const limit = Math.max(1, port.concurrency);
  const outcomes: Promise<ToolRun>[] = [];
  const settled: (ToolRun | undefined)[] = [];
  const running = new Set<Promise<unknown>>();
  let committed = 0;
  let concluded = false;
  const commit = (i: number, outcome: ToolRun): void => {
    port.commitResult(calls[i]!, outcome);
    if (outcome.concludesTurn) concluded = true;
  };
  const commitSettledPrefix = (): void => {
    while (committed < outcomes.length && settled[committed]) commit(committed, settled[committed++]!);
  };
  const commitAllInOrder = async (): Promise<void> => {
    while (committed < outcomes.length) {
      const outcome = await outcomes[committed]!;
      commit(committed++, outcome);
    }
  };
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    const tool = port.tools.get(call.name);
    const exclusive = !tool?.parallel;
    if (exclusive) await commitAllInOrder();
    else {
      while (running.size >= limit) {
        await Promise.race(running);
        commitSettledPrefix();
      }
    }
    port.logCall(call);
    const outcome = ctx.signal.aborted ? Promise.resolve(abortedBeforeDispatch()) : executeTool(port, tool, call, ctx);
    outcomes.push(outcome);
    const tracked: Promise<unknown> = outcome.then((r) => {
      settled[i] = r;
      running.delete(tracked);
    });
    running.add(tracked);
    if (exclusive) await commitAllInOrder();
  }
  await commitAllInOrder();
  return concluded;
};

/** One tool body: unknown tools, non-JSON arguments, throws and malformed outcomes become error results. */
const executeTool = async <A>(
  port: ToolRunnerPort<A>,
  tool: Tool<A> | undefined,
  call: ToolCallBlock,
  ctx: { readonly turn: number; readonly step: number; readonly signal: AbortSignal },
): Promise<ToolRun> => {
  if (!tool) return { content: `unknown tool "${call.name}"`, isError: true, error: { name: 'ToolNotFound', code: 'TOOL_NOT_FOUND' } };
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (e) {
    return { content: `arguments are not JSON: ${errorChain(e)}`, isError: true, error: { name: 'InvalidArguments', code: 'INVALID_ARGUMENTS' } };
  }
  try {
    await port.checkpoint();
  } catch (e) {
    throw new RuntimeError('checkpoint-failed', `checkpoint before tool ${call.name} failed: ${errorChain(e)}`, { cause: e });
  }
  if (ctx.signal.aborted) return abortedBeforeDispatch();
  try {
    return checkToolOutcome(await tool.execute(args, { signal: ctx.signal, agent: port.agent, callId: call.callId, turn: ctx.turn, step: ctx.step }));
  } catch (e) {
    return { content: errorChain(e), isError: true, error: { name: e instanceof Error ? e.name : 'Error', code: 'TOOL_FAILED' } };
  }
};

/** A tool's outcome as the log can hold it; anything else becomes an error result the model sees. */
const checkToolOutcome = (outcome: unknown): ToolRun => {
  const o = outcome as ToolOutcome | null;
  const parsed = parseContent(o?.content);
  if (!parsed.ok || (o?.additionalContexts !== undefined && !Array.isArray(o.additionalContexts))) {
    const issue = parsed.ok ? 'additionalContexts must be an array of messages' : parsed.problem;
    return { content: `the tool returned an invalid outcome: ${issue}`, isError: true, error: { name: 'InvalidToolOutcome', code: 'INVALID_TOOL_OUTCOME' } };
  }
  return o!;
};
