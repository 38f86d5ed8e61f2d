import { z } from 'zod';
import { UserMessageSchema, type UserMessage } from '../message.js';
import { int, positiveInt } from './event-fields.js';

/** The inbox's events: the durable `agent/inbox/spliced`, and the live notifications derived from it. */

/** The two inbox lists. */
export const InboxTargetSchema = z.enum(['next-turn', 'next-step']);
/** One of the two inbox lists: `next-turn` (queued prompts) or `next-step` (steering and context). */
export type InboxTarget = z.infer<typeof InboxTargetSchema>;

// ---- agent/inbox/spliced ------------------------------------------------------------------------------------------
/**
 * One durable mutation of one inbox list. Canonical forms (anything else is refused):
 * - pure insertion: no `removedCount`, no `outcome`, `inserted` non-empty;
 * - claim (pure deletion): `removedCount` >= 1, `inserted` empty, no `outcome`;
 * - cancellation: `removedCount` >= 1, `outcome: 'canceled'`, `inserted` possibly non-empty (a replace).
 */
export const InboxSplicedDataSchema = z
  .object({
    target: InboxTargetSchema,
    start: int,
    removedCount: positiveInt.optional(),
    inserted: z.array(UserMessageSchema),
    outcome: z.literal('canceled').optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.removedCount === undefined && d.outcome !== undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['outcome'], message: 'outcome requires removedCount' });
    }
    if (d.removedCount === undefined && d.inserted.length === 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['inserted'], message: 'a splice that removes nothing must insert something' });
    }
    if (d.removedCount !== undefined && d.outcome === undefined && d.inserted.length > 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['inserted'], message: 'a claim (removal without outcome) inserts nothing' });
    }
  });
/** The data of `agent/inbox/spliced`: one change to one inbox list, in `Array.prototype.splice` coordinates. */
export interface InboxSplicedData {
  readonly target: InboxTarget;
  readonly start: number;
  readonly removedCount?: number;
  readonly inserted: readonly UserMessage[];
  readonly outcome?: 'canceled';
}

// ---- live notifications (not durable; derivable from the log) -----------------------------------------------------
/** A live inbox notification (not stored: derivable from the log): inserted, claimed or discarded. */
export type InboxNotification =
  | { readonly type: 'agent/inbox/inserted'; readonly message: UserMessage }
  | { readonly type: 'agent/inbox/claimed'; readonly message: UserMessage; readonly turn: number }
  | { readonly type: 'agent/inbox/discarded'; readonly message: UserMessage };
