import type { ContentBlock, UserMessage } from '../domain/message.js';
import { createUserMessage } from '../domain/message.js';
import { sameJson } from '../domain/json.js';
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

/** Length of `bytes` bytes in padded base64: 4 characters for every 3 bytes begun (an image travels and is stored so). */
export const base64Length = (bytes: number): number => 4 * Math.ceil(bytes / 3);

/**
 * What a prompt holds besides its image's base64, within which an image at the limit is still admitted: the request
 * envelope, the ids, the message's source and actor, the event's own fields, and up to 8 KiB of text (tested).
 */
export const PROMPT_ROOM_BYTES = 16 * 1024;

/** The largest `n` whose base64 fits `room` characters. */
const fitsBase64 = (room: number): number => Math.max(0, Math.floor(room / 4) * 3);

/** The limits a prompt's image must fit: the request body (when a transport has one) and the store's event. */
export interface PromptLimits {
  /** Largest request body, bytes (the HTTP `--body-limit`); none for a transport without one. */
  readonly bodyLimitBytes?: number;
  /** Largest event the session log admits (`Runtime.maxEventBytes`). */
  readonly maxEventBytes: number;
  /** Content is sealed (`--encrypt`): the stored content is the base64 of its encrypted JSON, 4/3 again. */
  readonly sealed: boolean;
}

/**
 * The largest image a prompt can carry so that a prompt with one such image and `PROMPT_ROOM_BYTES` of everything
 * else passes the body limit and becomes an event within the event limit: its base64 (4/3 of its bytes) plus the
 * room must fit each limit, and sealed content is the base64 of the content plus the room, inflated once more.
 */
export const largestImageBytes = (limits: PromptLimits): number => {
  const stored = limits.sealed ? fitsBase64(fitsBase64(limits.maxEventBytes - PROMPT_ROOM_BYTES) - PROMPT_ROOM_BYTES) : fitsBase64(limits.maxEventBytes - PROMPT_ROOM_BYTES);
  return limits.bodyLimitBytes === undefined ? stored : Math.min(stored, fitsBase64(limits.bodyLimitBytes - PROMPT_ROOM_BYTES));
};

/** The smallest body limit that carries a prompt with one image of `imageBytes` (its base64 plus the room). */
export const bodyLimitFor = (imageBytes: number): number => base64Length(imageBytes) + PROMPT_ROOM_BYTES;

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

/** The keys of the blocks `promptMessage` copies by hand, in their order (the copy keeps the key order). */
const TEXT_KEYS: readonly string[] = ['type', 'text'];
const IMAGE_KEYS: readonly string[] = ['type', 'mediaType', 'data'];

/**
 * A copy of a text or image block of string fields in the order `toContentBlocks` writes them (`type,text` or
 * `type,mediaType,data`, no other own key); null for any other.
 */
const copyBlock = (b: ContentBlock): ContentBlock | null => {
  const fields = b as unknown as Record<string, unknown>;
  const type = fields.type;
  const order = type === 'text' ? TEXT_KEYS : type === 'image' ? IMAGE_KEYS : null;
  if (order === null) return null;
  // the own keys in their order, each holding a string (for…in: an inherited enumerable key declines too)
  let n = 0;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key) || typeof fields[key] !== 'string' || key !== order[n]) return null;
    n++;
  }
  if (n !== order.length) return null;
  if (b.type === 'text') return { type: 'text', text: b.text };
  if (b.type === 'image') return { type: 'image', mediaType: b.mediaType, data: b.data };
  return null;
};

/**
 * A fresh prompt message with the given id and source: a detached, deep-frozen value, as `createUserMessage` makes.
 * The common prompt (text and image blocks, a source of strings: what `session.prompt` builds) is copied field by
 * field; anything else through `createUserMessage` (`structuredClone`, several times the cost per admission).
 */
export const promptMessage = (id: string, content: readonly ContentBlock[], source: UserMessage['source']): UserMessage => {
  const blocks: ContentBlock[] = [];
  for (const b of content) {
    const copied = copyBlock(b);
    if (copied === null) return createUserMessage(content, source, { newId: () => id });
    blocks.push(Object.freeze(copied));
  }
  const fields = source as unknown as Record<string, unknown>;
  if (Object.getPrototypeOf(fields) !== Object.prototype) return createUserMessage(content, source, { newId: () => id });
  for (const key in fields) if (!Object.hasOwn(fields, key) || typeof fields[key] !== 'string') return createUserMessage(content, source, { newId: () => id });
  return Object.freeze({ id: id as UserMessage['id'], role: 'user' as const, content: Object.freeze(blocks), source: Object.freeze({ ...source }) });
};
