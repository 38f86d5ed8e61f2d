import { foldConsumedWork, type ConsumedWork } from '../consumed-work.js';
import type { AssistantMessage, LogEvent } from '../events.js';
import type { ContentBlock } from '../message.js';
import type { ChildStopReason } from './subagent-events.js';

/** The source of a settlement account in the parent's inbox. */
export interface SettledSource {
  readonly kind: 'subagent-settled';
  readonly form: 'notice';
  /** The outcome sentence, at most 120 characters. */
  readonly summary: string;
  readonly senderSessionId: string;
  readonly [k: string]: unknown;
}

/** The settlement account of one activation epoch: what the parent is told when a child settles. */
export interface SettlementAccount {
  readonly stopReason: ChildStopReason;
  /** The epoch's last assistant text, or null when it left none. */
  readonly closingText: string | null;
  readonly content: readonly ContentBlock[];
  readonly source: SettledSource;
}

/**
 * How an activation epoch ended, from its consumed-work verdict (the reference harness's rule):
 * - no turn accounted for work, or the last accounting turn ended `completed`: `completed`, unless queued work was
 *   canceled unrun after it (`stopped`);
 * - the last accounting turn ended `aborted`, or `interrupted` (crash repair closed it): `stopped`;
 * - `max-tokens`: `out-of-room`; `blocked` (the pre-step policy refused): `declined`; `error`: `failed` — a recorded
 *   ending wins over work dropped unrun after it (stopping a child that had already failed does not make it stopped).
 *
 * `abnormal` is never an outcome of this rule: it is left for an epoch whose log cannot be read at all, and for a
 * start that failed before the child accepted its first prompt.
 */
export const settlementOutcome = (verdict: ConsumedWork): ChildStopReason => {
  const kind = verdict.end?.reason.kind;
  switch (kind) {
    case undefined:
    case 'completed':
      return verdict.droppedUnrun ? 'stopped' : 'completed';
    case 'aborted':
    case 'interrupted':
      return 'stopped';
    case 'max-tokens':
      return 'out-of-room';
    case 'blocked':
      return 'declined';
    case 'error':
      return 'failed';
    default: {
      const never: never = kind;
      throw new Error(`unknown turn end reason ${JSON.stringify(never)}`);
    }
  }
};

const OUTCOME: Record<ChildStopReason, string> = {
  completed: 'completed its work.',
  stopped: 'was stopped before it finished.',
  'out-of-room': 'ran out of room before it finished.',
  declined: 'declined the task.',
  failed: 'failed.',
  abnormal: 'ended abnormally.',
};

/** The outcome sentence for a child and a stop reason (the account's first line). */
export const outcomeSentence = (childSessionId: string, reason: ChildStopReason): string => `Background subagent ${childSessionId} ${OUTCOME[reason]}`;

const textOf = (message: AssistantMessage): string =>
  message.content
    .filter((b): b is Extract<typeof b, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');

/**
 * The settlement account of an epoch, from the epoch's OWN log (its events from the epoch's first event on), never
 * from how teardown went: the consumed-work verdict gives the stop reason (`settlementOutcome`), the last non-empty
 * assistant text the closing message.
 */
export const settlementOf = (childSessionId: string, epochEvents: Iterable<LogEvent>): SettlementAccount => {
  const events = [...epochEvents];
  const stopReason = settlementOutcome(foldConsumedWork(events));
  let closingText: string | null = null;
  for (const e of events) {
    if (e.type !== 'assistant/message') continue;
    const text = textOf((e.data as { message: AssistantMessage }).message);
    if (text.trim() !== '') closingText = text;
  }
  const sentence = outcomeSentence(childSessionId, stopReason);
  const closing = closingText === null ? 'It left no closing message.' : `Its closing message:\n${closingText}`;
  return {
    stopReason,
    closingText,
    content: [{ type: 'text', text: `${sentence}\n${closing}` }],
    source: { kind: 'subagent-settled', form: 'notice', summary: sentence.length <= 120 ? sentence : `${sentence.slice(0, 119)}…`, senderSessionId: childSessionId },
  };
};

/** The content of an explicit report, as the parent's inbox receives it. */
export const reportText = (childSessionId: string, output: string): string => `Background subagent ${childSessionId} reported:\n${output}`;

/** How a settlement account reaches the parent. */
export type SettlementDelivery = 'dropped' | 'inject' | 'followup' | 'steer';

/**
 * The delivery rule of a settlement account: a parent that is not live gets nothing (dropped silently, no mailbox);
 * a parent whose lineage is closing gets it injected (no wake); otherwise an idle parent gets a follow-up (one turn)
 * and a running parent a steer (batched into its next step with any other notices).
 */
export const settlementDelivery = (parent: { readonly live: boolean; readonly lineageClosing: boolean; readonly status: 'idle' | 'running' }): SettlementDelivery => {
  if (!parent.live) return 'dropped';
  if (parent.lineageClosing) return 'inject';
  return parent.status === 'idle' ? 'followup' : 'steer';
};
