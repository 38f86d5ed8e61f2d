import * as E from 'fp-ts/lib/Either.js';
import { admitMessage } from '../domain/inbox/inbox-decide.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { ToolResultData } from '../domain/events.js';

/** The error code of a tool result that replaced one too large for the store. */
export const TOOL_RESULT_TOO_LARGE = 'TOOL_RESULT_TOO_LARGE';

/** What the size checks need from the session log: its limit, and the size its next event would have. */
export interface EventSizer {
  readonly maxEventBytes: number;
  measure(type: string, data: unknown, metadata?: EventMetadata): number;
}

/** A UUID-sized event id: the `causationId` a size check counts for an event not yet appended. */
const UUID_SIZED_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Keeps a tool's outcome out of the log when the store could not hold it: a `tool/result` larger than the limit
 * becomes an error result naming its size, which the model sees, instead of an unwritable event.
 */
export const fitToolResult = (data: ToolResultData, log: EventSizer): ToolResultData => {
  const size = log.measure('tool/result', data);
  if (size <= log.maxEventBytes) return data;
  return {
    turn: data.turn,
    step: data.step,
    message: {
      role: 'tool',
      callId: data.message.callId,
      content: [{ type: 'text', text: `the tool's result is too large to record: ${size} bytes; the limit is ${log.maxEventBytes}` }],
      isError: true,
    },
    error: { name: 'ToolResultTooLarge', code: TOOL_RESULT_TOO_LARGE },
  };
};

/**
 * Why a result's additional contexts cannot be staged: the splice of one of them to next-step (after `nextStepSize`
 * items) would be larger than the limit with the `metadata` it will carry (its actor, and a `causationId` naming the
 * tool result: counted as a UUID-sized id, as that result is not logged yet), or the `user/message` it becomes when
 * it enters a step would be; or null. Contexts that are not messages are left to the inbox decider.
 */
export const oversizedContexts = (contexts: readonly unknown[], nextStepSize: number, log: EventSizer, metadata: EventMetadata = {}): string | null => {
  const spliceMetadata: EventMetadata = { ...metadata, causationId: UUID_SIZED_ID };
  for (let i = 0; i < contexts.length; i++) {
    const admitted = admitMessage(contexts[i], `additionalContexts[${i}]`);
    if (E.isLeft(admitted)) continue;
    const size = Math.max(
      log.measure('agent/inbox/spliced', { target: 'next-step', start: nextStepSize + i, inserted: [admitted.right] }, spliceMetadata),
      log.measure('user/message', admitted.right, { causationId: UUID_SIZED_ID }),
    );
    if (size > log.maxEventBytes) return `additional context ${i} is too large to record: ${size} bytes; the limit is ${log.maxEventBytes}`;
  }
  return null;
};
