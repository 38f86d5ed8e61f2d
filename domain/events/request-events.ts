import { z } from 'zod';
import { SealedContentSchema } from '../sealed-content.js';
import { positiveInt } from './event-fields.js';

/**
 * A step's provenance: what the runtime asked the model with. `request/header` (the request's configuration, system
 * prompt and offered tools) and `request/context` (the model route and its context window). Both are written inside
 * a step, after its `step/start` and `user/message`s and before its first `assistant/chunk`, and only when they say
 * something new: a log written before steerlog recorded them has none ("not recorded").
 */

// ---- request/header -----------------------------------------------------------------------------------------------
/** The zod schema of {@link OfferedTool}. */
export const OfferedToolSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    /** The tool's parameters as JSON Schema, when its writer offered them (the reference harness does). */
    parameters: z.record(z.unknown()).optional(),
  })
  .strict();
/** A tool as a request offered it to the model. */
export type OfferedTool = z.infer<typeof OfferedToolSchema>;

/** The zod schema of {@link RequestHeader}. */
export const RequestHeaderSchema = z
  .object({
    /** The request's configuration: `provider` and `model` when known, and whatever else its writer sent. */
    config: z.record(z.unknown()),
    /** Configuration the model adapter filled in by default (the writer says which). */
    adapterDefaults: z.record(z.unknown()).optional(),
    /** The system prompt the request carried (none: the request had none). */
    system: z.string().optional(),
    /** The tools the request offered (none: it offered none). */
    tools: z.array(OfferedToolSchema).optional(),
  })
  .strict();
/** What a model request was built with: its configuration, system prompt and offered tools. */
export type RequestHeader = z.infer<typeof RequestHeaderSchema>;

/** Why a `request/header` was written. */
export const RequestHeaderReasonSchema = z.enum(['initial', 'resume', 'change']);
/**
 * `initial`: the first request of a log that had no header; `resume`: the first request of a runtime that loaded a
 * log that had one (a resume or a fork); `change`: the header differs from the one the same runtime wrote last.
 */
export type RequestHeaderReason = z.infer<typeof RequestHeaderReasonSchema>;

/** The zod schema of {@link RequestHeaderData}. */
export const RequestHeaderDataSchema = z
  .object({
    header: RequestHeaderSchema,
    reason: RequestHeaderReasonSchema,
    /** The system prompt and the tools' descriptions and parameters, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** The data of `request/header`: the header of the requests that follow (until the next one), and why it was written. */
export type RequestHeaderData = z.infer<typeof RequestHeaderDataSchema>;

// ---- request/context ----------------------------------------------------------------------------------------------
/** The zod schema of {@link RequestContextData}. */
export const RequestContextDataSchema = z
  .object({
    provider: z.string(),
    model: z.string(),
    /** The model's context window in tokens, when the model port says it. */
    contextWindow: positiveInt.optional(),
  })
  .strict();
/** The data of `request/context`: the model route (and its context window) of the requests that follow, written when it changed. */
export type RequestContextData = z.infer<typeof RequestContextDataSchema>;
