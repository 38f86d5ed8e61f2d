/**
 * The turn loop the telemetry benchmarks share: the scripted model's answer for a turn shape, and sessions that each
 * send one follow-up at a time and wait for it to be done. It takes the checkout's own classes and functions as
 * arguments (never imports the runtime), so a benchmark that loads a checkout with `--checkout` drives that
 * checkout's runtime with it.
 */

/** A 1-step turn (the model answers at once) or a 3-step turn (two steps of one tool call each, then an answer). */
export type TurnShape = '1-step' | '3-step';

/** `value` as a {@link TurnShape}; anything else is refused (a typo must not silently run the 1-step shape). */
export const turnShapeOf = (value: string): TurnShape => {
  if (value === '1-step' || value === '3-step') return value;
  throw new Error(`the turn shape is 1-step or 3-step, not ${JSON.stringify(value)}`);
};

/** The request fields the shape's answer reads. */
interface StepOfTurn {
  readonly turn: number;
  readonly step: number;
}

/** A tool call answer, as the scripted model takes it. */
interface ToolCallAnswer {
  readonly toolCalls: readonly [{ readonly callId: string; readonly name: 'noop' }];
}

/**
 * The scripted model's `whenExhausted` answer for `shape`: in a 3-step turn steps 1 and 2 call the `noop` tool (call
 * id `c<turn>-<step>`), and every other step answers `done`.
 */
export const shapeAnswer =
  (shape: TurnShape) =>
  (request: StepOfTurn): ToolCallAnswer | 'done' =>
    shape === '3-step' && request.step < 3 ? { toolCalls: [{ callId: `c${request.turn}-${request.step}`, name: 'noop' }] } : 'done';

/** What the loop needs of a session. */
export interface FollowupSession<M> {
  followup(message: M): unknown;
  whenIdle(): Promise<void>;
}

/**
 * Every session, concurrently, sends `turns` follow-ups made by `message`, each once the previous one is done;
 * `afterTurn` (if given) runs after each with the session's index and the turn's.
 */
export const followupTurns = async <M>(
  sessions: readonly FollowupSession<M>[],
  turns: number,
  message: () => M,
  afterTurn?: (session: number, turn: number) => void,
): Promise<void> => {
  await Promise.all(
    sessions.map(async (session, i) => {
      for (let t = 0; t < turns; t++) {
        session.followup(message());
        await session.whenIdle();
        afterTurn?.(i, t);
      }
    }),
  );
};
