import * as E from 'fp-ts/lib/Either.js';
import { admitMessage } from '../domain/inbox/inbox-decide.js';
import type { ToolResultData } from '../domain/events.js';

/** The error code of a tool result that replaced one too large for the store. */
export const TOOL_RESULT_TOO_LARGE = 'TOOL_RESULT_TOO_LARGE';

/** What the size checks need from the session log: its limit, and the size its next event would have. */
export interface EventSizer {
  readonly maxEventBytes: number;
  measure(type: string, data: unknown): number;
}

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
 * items) would be larger than the limit; or null. Contexts that are not messages are left to the inbox decider.
 */
export const oversizedContexts = (contexts: readonly unknown[], nextStepSize: number, log: EventSizer): string | null => {
  for (let i = 0; i < contexts.length; i++) {
    const admitted = admitMessage(contexts[i], `additionalContexts[${i}]`);
    if (E.isLeft(admitted)) continue;
    const size = log.measure('agent/inbox/spliced', { target: 'next-step', start: nextStepSize + i, inserted: [admitted.right] });
    if (size > log.maxEventBytes) return `additional context ${i} is too large to record: ${size} bytes; the limit is ${log.maxEventBytes}`;
  }
  return null;
};
