import type { AssistantBlock } from './events.js';

/** One streamed delta of an assistant message: visible text or reasoning. */
export interface StreamDelta {
  readonly type: 'text' | 'reasoning';
  readonly text: string;
}

/**
 * The blocks a stream has assembled so far, in stream order: consecutive deltas of one kind join into one block, a
 * change of kind starts a new block, and empty deltas assemble nothing. This is what an interrupted assistant
 * message keeps, so it is a fold of the step's `assistant/chunk` events: the log alone reproduces it.
 */
export const assembleDeltas = (deltas: Iterable<StreamDelta>): AssistantBlock[] => {
  const blocks: { type: 'text' | 'reasoning'; text: string }[] = [];
  for (const d of deltas) {
    if (d.text === '') continue;
    const last = blocks.at(-1);
    if (last && last.type === d.type) last.text += d.text;
    else blocks.push({ type: d.type, text: d.text });
  }
  return blocks;
};
