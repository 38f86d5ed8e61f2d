/**
 * Example keyed projection: per session, how many messages were steered into a running turn, how many were queued
 * as follow-ups, and how long accepted messages waited for their claim. One document per session (a keyed
 * projection), so a worker writes only the sessions a batch touched, and the sessions spread over partitions.
 *
 * Loadable by `steerlog project <module>` (one-shot, `--follow`, `--partitions <n>`): the module's DEFAULT export
 * is the projection; `report` turns the documents into what the command prints.
 */
import { defineKeyedProjection } from '../../projections/index.js';

/** One session's figures. JSON, like all projection state. */
export interface SteeringState {
  steered: number;
  queued: number;
  claims: number;
  /** Sum and maximum of accept→claim waits, ms. */
  waitMs: number;
  maxWaitMs: number;
  /** Accept times of the messages pending in each list, in list order (a mirror of the inbox, times only). */
  pending: { 'next-turn': number[]; 'next-step': number[] };
}

// #region keyed-projection
const steeringPerSession = defineKeyedProjection<SteeringState>({
  name: 'steering-per-session',
  version: 1,
  initialState: { steered: 0, queued: 0, claims: 0, waitMs: 0, maxWaitMs: 0, pending: { 'next-turn': [], 'next-step': [] } },
  filter: ({ event }) => event.type === 'agent/inbox/spliced',
  evolve: (state, { event }) => {
    if (event.type !== 'agent/inbox/spliced') return state;
    const splice = event.data;
    if (splice.target === 'next-step') state.steered += splice.inserted.length;
    else state.queued += splice.inserted.length;
    const accepted = splice.inserted.map(() => event.time);
    const removed = state.pending[splice.target].splice(splice.start, splice.removedCount ?? 0, ...accepted);
    if (splice.removedCount !== undefined && splice.outcome === undefined) {
      for (const at of removed) {
        state.claims++;
        state.waitMs += event.time - at;
        state.maxWaitMs = Math.max(state.maxWaitMs, event.time - at);
      }
    }
    return state;
  },
});
// #endregion keyed-projection
export default steeringPerSession;

/** What `steerlog project` prints: per session, the counts and the mean and maximum wait. */
export const report = (sessions: Record<string, SteeringState>): Record<string, { steered: number; queued: number; claims: number; meanWaitMs: number; maxWaitMs: number }> =>
  Object.fromEntries(
    Object.entries(sessions).map(([id, s]) => [
      id,
      { steered: s.steered, queued: s.queued, claims: s.claims, meanWaitMs: s.claims === 0 ? 0 : s.waitMs / s.claims, maxWaitMs: s.maxWaitMs },
    ]),
  );
