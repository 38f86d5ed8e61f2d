import type { z } from 'zod';

/** A lone surrogate: text that is not valid UTF-16, which no store can keep as JSON text (RFC 8785 refuses it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A string a client sends that the host keeps in the log (a prompt's text, the rpcId its message source records):
 * well-formed text only, so a lone surrogate is a `bad-request` naming the field, never a store's refusal.
 */
export const wellFormedText = <T extends z.ZodString>(schema: T) => schema.refine((t) => isWellFormedText(t), 'not valid UTF-16 (a lone surrogate)');

/** Whether `text` is well-formed UTF-16 (no lone surrogate): the check {@link wellFormedText} adds to a schema. */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);
