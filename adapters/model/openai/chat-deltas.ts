import type { AssistantBlock, Usage } from '../../../domain/events.js';

/**
 * The parts of a streamed chat-completions answer both OpenAI-compatible clients (the fetch client and the SDK
 * client) assemble the same way: usage, tool calls accumulated from their deltas by index, and the tool-call blocks.
 */

/** A tool call being assembled from its deltas. */
export interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A tool-call delta of one chunk. */
export interface WireToolCallDelta {
  readonly index: number;
  readonly id?: string | null;
  readonly function?: { readonly name?: string | null; readonly arguments?: string | null } | null;
}

/** The usage a chunk reports (its prompt and completion tokens): input, output, and the cached input when the provider says. */
export const usageOf = (input: number, output: number, details: { readonly cached_tokens?: number | null } | null | undefined): Usage => {
  const cached = details?.cached_tokens;
  return { inputTokens: input, outputTokens: output, ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}) };
};

/** Adds one chunk's tool-call deltas to `calls` (by index: ids replace, names and arguments append). */
export const addToolCallDeltas = (calls: PartialToolCall[], deltas: readonly WireToolCallDelta[] | null | undefined): void => {
  for (const tc of deltas ?? []) {
    const call = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
    if (tc.id) call.id = tc.id;
    if (tc.function?.name) call.name += tc.function.name;
    if (tc.function?.arguments) call.arguments += tc.function.arguments;
  }
};

/** The assembled calls as `tool-call` blocks (a call without an id gets `call-<index>`, without arguments `{}`). */
export const toolCallBlocks = (calls: readonly (PartialToolCall | undefined)[]): AssistantBlock[] => {
  const blocks: AssistantBlock[] = [];
  for (const [i, c] of calls.entries()) {
    if (!c) continue;
    blocks.push({ type: 'tool-call', callId: c.id || `call-${i}`, name: c.name, arguments: c.arguments || '{}' });
  }
  return blocks;
};
