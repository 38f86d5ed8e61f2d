import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import type { StepContext } from './step-context.js';
import { stepContextOfLog } from './step-context-of-log.js';

/**
 * One step's request as `steerlog context --json` prints it, from a log's events as read (unparsed): the events are
 * parsed in order up to the first invalid one, exactly as the command loads a log, and the answer is
 * {@link stepContext} of that prefix. The console's `GET /api/context/<id>?step=<turn>.<step>` answers with it, so
 * the console and the CLI give one answer from one derivation.
 */

/** What `steerlog context --json` prints (and the console's context endpoint answers). */
export interface ContextOutput extends StepContext {
  readonly format: 'steerlog-context';
  readonly version: 1;
}

/** {@link StepContext} as `context --json` prints it. */
export const contextOutput = (context: StepContext): ContextOutput => ({ format: 'steerlog-context', version: 1, ...context });

/** The first invalid event of a log, as the reading commands report it. */
export interface LogPrefixError {
  readonly seq: number | null;
  readonly code: string;
  readonly message: string;
}

/** A log's valid prefix: its events parsed in order up to the first one that is not valid. */
export interface ParsedLog {
  readonly events: readonly LogEvent[];
  /** The first invalid event (the events before it are in `events`), or null. */
  readonly error: LogPrefixError | null;
}

/** Parses events as read (seq = position) up to the first invalid one, as `loadLog` does for `context`, `diff` and `replay`. */
export const parseLogPrefix = (raw: readonly unknown[]): ParsedLog => {
  const events: LogEvent[] = [];
  for (const r of raw) {
    const parsed = parseEvent(r, { expectedSeq: events.length, shared: true });
    if (E.isLeft(parsed)) return { events, error: { seq: parsed.left.seq, code: parsed.left.code, message: parsed.left.message } };
    events.push(parsed.right);
  }
  return { events, error: null };
};

/** Why a step's request could not be answered. */
export type StepRequestRefusal =
  /** The log has no such step (and is valid as far as it goes). */
  | { readonly kind: 'step-not-found'; readonly turn: number; readonly step: number; readonly message: string }
  /** The log turns invalid before the step's request: `context` exits 1 with this. */
  | { readonly kind: 'invalid-before'; readonly turn: number; readonly step: number; readonly error: LogPrefixError; readonly message: string };

/** The request of step `turn.step` of a parsed log, or why there is none (the same cases as `steerlog context`'s exits 2 and 1). */
export const stepRequest = (log: ParsedLog, turn: number, step: number): E.Either<StepRequestRefusal, ContextOutput> => {
  // the context use case's own answer (`steerlog context` prints the same), in the console's words
  const answer = stepContextOfLog(log, turn, step);
  switch (answer.kind) {
    case 'context':
      return E.right(contextOutput(answer.context));
    case 'invalid-before':
      return E.left({ kind: 'invalid-before', turn, step, error: answer.error, message: `the log is invalid before step ${turn}.${step}'s request: ${answer.error.message}` });
    case 'no-such-step':
      return E.left({ kind: 'step-not-found', turn, step, message: answer.message });
  }
};
