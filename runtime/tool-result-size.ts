import * as E from 'fp-ts/lib/Either.js';
import { admitMessage } from '../domain/inbox/inbox-decide.js';
import type { ToolResultData } from '../domain/events.js';
import type { UserMessage } from '../domain/message.js';

/** The error code of a tool result that replaced one too large for the store. */
export const TOOL_RESULT_TOO_LARGE = 'TOOL_RESULT_TOO_LARGE';

/** What a tool result commits: the `tool/result` data and the additional contexts spliced to next-step after it. */
export interface ToolResultCommit {
  readonly data: ToolResultData;
  readonly contexts: readonly UserMessage[];
}

/**
 * Keeps a tool's outcome out of the log when the store could not hold it: if the `tool/result` event, or the splice
 * of any of its additional contexts, would be larger than `limit` (as `measure` sizes the next event), the outcome
 * becomes an error result naming the sizes, which the model sees, and no context is staged. Contexts that are not
 * messages are left for the inbox decider to refuse, as before.
 */
export const fitToolResult = (
  commit: ToolResultCommit,
  nextStepSize: number,
  limit: number,
  measure: (type: string, data: unknown) => number,
): ToolResultCommit => {
  const resultSize = measure('tool/result', commit.data);
  const tooLarge: string[] = [];
  if (resultSize > limit) tooLarge.push(`the result is ${resultSize} bytes`);
  commit.contexts.forEach((context, i) => {
    const admitted = admitMessage(context, `additionalContexts[${i}]`);
    if (E.isLeft(admitted)) return;
    const size = measure('agent/inbox/spliced', { target: 'next-step', start: nextStepSize + i, inserted: [admitted.right] });
    if (size > limit) tooLarge.push(`additional context ${i} is ${size} bytes`);
  });
  if (tooLarge.length === 0) return commit;
  return {
    data: {
      turn: commit.data.turn,
      step: commit.data.step,
      message: {
        role: 'tool',
        callId: commit.data.message.callId,
        content: [{ type: 'text', text: `the tool's outcome is too large to record: ${tooLarge.join(', ')}; the limit is ${limit}` }],
        isError: true,
      },
      error: { name: 'ToolResultTooLarge', code: TOOL_RESULT_TOO_LARGE },
    },
    contexts: [],
  };
};
