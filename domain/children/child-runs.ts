import { isKnownEvent, type LogEvent } from '../events.js';
import { settlementOf, type SettlementAccount } from './settlement.js';
import type { SubagentEndData, SubagentStartData } from './subagent-events.js';

/**
 * The runs of children a parent's log has opened and not closed: every `subagent/start` whose run id no
 * `subagent/end` carries, in log order. A run stays open while its child's epoch runs; once the child settled, its
 * end belongs in the log — recorded live, by the settlement path through the store, or at the parent's next resume.
 */
export const openRuns = (parentEvents: Iterable<LogEvent>): SubagentStartData[] => {
  const open = new Map<string, SubagentStartData>();
  for (const e of parentEvents) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'subagent/start') open.set(e.data.runId, e.data);
    else if (e.type === 'subagent/end') open.delete(e.data.runId);
  }
  return [...open.values()];
};

/** Whether the parent's log holds the run's `subagent/start` and no `subagent/end` for it yet. */
export const isRunOpen = (parentEvents: Iterable<LogEvent>, runId: string): boolean => openRuns(parentEvents).some((r) => r.runId === runId);

/** The `subagent/end` of a run that ended as its settlement account says: the start's identity, the stop reason, the closing text. */
export const runEnd = (start: SubagentStartData, account: SettlementAccount): SubagentEndData => ({
  runId: start.runId,
  childSessionId: start.childSessionId,
  mode: start.mode,
  epoch: start.epoch,
  stopReason: account.stopReason,
  ...(account.closingText !== null ? { lastAssistantText: account.closingText } : {}),
});

/**
 * The `subagent/end` of a settled run, derived from the child's own log alone (the parent was gone when the child
 * settled): the epoch is the child's events from the start's `childSeq` on (from its first event when the start
 * predates that field), read exactly as the live settlement reads it. A child log whose tail turn is still open (it
 * crashed) must be given with its repair closers, as a resume would append them.
 */
export const settledRunEnd = (start: SubagentStartData, childEvents: readonly LogEvent[]): SubagentEndData =>
  runEnd(start, settlementOf(start.childSessionId, childEvents.slice(start.childSeq ?? 0)));

/**
 * The `subagent/end {abnormal}` of a run nothing can be said about: its start failed before the child accepted its
 * prompt, or the child's log cannot be read at all (missing or corrupt) when the parent closes the run itself.
 */
export const abnormalRunEnd = (start: SubagentStartData): SubagentEndData => ({
  runId: start.runId,
  childSessionId: start.childSessionId,
  mode: start.mode,
  epoch: start.epoch,
  stopReason: 'abnormal',
});
