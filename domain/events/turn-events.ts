import { z } from 'zod';
import { SealedContentSchema, type SealedContent } from '../sealed-content.js';
import { positiveInt, turnNumber } from './event-fields.js';

/** The events that open and close turns and steps: `turn/start`, `turn/end`, `step/start` and `step/end`. */

// ---- turn/start, turn/end -----------------------------------------------------------------------------------------
/** The zod schema of {@link TurnStartData}. */
export const TurnStartDataSchema = z.object({ turn: turnNumber }).strict();
/** The data of `turn/start`: the turn number. */
export type TurnStartData = z.infer<typeof TurnStartDataSchema>;

/** The zod schema of {@link AbortCause}. */
export const AbortCauseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user') }).strict(),
  z.object({ kind: z.literal('parent') }).strict(),
  z.object({ kind: z.literal('hook'), reason: z.string().optional() }).strict(),
  z.object({ kind: z.literal('disposed') }).strict(),
  z.object({ kind: z.literal('legacy') }).strict(),
]);
/** Why a turn was aborted: the user, the parent agent, a hook (with an optional reason), disposal, or a legacy log. */
export type AbortCause = z.infer<typeof AbortCauseSchema>;

/** The zod schema of {@link TurnError}. */
export const TurnErrorSchema = z
  .object({
    message: z.string(),
    code: z.string().min(1),
    status: z.number().int().optional(),
    providerRetryAfterMs: z.number().nonnegative().optional(),
    requestId: z.string().optional(),
  })
  .strict();
/** The error a turn ended with: message, code and the provider's details. */
export type TurnError = z.infer<typeof TurnErrorSchema>;

/** The turn end reasons steerlog declares; a log may carry others (they count as accounting, see the consumed-work fold). */
export const DECLARED_TURN_END_KINDS = ['completed', 'max-tokens', 'blocked', 'interrupted', 'aborted', 'error'] as const;
/** Why a turn ended: completed, max-tokens, blocked, interrupted, aborted (with the cause) or error (with the error). */
export type TurnEndReason =
  | { readonly kind: 'completed' }
  | { readonly kind: 'max-tokens' }
  | { readonly kind: 'blocked' }
  | { readonly kind: 'interrupted' }
  | { readonly kind: 'aborted'; readonly reason: AbortCause }
  | { readonly kind: 'error'; readonly error: TurnError };
const declaredReasonSchemas: Record<string, z.ZodTypeAny> = {
  completed: z.object({ kind: z.literal('completed') }).strict(),
  'max-tokens': z.object({ kind: z.literal('max-tokens') }).strict(),
  blocked: z.object({ kind: z.literal('blocked') }).strict(),
  interrupted: z.object({ kind: z.literal('interrupted') }).strict(),
  aborted: z.object({ kind: z.literal('aborted'), reason: AbortCauseSchema }).strict(),
  error: z.object({ kind: z.literal('error'), error: TurnErrorSchema }).strict(),
};
/** The zod schema of {@link TurnEndReason}. */
export const TurnEndReasonSchema = z
  .object({ kind: z.string().min(1) })
  .passthrough()
  .superRefine((r, ctx) => {
    const schema = declaredReasonSchemas[r.kind];
    if (!schema) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['kind'], message: `unknown turn end reason "${r.kind}"` });
      return;
    }
    const res = schema.safeParse(r);
    if (!res.success) for (const issue of res.error.issues) ctx.addIssue(issue);
  }) as unknown as z.ZodType<TurnEndReason>;

/** The zod schema of {@link TurnEndData}. */
export const TurnEndDataSchema = z.object({ turn: turnNumber, reason: TurnEndReasonSchema, sealed: SealedContentSchema.optional() }).strict();
/** The data of `turn/end`: the turn and why it ended. */
export interface TurnEndData {
  readonly turn: number;
  readonly reason: TurnEndReason;
  /** The error message or abort reason, encrypted (see sealed-content.ts). */
  readonly sealed?: SealedContent;
}

// ---- step/start, step/end -----------------------------------------------------------------------------------------
/** The zod schema of {@link StepData}. */
export const StepDataSchema = z.object({ turn: turnNumber, step: positiveInt }).strict();
/** The data of `step/start` and `step/end`: the turn and step numbers. */
export type StepData = z.infer<typeof StepDataSchema>;
