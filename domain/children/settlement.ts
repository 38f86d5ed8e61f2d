import { foldConsumedWork } from '../consumed-work.js';
import type { AssistantMessage, LogEvent, TurnEndReason } from '../events.js';
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

/** The stop reason of a consumed-work verdict's turn end. */
export const stopReasonOf = (reason: TurnEndReason): ChildStopReason => {
  switch (reason.kind) {
    case 'completed':
      return 'completed';
    case 'max-tokens':
      return 'out-of-room';
    case 'aborted':
      return 'stopped';
    case 'blocked':
      return 'declined';
    case 'error':
      return 'failed';
    case 'interrupted':
      return 'abnormal';
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
 * from how teardown went: the consumed-work verdict gives the stop reason (no accounting turn = `abnormal`; unrun
 * work canceled after the last accounting turn = `stopped`), the last non-empty assistant text the closing message.
 */
export const settlementOf = (childSessionId: string, epochEvents: Iterable<LogEvent>): SettlementAccount => {
  const events = [...epochEvents];
  const verdict = foldConsumedWork(events);
  const stopReason: ChildStopReason = verdict.droppedUnrun ? 'stopped' : verdict.end ? stopReasonOf(verdict.end.reason) : 'abnormal';
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
