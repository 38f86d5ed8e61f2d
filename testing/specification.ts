import { AssertionError, deepStrictEqual } from 'node:assert/strict';
import * as E from 'fp-ts/lib/Either.js';
import type { InboxError } from '../domain/errors.js';
import type { InboxSplicedData, LogEvent } from '../domain/events.js';
import { decideInbox, type InboxCommand } from '../domain/inbox/inbox-decide.js';
import { evolveInbox } from '../domain/inbox/inbox-evolve.js';
import { initialInboxState, type InboxState } from '../domain/inbox/inbox-state.js';
import { findNonJsonPath } from '../domain/json.js';
import { applyProjectionEvent } from '../projections/custom/apply-event.js';
import type { Projection } from '../projections/custom/define-projection.js';

/**
 * Given/when/then checks for deciders and custom projections. They work in any test runner: a failed expectation
 * throws `node:assert`'s `AssertionError` (with `actual` and `expected`, which runners show as a diff).
 */

/** A decider in steerlog's shape: a pure `decide` that returns events or a refusal, a pure `evolve`, a start state. */
export interface Decider<Command, Event, State, Refusal> {
  /** Decides the events a command produces in a state, or refuses it. */
  readonly decide: (command: Command, state: State) => E.Either<Refusal, readonly Event[]>;
  /** Applies one event. */
  readonly evolve: (state: State, event: Event) => State;
  /** The state before any event. */
  readonly initialState: () => State;
}

/** The outcome of `when`: assert it with `then` or `thenRefuses`. */
export interface DeciderOutcome<Event, State, Refusal> {
  /** What `decide` returned, for checks the helpers do not cover. */
  readonly outcome: E.Either<Refusal, readonly Event[]>;
  /** Asserts the command was accepted with exactly these events (deep equality); returns the state after them. */
  then(expected: readonly Event[]): State;
  /**
   * Asserts the command was refused; with a string, that the refusal's `code` is that string; with a function, that
   * it returns true for the refusal. Returns the refusal.
   */
  thenRefuses(expected?: string | ((refusal: Refusal) => boolean)): Refusal;
}

/** The state the `given` events produced, and the command to decide in it. */
export interface DeciderGiven<Command, Event, State, Refusal> {
  /** The state after the given events. */
  readonly state: State;
  /** Decides `command` in that state. */
  when(command: Command): DeciderOutcome<Event, State, Refusal>;
}

/** A specification of one decider: `given(events).when(command).then(events)` or `.thenRefuses(code)`. */
export interface DeciderSpecification<Command, Event, State, Refusal> {
  /** Starts from the initial state with these events applied (none by default). */
  given(events?: readonly Event[]): DeciderGiven<Command, Event, State, Refusal>;
}

const codeOf = (x: unknown): unknown => (typeof x === 'object' && x !== null ? (x as { code?: unknown }).code : undefined);

/** A given/when/then specification of any decider. */
export const deciderSpecification = <Command, Event, State, Refusal>(
  decider: Decider<Command, Event, State, Refusal>,
): DeciderSpecification<Command, Event, State, Refusal> => ({
  given: (events = []) => {
    const state = events.reduce(decider.evolve, decider.initialState());
    return {
      state,
      when: (command) => {
        const outcome = decider.decide(command, state);
        return {
          outcome,
          then: (expected) => {
            if (E.isLeft(outcome)) {
              throw new AssertionError({ message: `expected events, but the command was refused: ${String(outcome.left)}`, actual: outcome.left, expected });
            }
            deepStrictEqual([...outcome.right], [...expected], 'the decided events differ from the expected ones');
            return outcome.right.reduce(decider.evolve, state);
          },
          thenRefuses: (expected) => {
            if (E.isRight(outcome)) {
              throw new AssertionError({ message: 'expected a refusal, but the command was accepted', actual: outcome.right, expected: 'a refusal' });
            }
            const refusal = outcome.left;
            if (typeof expected === 'string' && codeOf(refusal) !== expected) {
              throw new AssertionError({ message: `expected a refusal with code "${expected}", got "${String(codeOf(refusal))}"`, actual: codeOf(refusal), expected });
            }
            if (typeof expected === 'function' && !expected(refusal)) {
              throw new AssertionError({ message: 'the refusal does not satisfy the predicate', actual: refusal, expected: String(expected) });
            }
            return refusal;
          },
        };
      },
    };
  },
});

/**
 * The Inbox decider's specification: events are the `agent/inbox/spliced` data (`InboxSplicedData`), commands are
 * `InboxCommand`s, refusals are the typed `InboxError`s (`thenRefuses('duplicate-pending-id')`).
 */
