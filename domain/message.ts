import { z } from 'zod';
import type { MessageId } from './brand.js';
import { deepFreeze } from './json.js';
import { SealedContentSchema, type SealedContent } from './sealed-content.js';

/** A text content block. */
export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() }).strict();
/** An image content block: base64 data with its media type. */
export const ImageBlockSchema = z
  .object({
    type: z.literal('image'),
    mediaType: z.string().regex(/^image\/[a-z0-9.+-]+$/i, 'a media type such as image/png'),
    data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64 data'),
  })
  .strict();
/** The zod schema of {@link ContentBlock}. */
export const ContentBlockSchema = z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema]);
/** A text content block. */
export type TextBlock = z.infer<typeof TextBlockSchema>;
/** An image content block: media type and base64 data. */
export type ImageBlock = z.infer<typeof ImageBlockSchema>;
/** One block of a user message: text, or a base64 image. */
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/**
 * Where a message came from. An open union on `kind`: the kinds below are declared and checked;
 * any other kind is kept verbatim (consumers switch on `kind` and tolerate unknown ones).
 */
export type UserSource = { readonly kind: 'user'; readonly rpcId?: string; readonly clientTimeZone?: string };
/** The source of a message a plugin injected (`form` says how, e.g. `snapshot`). */
export type PluginSource = { readonly kind: 'plugin'; readonly plugin: string; readonly form?: string; readonly [k: string]: unknown };
/** The source of a message from a coordinating agent. */
export type CoordinatorSource = { readonly kind: 'coordinator'; readonly [k: string]: unknown };
/** The source of a report a child agent sent. */
export type SubagentReportSource = { readonly kind: 'subagent-report'; readonly childSession?: string; readonly [k: string]: unknown };
/** The source of the message that says a child agent settled. */
export type SubagentSettledSource = { readonly kind: 'subagent-settled'; readonly childSession?: string; readonly [k: string]: unknown };
/** A source kind steerlog does not declare (an extension's). */
export type UnknownSource = { readonly kind: string; readonly [k: string]: unknown };
/** Where a message came from: an open union on `kind` (user, plugin, coordinator, subagent reports, or any other kind, kept verbatim). */
export type MessageSource =
  | UserSource
  | PluginSource
  | CoordinatorSource
  | SubagentReportSource
  | SubagentSettledSource
  | UnknownSource;

/** The source kinds steerlog declares and checks; any other kind is kept verbatim. */
export const DECLARED_SOURCE_KINDS = ['user', 'plugin', 'coordinator', 'subagent-report', 'subagent-settled'] as const;

const declaredSourceSchemas: Record<string, z.ZodTypeAny> = {
  user: z.object({ kind: z.literal('user'), rpcId: z.string().optional(), clientTimeZone: z.string().optional() }).passthrough(),
  plugin: z.object({ kind: z.literal('plugin'), plugin: z.string(), form: z.string().optional() }).passthrough(),
  coordinator: z.object({ kind: z.literal('coordinator') }).passthrough(),
  'subagent-report': z.object({ kind: z.literal('subagent-report'), childSession: z.string().optional() }).passthrough(),
  'subagent-settled': z.object({ kind: z.literal('subagent-settled'), childSession: z.string().optional() }).passthrough(),
};

/** The zod schema of {@link MessageSource}. */
export const MessageSourceSchema = z
  .object({ kind: z.string().min(1) })
  .passthrough()
  .superRefine((source, ctx) => {
    const declared = declaredSourceSchemas[source.kind];
    if (!declared) return;
    const result = declared.safeParse(source);
    if (!result.success) for (const issue of result.error.issues) ctx.addIssue(issue);
  }) as unknown as z.ZodType<MessageSource>;

/** The zod schema of a {@link MessageId}: a non-empty string. */
export const MessageIdSchema = z.string().min(1, 'a message id is a non-empty string') as unknown as z.ZodType<MessageId>;

/** A pending input item: user-role content with a stable id and a required source. */
export const UserMessageSchema = z
  .object({
    id: MessageIdSchema,
    role: z.literal('user'),
    content: z.array(ContentBlockSchema),
    source: MessageSourceSchema,
    /** The content, encrypted (see sealed-content.ts): written by the runtime, refused on input. */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** A pending input: a message with a stable id, content blocks and its source. */
export interface UserMessage {
  readonly id: MessageId;
  readonly role: 'user';
  readonly content: readonly ContentBlock[];
  readonly source: MessageSource;
  /** The content, encrypted: present in a stored encrypted log, and in a read one whose key is gone. */
  readonly sealed?: SealedContent;
}

/** Options of {@link createUserMessage}: where the new message id comes from. */
export interface CreateUserMessageOptions {
  /** Id source, injectable for deterministic replays. @defaultValue crypto.randomUUID */
  readonly newId?: () => string;
}

/** A fresh message with a new UUID id: a detached, deep-frozen value. */
export const createUserMessage = (
  content: string | readonly ContentBlock[],
  source: MessageSource = { kind: 'user' },
  options: CreateUserMessageOptions = {},
): UserMessage => {
  const newId = options.newId ?? (() => globalThis.crypto.randomUUID());
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return freezeMessage({ id: newId() as MessageId, role: 'user', content: blocks, source });
};

/** The ids of some messages, in order (an indexed loop: no iterator or callback per message, for the folds' per-splice paths). */
export const messageIds = (messages: readonly UserMessage[]): string[] => {
  const ids: string[] = [];
  for (let i = 0; i < messages.length; i++) ids.push(messages[i]!.id);
  return ids;
};

/** A detached deep-frozen copy that keeps the id (for edits that keep identity). */
export const freezeMessage = (message: UserMessage): UserMessage => deepFreeze(structuredClone(message));

/** The text of a message's text blocks, joined; null when any block is not text. */
export const messageText = (message: UserMessage): string | null =>
  message.content.every((b) => b.type === 'text') ? message.content.map((b) => (b as TextBlock).text).join('') : null;

const CONTENT_SCHEMA = z.array(ContentBlockSchema);

/** Checks untrusted content (a string or blocks) and returns the blocks, or the first problem and its path. */
export const parseContent = (content: unknown): { readonly ok: true; readonly blocks: ContentBlock[] } | { readonly ok: false; readonly problem: string } => {
  // a string is one text block: nothing to check
  if (typeof content === 'string') return { ok: true, blocks: [{ type: 'text', text: content }] };
  const parsed = CONTENT_SCHEMA.safeParse(content);
  if (parsed.success) return { ok: true, blocks: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, problem: `${issue.message} at content${issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}` };
};
