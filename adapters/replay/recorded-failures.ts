import type { LogEvent, ToolResultData, TurnEndData } from '../../domain/events.js';
import { firstCheckpointFailed } from '../../runtime/turn.js';

/**
 * The step failures a recorded log shows. A store that refused a tool result's write (a commit check, an event too
 * large for it) or failed the checkpoint before a tool's body failed the step: the runtime wrote a `STEP_FAILED`
 * result for every call left without one, naming the failure, and ended the turn with it as its error. The first
 * such result of a step is the call the failure struck; its text says which write failed and why. A replay check
 * fails the same write of its own store the same way there, and the runtime writes the rest as recorded.
 */

/** A failure the replay injects: the write of call `callId`'s result, or the checkpoint before its body. */
export interface RecordedFailure {
  readonly turn: number;
  readonly step: number;
  readonly callId: string;
  readonly write: 'result' | 'checkpoint';
  /** The error the store gives (its message chain as recorded, its code when the turn recorded one). */
  readonly error: Error;
}

const STAND_IN = /^not run or not recorded: the step failed \(([\s\S]*)\)$/;

/** The failure whose chain is `chain`, with the turn's recorded code. */
const failure = (chain: string, code: string | undefined): Error => Object.assign(new Error(chain), code !== undefined && code !== 'UNKNOWN' ? { code } : {});

/** The step failures of `recorded`, one per step that had one, by the first `STEP_FAILED` result of the step. */
export const recordedFailures = (recorded: readonly LogEvent[]): RecordedFailure[] => {
  const found: RecordedFailure[] = [];
  for (const e of recorded) {
    if (e.type !== 'tool/result') continue;
    const d = e.data as ToolResultData & { turn: number; step: number };
    if (d.error?.code !== 'STEP_FAILED' || found.some((f) => f.turn === d.turn && f.step === d.step)) continue;
    const text = d.message.content.map((b) => (b as { text?: string }).text ?? '').join('');
    const chain = STAND_IN.exec(text)?.[1];
    if (chain === undefined) continue;
    const end = recorded.find((x) => x.type === 'turn/end' && (x.data as TurnEndData).turn === d.turn)?.data as TurnEndData | undefined;
    const code = end?.reason.kind === 'error' ? end.reason.error.code : undefined;
    const name = (recorded.find((x) => x.type === 'tool/call' && (x.data as { callId: string }).callId === d.message.callId)?.data as { name?: string } | undefined)?.name;
    const prefix = `checkpoint before tool ${name} failed: `;
    if (name !== undefined && chain.startsWith(prefix)) {
      // the runtime's own error wraps the store's: its chain is "<prefix><store's chain>: <store's chain>"
      const rest = chain.slice(prefix.length);
      const half = rest.slice(0, (rest.length - 2) / 2);
      if (rest === `${half}: ${half}`) found.push({ turn: d.turn, step: d.step, callId: d.message.callId, write: 'checkpoint', error: failure(half, code) });
      continue;
    }
    found.push({ turn: d.turn, step: d.step, callId: d.message.callId, write: 'result', error: failure(chain, code) });
  }
  return found;
};

/**
 * The failed checkpoints before a model request: a step whose turn ended with an error and that recorded no answer,
 * no request failure and no tool call waited on nothing but the store before its request (a model failure is
 * recorded as `request/error`); nor did a step whose last attempt failed and was retried (its `request/error` has
 * `retryInMs`) with no attempt after it, before the retry's request. Each as the id of the last event that
 * checkpoint wrote (the step's request provenance, its last user message, or the failed attempt's `request/error`),
 * and the error the turn recorded.
 */
export const failedRequestCheckpoints = (recorded: readonly LogEvent[]): { readonly eventId: string; readonly error: Error }[] => {
  const found: { eventId: string; error: Error }[] = [];
  const ANSWERED = new Set(['assistant/message', 'assistant/chunk', 'request/error', 'tool/call', 'tool/result']);
  recorded.forEach((e, i) => {
    if (e.type !== 'step/end') return;
    const { turn, step } = e.data as { turn: number; step: number };
    const start = recorded.findLastIndex((x, j) => j < i && x.type === 'step/start' && (x.data as { turn: number; step: number }).turn === turn && (x.data as { step: number }).step === step);
    const between = recorded.slice(start + 1, i);
    if (start < 0) return;
    const last = between.findLast((x) => x.type !== 'agent/inbox/spliced');
    // a failed attempt the waterfall retried (its request/error has retryInMs), and no attempt after it: the
    // checkpoint before the retry's request failed
    const beforeRetry = last?.type === 'request/error' && (last.data as { retryInMs?: number }).retryInMs !== undefined;
    if (!beforeRetry && between.some((x) => ANSWERED.has(x.type))) return;
    const end = recorded.find((x, j) => j > i && x.type === 'turn/end' && (x.data as TurnEndData).turn === turn)?.data as TurnEndData | undefined;
    if (end?.reason.kind !== 'error') return;
    if (last) found.push({ eventId: last.id, error: failure(end.reason.error.message, end.reason.error.code) });
  });
  return found;
};

/**
 * The failed checkpoints before a turn's first pre-step: a turn whose `turn/end` error says so (`checkpoint before
 * turn <n>'s first step failed: <the store's chain>`). Each as the id of the last event that checkpoint wrote (the
 * turn's last claim, else its `turn/start`), and the store's error.
 */
export const failedTurnCheckpoints = (recorded: readonly LogEvent[]): { readonly eventId: string; readonly error: Error }[] => {
  const found: { eventId: string; error: Error }[] = [];
  recorded.forEach((e, i) => {
    if (e.type !== 'turn/end') return;
    const { turn, reason } = e.data as TurnEndData;
    const prefix = firstCheckpointFailed(turn);
    if (reason.kind !== 'error' || !reason.error.message.startsWith(prefix)) return;
    // the runtime's own error wraps the store's: its chain is "<prefix><store's chain>: <store's chain>"
    const rest = reason.error.message.slice(prefix.length);
    const half = rest.slice(0, (rest.length - 2) / 2);
    if (rest !== `${half}: ${half}`) return;
    const start = recorded.findLastIndex((x, j) => j < i && x.type === 'turn/start' && (x.data as { turn: number }).turn === turn);
    if (start < 0) return;
    let last = start;
    while (isClaimAt(recorded[last + 1])) last++;
    found.push({ eventId: recorded[last]!.id, error: new Error(half) });
  });
  return found;
};

/** Is `e` a claim (the runtime's own removal: no outcome, nothing inserted)? */
const isClaimAt = (e: LogEvent | undefined): boolean => {
  if (e?.type !== 'agent/inbox/spliced') return false;
  const d = e.data as { removedCount?: number; outcome?: string; inserted: readonly unknown[] };
  return d.removedCount !== undefined && d.outcome === undefined && d.inserted.length === 0;
};