export const inboxSpecification = (): DeciderSpecification<InboxCommand, InboxSplicedData, InboxState, InboxError> =>
  deciderSpecification<InboxCommand, InboxSplicedData, InboxState, InboxError>({
    decide: (command, state) => E.map((decision: { readonly events: readonly InboxSplicedData[] }) => decision.events)(decideInbox(command, state)),
    evolve: evolveInbox,
    initialState: initialInboxState,
  });

/** An event of a given stream, for projections over several streams. */
export interface StreamEvent {
  /** The stream it is stored in. */
  readonly stream: string;
  /** The event (its `seq` is its revision in the stream). */
  readonly event: LogEvent;
}

/**
 * Events for a projection specification: events of one stream, stream events, or a log builder (its `events`, in
 * the stream named by its `sessionId`).
 */
export type SpecificationEvents = readonly (LogEvent | StreamEvent)[] | { readonly events: readonly LogEvent[]; readonly sessionId?: string };

/** The state after the `given` (and `when`) events: assert it with `then`. */
export interface ProjectionOutcome<S> {
  /** The state the projection reached. */
  readonly state: S;
  /** Asserts the state deep-equals `expected`. */
  then(expected: S): void;
}

/** The state after the history: fold more events with `when`, or assert it with `then`. */
export interface ProjectionGiven<S> extends ProjectionOutcome<S> {
  /**
   * Folds more events into the state *restored from its JSON checkpoint*, as a restarted runner would: a projection
   * whose state does not survive JSON (or whose evolve depends on something outside its state) fails here.
   */
  when(events: SpecificationEvents): ProjectionOutcome<S>;
}

/** Options of {@link projectionSpecification}. */
export interface ProjectionSpecificationOptions {
  /**
   * The stream of events given without one. A log builder's events are in its own `sessionId`'s stream: naming
   * another stream here for them throws. @defaultValue 'session-1'
   */
  readonly stream?: string;
}

/** A specification of one custom projection: `given(history).when(newEvents).then(state)`. */
export interface ProjectionSpecification<S> {
  /** Folds the history from the projection's initial state. */
  given(events: SpecificationEvents): ProjectionGiven<S>;
}

const jsonCopy = <S>(projection: Projection<S>, state: S, when: string): S => {
  const bad = findNonJsonPath(state);
  if (bad !== null) {
    throw new AssertionError({ message: `projection "${projection.name}": the state ${when} is not lossless JSON at ${bad}`, actual: state, expected: 'lossless JSON' });
  }
  return JSON.parse(JSON.stringify(state)) as S;
};

/**
 * A given/when/then specification of a custom projection. Events are applied exactly as `runProjection` applies
 * them (`filter`, `evolve`, `evolveIgnored`); each event's revision is its `seq` and its global position its index
 * in the specification. The state must stay lossless JSON: it is checked after `given` and after `when`.
 */
export const projectionSpecification = <S>(projection: Projection<S>, options: ProjectionSpecificationOptions = {}): ProjectionSpecification<S> => {
  const defaultStream = options.stream ?? 'session-1';
  let position = 0n;
  /** The stream of the events given without one: a builder's own session id (never silently another stream). */
  const streamOf = (events: SpecificationEvents): string => {
    const own = 'events' in events ? events.sessionId : undefined;
    if (own === undefined) return defaultStream;
    if (options.stream !== undefined && options.stream !== own) {
      throw new AssertionError({ message: `projection "${projection.name}": the log builder's events are in stream ${own}, not ${options.stream} (options.stream)`, actual: own, expected: options.stream });
    }
    return own;
  };
  const fold = (state: S, events: SpecificationEvents): S => {
    const list = 'events' in events ? events.events : events;
    const given = streamOf(events);
    return list.reduce((s: S, item: LogEvent | StreamEvent) => {
      const { stream, event } = 'stream' in item && 'event' in item ? item : { stream: given, event: item };
      return applyProjectionEvent(projection, s, { stream, revision: BigInt(event.seq), position: position++ }, event);
    }, state);
  };
  const outcome = (state: S): ProjectionOutcome<S> => ({
    state,
    then: (expected) => deepStrictEqual(state, expected, `projection "${projection.name}": the state differs from the expected one`),
  });
  return {
    given: (events) => {
      position = 0n;
      const state = fold(jsonCopy(projection, projection.initialState, 'initially'), events);
      const checkpointed = jsonCopy(projection, state, 'after given');
      return {
        ...outcome(state),
        when: (more) => outcome(jsonCopy(projection, fold(checkpointed, more), 'after when')),
      };
    },
  };
};
