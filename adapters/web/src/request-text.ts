import type { ModelMessage } from '../../../domain/model-messages.js';

/** One content block in words, as `steerlog context` prints it: text, reasoning, a tool call, or `[type]`. */
export const blockText = (b: ModelMessage['content'][number]): string => {
  const block = b as { type: string; text?: string; name?: string; callId?: string; arguments?: string };
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'reasoning':
      return `(reasoning) ${block.text ?? ''}`;
    case 'tool-call':
      return `[tool call ${block.name ?? '?'} ${block.arguments ?? ''}]`;
    default:
      return `[${block.type}]`;
  }
};

/** A message of the request in words: every block, joined. */
export const messageText = (m: ModelMessage): string => m.content.map((b) => blockText(b as ModelMessage['content'][number])).join(' ');
