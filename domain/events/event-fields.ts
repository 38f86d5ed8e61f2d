import { z } from 'zod';

/**
 * The number fields the event data schemas share (in domain/events/ and domain/children/subagent-events.ts). Internal
 * to the event modules: `domain/events.ts` does not re-export them.
 */

/** A count or offset: a non-negative safe integer. */
export const int = z.number().int().nonnegative().refine(Number.isSafeInteger, 'a safe integer');
/** A positive safe integer (a step number, a removed count, a delegation depth, a child's epoch). */
export const positiveInt = z.number().int().positive().refine(Number.isSafeInteger, 'a safe integer');
/** A turn number: turns are numbered from 1. */
export const turnNumber = positiveInt;
