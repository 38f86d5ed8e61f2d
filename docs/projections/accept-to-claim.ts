/**
 * Example projection: time from accept to claim, per message source.
 *
 * - accept = the `agent/inbox/spliced` event that inserted the message into a list (a replace re-accepts it);
 * - claim  = the pure-deletion splice (removedCount, no outcome) that took it for a turn or a step;
 * - a canceled removal (remove/replace/clear) is not a claim: the message leaves without a sample.
 *
 * Loadable by `steerlog project <module>`: the module's DEFAULT export is the projection; the optional named
 * export `report` turns its state into what the command prints.
 */
import { defineProjection, type ProjectionEvent } from '../../projections/index.js';

/** A pending message as this projection remembers it: enough to time its claim. JSON, like all projection state. */
interface Accepted {
  readonly id: string;
  readonly sourceKind: string;
  readonly acceptedAt: number;
}

interface SessionLists {
  /** A fork's inherited seed length: splices at seq 1..seedLength belong to the parent, not to this inbox. */
  seedLength: number;
  'next-turn': Accepted[];
  'next-step': Accepted[];
}

export interface AcceptToClaimState {
  /** Per stream, a mirror of both inbox lists (ids, source kinds, accept times). */
  sessions: Record<string, SessionLists>;
  /** Per source kind, every accept→claim duration in milliseconds, in claim order. */
  samples: Record<string, number[]>;
}

const RELEVANT: ReadonlySet<string> = new Set(['session/created', 'session/end-seed', 'agent/inbox/spliced']);

const emptyLists = (seedLength: number): SessionLists => ({ seedLength, 'next-turn': [], 'next-step': [] });

const evolve = (state: AcceptToClaimState, { stream, event }: ProjectionEvent): AcceptToClaimState => {
  switch (event.type) {
    case 'session/created':
      if (event.seq === 0) state.sessions[stream] = emptyLists(event.data.seedLength ?? 0);
      return state;
    case 'session/end-seed': {
      // A fork's inbox starts empty after its seed.
      const session = state.sessions[stream];
      if (session) state.sessions[stream] = emptyLists(session.seedLength);
      return state;
    }
    case 'agent/inbox/spliced': {
      const session = (state.sessions[stream] ??= emptyLists(0));
      if (event.seq >= 1 && event.seq <= session.seedLength) return state; // inherited history
      const splice = event.data; // narrowed by the case: InboxSplicedData
      const accepted = splice.inserted.map((m) => ({ id: m.id, sourceKind: m.source.kind, acceptedAt: event.time }));
      // #region splice
      // The log's coordinates are exact (the domain validated them when they were written).
      const removed = session[splice.target].splice(splice.start, splice.removedCount ?? 0, ...accepted);
      const isClaim = splice.removedCount !== undefined && splice.outcome === undefined;
      if (isClaim) {
        for (const m of removed) (state.samples[m.sourceKind] ??= []).push(event.time - m.acceptedAt);
      }
      // #endregion splice
      return state;
    }
    default:
      return state;
  }
};

const acceptToClaim = defineProjection<AcceptToClaimState>({
  name: 'accept-to-claim',
  version: 1,
  initialState: { sessions: {}, samples: {} },
  filter: ({ event }) => RELEVANT.has(event.type),
  evolve,
});
export default acceptToClaim;

export interface SourceLatency {
  readonly count: number;
  readonly meanMs: number;
  /** Nearest-rank median. */
  readonly p50Ms: number;
  readonly maxMs: number;
}

/** The figures per source kind, sorted by kind. */
export const report = (state: AcceptToClaimState): Record<string, SourceLatency> => {
  const out: Record<string, SourceLatency> = {};
  for (const kind of Object.keys(state.samples).sort()) {
    const sorted = [...state.samples[kind]!].sort((a, b) => a - b);
    if (sorted.length === 0) continue;
    out[kind] = {
      count: sorted.length,
      meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      p50Ms: sorted[Math.ceil(sorted.length / 2) - 1]!,
      maxMs: sorted.at(-1)!,
    };
  }
  return out;
};
