import { z } from 'zod';
import { wellFormedText } from './well-formed.js';

/** The content of a prompt as a client sends it: text and image blocks. */

/** The schema of a text block of a prompt: any well-formed text (a lone surrogate is a `bad-request` naming the field). */
export const PromptTextBlockSchema = z.object({ type: z.literal('text'), text: wellFormedText(z.string()) }).strict();
/** The media types an image of a prompt may have. */
export const PROMPT_IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
/** The pattern of an image's base64 data. */
export const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;
/** An image as a client sends it: base64 data of a png, jpeg, webp or gif; `name` is accepted and not kept. */
export const PromptImageBlockSchema = z
  .object({
    type: z.literal('image'),
    mediaType: z.enum(PROMPT_IMAGE_MEDIA_TYPES),
    data: z.string().regex(BASE64_PATTERN, 'base64 data'),
    name: z.string().max(256).optional(),
  })
  .strict();
/** The schema of a prompt's content blocks (text or image, discriminated by `type`). */
export const PromptContentBlockSchema = z.discriminatedUnion('type', [PromptTextBlockSchema, PromptImageBlockSchema]);
/** A content block of a prompt over the wire: text or an image. */
export type PromptContentBlock = z.infer<typeof PromptContentBlockSchema>;
