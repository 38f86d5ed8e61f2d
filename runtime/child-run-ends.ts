import type { EventId } from '../domain/brand.js';
import { abnormalRunEnd, openRuns, settledRunEnd } from '../domain/children/child-runs.js';
import type { SubagentEndData, SubagentStartData } from '../domain/children/subagent-events.js';
import type { LogEvent } from '../domain/events.js';
import { isRuntimeError } from './errors.js';
import { loadSession, repairClosers } from './load-session.js';
import type { Logger } from './logger.js';
import type { EventStore } from './ports/event-store.js';
import type { KeyStore } from './ports/key-store.js';

/**
 * The ends of children's runs that a parent's log misses when it is opened again. Invariant: a `subagent/start`
 * never stays without its `subagent/end` once the child is no longer running. A child that is live in this runtime
 * still runs (its settlement records the end in the parent, live by then); any other child has settled, or died with
 * its host, and its run is closed from its own log here: the epoch from the start's `childSeq` on, with the closers
 * a crash repair would append (an open turn ends `interrupted`), so a child that died mid-turn reads `stopped`.
 * Reading the child's log never writes it.
 */

/** The child's log, read for its run's end: its events plus, if its tail turn is open, the closers a resume would append. */
const childEventsOf = async (store: EventStore, keys: KeyStore | null, childSessionId: string): Promise<readonly LogEvent[]> => {
  const { events, state } = await loadSession(store, childSessionId, keys);
  const closers = repairClosers(events, state);
  if (closers.length === 0) return events;
  const time = events.at(-1)!.time;
  // folded only, never stored: they need a seq (the fold's `end.seq`) and the envelope's other fields
  const repaired = closers.map((c, i) => ({ seq: events.length + i, id: `repair-${i}` as EventId, time, type: c.type, data: c.data }) as LogEvent);
  return [...events, ...repaired];
};

/**
 * The end of one settled run from its child's log, or null when the log could not be read for a reason that may
 * pass (the store is unreachable): the run then stays open and the next opening tries again. A child log that is
 * missing or corrupt gives `abnormal`: nothing else will ever be known about that run.
 */
const endOf = async (store: EventStore, keys: KeyStore | null, start: SubagentStartData, logger: Logger): Promise<SubagentEndData | null> => {
  try {
    return settledRunEnd(start, await childEventsOf(store, keys, start.childSessionId));
  } catch (e) {
    if (isRuntimeError(e) && (e.code === 'session-not-found' || e.code === 'session-corrupt')) return abnormalRunEnd(start);
    logger.warn(`run ${start.runId} of child ${start.childSessionId}: its log could not be read; the run stays open`, e);
    return null;
  }
};

/**
 * The `subagent/end`s to append to a parent's log as it is opened: one per open run whose child is not live in this
 * runtime (`isLive`), derived from the child's log. A child that goes from live to not live while these are read
 * records its own end through `Runtime.closeChildRun`, which waits for the opening to finish.
 */
export const missedRunEnds = async (
  store: EventStore,
  keys: KeyStore | null,
  parentEvents: readonly LogEvent[],
  isLive: (sessionId: string) => boolean,
  logger: Logger,
): Promise<SubagentEndData[]> => {
  const settled = openRuns(parentEvents).filter((r) => !isLive(r.childSessionId));
  const ends = await Promise.all(settled.map((r) => endOf(store, keys, r, logger)));
  return ends.filter((e): e is SubagentEndData => e !== null);
};
