import type { InboxSplicedData, LogEvent } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import { sameValue } from './event-compare.js';

/**
 * The deployment's own sends during a replay check. An input a hook sent right after the runtime's write went
 * through (a pre-step hook's steer after the turn's first checkpoint) and an input from outside that arrived while
 * that write was still on its way are the same event in the log: the replay re-admits the recorded input while the
 * write is held, and when the deployment's code then sends that same message before anything else is written, the
 * send is the input already re-admitted, not a second one.
 */

/** The inputs the replay re-admitted last, in a row at the end of the log (nothing written since). */
export interface Readmitted {
  /** The `agent/inbox/spliced` events of that row not yet sent again by the deployment's code, oldest first. */
  row: LogEvent[];
}

/** Records the splice `agent` just appended for a re-admission (`event`): the row goes on, or starts again. */
export const noteReadmitted = (readmitted: Readmitted, before: LogEvent | undefined, event: LogEvent | undefined): void => {
  if (event === undefined || event.type !== 'agent/inbox/spliced') return;
  const last = readmitted.row.at(-1);
  readmitted.row = last !== undefined && before !== undefined && last.id === before.id ? [...readmitted.row, event] : [event];
};

/** Does `splice` insert exactly `message`, alone? */
const insertsOnly = (splice: InboxSplicedData, message: unknown): boolean =>
  splice.removedCount === undefined && splice.inserted.length === 1 && sameValue(splice.inserted[0], message);

/**
 * Makes `agent`'s sends of the messages the replay has just re-admitted (in a row at the end of the log, nothing
 * written since) return their ids without a second admission, in the order they were re-admitted (the row's inputs
 * before one sent so came from outside); every other send is the agent's own.
 */
export const absorbResentInputs = (agent: Agent, readmitted: Readmitted): void => {
  const send = agent.send.bind(agent);
  agent.send = (message, target, wake, options) => {
    const last = readmitted.row.at(-1);
    // the row's inputs before the one sent arrived from outside, before the deployment's code sent it
    const k = last !== undefined && agent.events.at(-1)?.id === last.id ? readmitted.row.findIndex((e) => insertsOnly(e.data as InboxSplicedData, message)) : -1;
    if (k >= 0) {
      readmitted.row = readmitted.row.slice(k + 1);
      return message.id;
    }
    return send(message, target, wake, options);
  };
};
