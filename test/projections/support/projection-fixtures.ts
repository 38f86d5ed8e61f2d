import { isKnownEvent, type LogEvent } from '../../../domain/events.js';
import type { EventStore, NewEvent } from '../../../runtime/ports/event-store.js';
import { defineProjection, type IgnoredProjectionEvent, type ProjectionEvent } from '../../../projections/index.js';

/** An order-sensitive digest of everything folded: a duplicate, a gap or a reordering changes it. */
export interface DigestState {
  count: number;
  digest: number;
  byType: Record<string, number>;
  byStream: Record<string, number>;
}

export const digestStep = (state: DigestState, e: ProjectionEvent | IgnoredProjectionEvent): DigestState => {
  state.count++;
  state.digest = (Math.imul(state.digest, 31) + e.event.seq + 7 * e.event.type.length + e.stream.length) | 0;
  state.byType[e.event.type] = (state.byType[e.event.type] ?? 0) + 1;
  state.byStream[e.stream] = (state.byStream[e.stream] ?? 0) + 1;
  return state;
};

export const initialDigest = (): DigestState => ({ count: 0, digest: 17, byType: {}, byStream: {} });

export const digestProjection = (name = 'digest', version = 1) =>
  defineProjection<DigestState>({ name, version, initialState: initialDigest(), evolve: digestStep, evolveIgnored: digestStep });

/** The same fold without the runner. */
export const foldDigest = (events: readonly { stream: string; event: LogEvent }[]): DigestState =>
  events.reduce(
    (s, { stream, event }) =>
      isKnownEvent(event)
        ? digestStep(s, { stream, revision: BigInt(event.seq), position: 0n, event })
        : digestStep(s, { stream, revision: BigInt(event.seq), position: 0n, event }),
    initialDigest(),
  );

export const toNew = (e: LogEvent): NewEvent => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.ignorable ? { ignorable: true as const } : {}) });

export const appendAll = async (store: EventStore, stream: string, events: readonly LogEvent[], chunk = 50): Promise<void> => {
  for (let i = 0; i < events.length; i += chunk) await store.append(stream, events.slice(i, i + chunk).map(toNew), 'any');
};
