import { z } from 'zod';
import { int, positiveInt } from './event-fields.js';

/** The events of a session's life: `session/created`, `session/end-seed` and `session/erased`. */

// ---- session/created ----------------------------------------------------------------------------------------------
/** The zod schema of {@link SessionKind}. */
export const SessionKindSchema = z.enum(['ordinary', 'continuable', 'one-shot']);
/** How a session runs: `ordinary`, `continuable` or `one-shot`. */
export type SessionKind = z.infer<typeof SessionKindSchema>;
/** The zod schema of {@link SessionCreatedData}. */
export const SessionCreatedDataSchema = z
  .object({
    sessionId: z.string().min(1),
    createdAt: z.number().finite(),
    kind: SessionKindSchema,
    parentSession: z.string().min(1).optional(),
    /** Number of events inherited from the parent (a fork's seed): the inbox replays only events at seq >= seedLength. */
    seedLength: int.optional(),
    /** Who made the session: `subagent` for a child started by its parent session. */
    origin: z.enum(['user', 'fork', 'subagent']).optional(),
    /** A child's distance from its root session (1 for a direct child of a root). */
    delegationDepth: positiveInt.optional(),
  })
  .strict();
/** The data of `session/created`: the session id, when it was created, its kind and, for a fork, its parent and seed length. */
export type SessionCreatedData = z.infer<typeof SessionCreatedDataSchema>;

// ---- session/end-seed ---------------------------------------------------------------------------------------------
/** The zod schema of {@link EndSeedData}. */
export const EndSeedDataSchema = z.object({}).strict();
/** The data of `session/end-seed` (empty): marks the end of a fork's inherited seed. */
export type EndSeedData = z.infer<typeof EndSeedDataSchema>;

// ---- session/erased -----------------------------------------------------------------------------------------------
/**
 * Data keys were destroyed (crypto-shredding): the content they sealed in this session is gone for good. Who erased
 * is the event's `metadata.actor`, when is its `time`. Written with `ignorable: true`, so a reader that does not
 * know the type keeps it without interpreting it. The folds ignore it.
 */
export const SessionErasedDataSchema = z
  .object({
    /** What was erased: every key of a session, or every key of an actor. */
    scope: z.enum(['session', 'actor']),
    /** The session id or the actor id. */
    subject: z.string().min(1),
    /** The keys of this session that were destroyed. */
    keyIds: z.array(z.string().min(1)),
  })
  .strict();
/** The data of a `session/erased` event. */
export type SessionErasedData = z.infer<typeof SessionErasedDataSchema>;
