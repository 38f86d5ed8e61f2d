import type { ContentBlock, UserMessage } from '../../domain/message.js';
import { createUserMessage } from '../../domain/message.js';
import { sameJson } from '../../domain/json.js';
import { HostError } from './errors.js';
import type { PromptContentBlock } from './schemas.js';

/** The content blocks a message keeps (an image's `name` is not part of steerlog's content model). */
export const toContentBlocks = (blocks: readonly PromptContentBlock[]): ContentBlock[] =>
  blocks.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'image', mediaType: b.mediaType, data: b.data }));

/** Decoded size of base64 data, without decoding it. */
export const base64Bytes = (data: string): number => {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - pad;
};

export interface ImagePolicy {
  /** The model takes image input. */
  readonly acceptsImages: boolean;
  /** Largest decoded image, bytes. */
  readonly maxImageBytes: number;
}

/** Step 4 of a prompt's admission: images the model cannot take, or that are too large, are refused. */
export const checkImages = (blocks: readonly PromptContentBlock[], policy: ImagePolicy): void => {
  const images = blocks.filter((b) => b.type === 'image');
  if (images.length === 0) return;
  if (!policy.acceptsImages) throw new HostError('attachment-error', 'the model takes no image input', { reason: 'MODEL_DOES_NOT_SUPPORT_IMAGES' });
  for (const image of images) {
    const bytes = base64Bytes(image.data);
    if (bytes > policy.maxImageBytes) {
      throw new HostError('attachment-error', `an image of ${bytes} bytes is larger than the limit of ${policy.maxImageBytes}`, {
        reason: 'IMAGE_TOO_LARGE',
        bytes,
        limit: policy.maxImageBytes,
      });
    }
  }
};

/**
 * Two contents are the same prompt (an idempotent retry) when their JSON texts are equal (key order counts), compared
 * in place by `sameJson`, whose answer that is for lossless JSON. Both contents are: the admitted one is a logged
 * event's data (the session log holds only lossless JSON copies), the retry's is built by `toContentBlocks` from
 * strings its request schema parsed.
 */
export const sameContent = (a: readonly ContentBlock[], b: readonly ContentBlock[]): boolean => sameJson(a, b);

/** A fresh prompt message with the given id and source. */
export const promptMessage = (id: string, content: readonly ContentBlock[], source: UserMessage['source']): UserMessage =>
  createUserMessage(content, source, { newId: () => id });
