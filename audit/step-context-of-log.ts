import type { LoadedLog } from './load-log.js';
import { isStepNotFoundError, stepContext, type StepContext } from './step-context.js';

/**
 * The context use case's answer for one step of a loaded log: the step's context; or the log is invalid before the
 * step's request (`invalid-before`, the first invalid event); or the log, valid to its end, has no such step.
 */
export type StepContextAnswer =
  | { readonly kind: 'context'; readonly context: StepContext }
  | { readonly kind: 'invalid-before'; readonly error: NonNullable<LoadedLog['error']> }
  | { readonly kind: 'no-such-step'; readonly message: string };

/** The context use case over a loaded log (`loadLog`): what the model was given at step `turn`.`step`. */
export const stepContextOfLog = (log: LoadedLog, turn: number, step: number): StepContextAnswer => {
  try {
    return { kind: 'context', context: stepContext(log.events, turn, step) };
  } catch (e) {
    if (!isStepNotFoundError(e)) throw e;
    return log.error !== null ? { kind: 'invalid-before', error: log.error } : { kind: 'no-such-step', message: e.message };
  }
};
