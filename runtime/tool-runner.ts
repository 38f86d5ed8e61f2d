import type { UserMessage } from '../domain/message.js';
import {
  abortOrder,
  abortedBeforeDispatch,
  invalidOutcome,
  keptAfterAbort,
  runToolBody,
  stepFailed,
  withheldAfterAbort,
  type BodyRun,
  type ToolCallBlock,
  type ToolRun,
} from './tool-outcomes.js';
import type { Tool } from './tools.js';

export type { ToolCallBlock, ToolRun } from './tool-outcomes.js';

/**
 * What happens to the outcome of a tool body that settles after the turn was aborted:
 * - `'withhold'` (default): the model sees an `ABORTED` error result instead, so it never sees a result produced
 *   after the user stopped; the log keeps the outcome under `meta.withheld` and its contexts are not staged;
 * - `'keep'`: the outcome commits as returned (marked `meta.settledAfterAbort`), its contexts staged (parked).
 */
export type LateToolResults = 'withhold' | 'keep';

/** What the tool runner needs from the agent: its tools, and the effects it performs in the agent's log. */
export interface ToolRunnerPort<A> {
  readonly tools: ReadonlyMap<string, Tool<A>>;
  readonly agent: A;
  /** Parallel-safe calls at once (at least 1). */
  readonly concurrency: number;
  readonly lateResults: LateToolResults;
  /** Appends `tool/call` (throws if the log refuses). */
  readonly logCall: (call: ToolCallBlock) => void;
  /** Appends `tool/result` (throws if the log refuses). */
  readonly appendResult: (call: ToolCallBlock, run: ToolRun) => void;
  /** Why these contexts (of `call`'s result) cannot be staged to next-step now (e.g. a duplicate id), or null. Decides only. */
  readonly checkContexts: (call: ToolCallBlock, contexts: readonly UserMessage[]) => string | null;
  /** Stages contexts to next-step, each one splice, in order. */
  readonly stageContexts: (call: ToolCallBlock, contexts: readonly UserMessage[]) => void;
  /** Makes everything logged so far durable (before each tool body). */
  readonly checkpoint: () => Promise<void>;
}

interface Slot<A> {
  readonly call: ToolCallBlock;
  readonly tool: Tool<A> | undefined;
  /** It was dispatched (its `tool/call` logged, its body started), as opposed to a pair written at close-out. */
  started: boolean;
  body: BodyRun | null;
  committed: boolean;
}

/**
 * Runs one step's tool calls (the model's order is the order of `calls`):
 * - dispatch in model order: a parallel-safe call joins a bounded pool, any other call is a barrier (it waits for
 *   every running call, runs alone, and the next call waits for it); `tool/call` is appended as each call is
 *   dispatched, right before its body runs;
 * - results commit in model order (`tool/result`, then that result's contexts staged to next-step), each as soon as
 *   it and every earlier result have settled;
 * - on abort: nothing more is dispatched; running bodies drain; then each call that never started gets its
 *   synthetic `tool/call` + `tool/result` (`ABORTED_BEFORE_DISPATCH`), pair by pair in model order;
 * - on a step failure (the log refuses a write, a checkpoint fails): nothing more is dispatched, running bodies
 *   drain, every call still gets one call/result pair (best effort: `STEP_FAILED` where no result could be
 *   committed), then the failure is rethrown.
 * Either way no tool body outlives this call: it settles only after every body it started has settled.
 * Resolves whether any committed result concluded the turn.
 */
export const runToolCalls = async <A>(
  port: ToolRunnerPort<A>,
  calls: readonly ToolCallBlock[],
  ctx: { readonly turn: number; readonly step: number; readonly signal: AbortSignal },
): Promise<boolean> => {
  // registered before any body runs, so its marker precedes whatever a body's own abort listener settles
  const order = abortOrder(ctx.signal);
  const slots: Slot<A>[] = calls.map((call) => ({ call, tool: port.tools.get(call.name), started: false, body: null, committed: false }));
  const limit = Math.max(1, Math.floor(port.concurrency));
  const running = new Set<Promise<void>>();
  let failure: { readonly error: unknown } | null = null;
  let next = 0; // the next slot to commit
  let concluded = false;
  const fail = (error: unknown): void => {
    failure ??= { error };
  };

  /** The run to commit for a settled body: a late outcome is withheld or kept per the option. */
  const finalRun = (body: BodyRun): ToolRun => (!body.late ? body.run : port.lateResults === 'keep' ? keptAfterAbort(body.run) : withheldAfterAbort(body.run));

  /** Commits one slot's result (and stages its contexts); after a failure, falls back to a STEP_FAILED result. */
  const commit = (slot: Slot<A>, run: ToolRun): void => {
    try {
      const problem = run.additionalContexts ? port.checkContexts(slot.call, run.additionalContexts) : null;
      const checked = problem === null ? run : invalidOutcome(problem);
      port.appendResult(slot.call, checked);
      slot.committed = true;
      if (checked.concludesTurn) concluded = true;
      if (checked.additionalContexts) port.stageContexts(slot.call, checked.additionalContexts);
    } catch (e) {
      fail(e);
      if (!slot.committed) {
        try {
          port.appendResult(slot.call, stepFailed(e));
          slot.committed = true;
        } catch {
          // the log refuses every write: the failure is already recorded
        }
      }
    }
  };

  /** Commits every settled result at the head of model order (stops at the first call still running). */
  const commitSettled = (): void => {
    while (failure === null && next < slots.length && slots[next]!.body !== null) {
      const slot = slots[next++]!;
      commit(slot, finalRun(slot.body!));
    }
  };

  /** The result of a call the dispatch loop left without an outcome. */
  const closingRun = (slot: Slot<A>): ToolRun => {
    if (slot.body !== null) return finalRun(slot.body);
    // never dispatched because the turn was aborted: the synthetic abort pair; otherwise the step failed
    if (!slot.started && ctx.signal.aborted) return abortedBeforeDispatch();
    return stepFailed(failure === null ? new Error('the call has no outcome') : failure.error);
  };

  const awaitOne = async (): Promise<void> => {
    await Promise.race(running);
    commitSettled();
  };

  const dispatch = (slot: Slot<A>): void => {
    port.logCall(slot.call);
    slot.started = true;
    const body: Promise<void> = runToolBody(slot.tool, slot.call, { agent: port.agent, turn: ctx.turn, step: ctx.step, signal: ctx.signal, checkpoint: port.checkpoint, afterAbort: order.afterAbort })
      .then((b) => void (slot.body = b), fail)
      .finally(() => void running.delete(body));
    running.add(body);
  };

  try {
    for (const slot of slots) {
      const exclusive = !slot.tool?.parallel;
      if (exclusive) while (running.size > 0) await awaitOne();
      else while (running.size >= limit) await awaitOne();
      if (ctx.signal.aborted || failure !== null) break;
      dispatch(slot);
      if (exclusive) while (running.size > 0) await awaitOne();
    }
  } catch (e) {
    fail(e);
  }
  // drain: no body outlives the step
  while (running.size > 0) await awaitOne();
  order.stop(); // every body has settled: nothing is asked any more
  // close out in model order: every call gets exactly one call/result pair
  for (; next < slots.length; next++) {
    const slot = slots[next]!;
    if (!slot.started) {
      try {
        port.logCall(slot.call);
      } catch (e) {
        fail(e);
        continue;
      }
    }
    commit(slot, closingRun(slot));
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
  return concluded;
};
