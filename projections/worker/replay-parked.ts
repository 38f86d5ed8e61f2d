import * as E from 'fp-ts/lib/Either.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { Projection, ProjectionEvent } from '../custom/define-projection.js';
import { applyProjectionEvent } from '../custom/apply-event.js';
import { toLogEvent } from '../sources/from-store.js';
import { isKeyedProjection, isTableProjection, type AnyProjection } from './kinds.js';
import type { ParkedEvent, ProjectionStore } from './projection-store.js';
import { isKnownEvent } from '../../domain/events.js';

/** Options of {@link replayParked}. */
export interface ReplayParkedOptions<Tx> {
  readonly store: EventStore;
  readonly projections: ProjectionStore<Tx>;
  /** The id it takes the partitions' leases under. */
  readonly owner: string;
  /** The projection version's partition count. @defaultValue 1 */
  readonly partitions?: number;
  /** How long it holds each lease, ms. @defaultValue 30_000 */
  readonly leaseMs?: number;
}

/** What {@link replayParked} did: the events applied now, and those that failed again (still parked). */
export interface ReplayParkedReport {
  readonly replayed: readonly ParkedEvent[];
  readonly stillParked: readonly ParkedEvent[];
}

/** A partition with parked events is held by a live worker: replaying them there would race it. */
export class ParkedPartitionBusyError extends Error {
  readonly code = 'parked-partition-busy' as const;
  constructor(readonly projection: string, readonly version: number, readonly partition: number) {
    super(`projection "${projection}"@${version} partition ${partition} is held by a live worker: stop it (or wait for its lease to run out) to replay its parked events`);
    this.name = 'ParkedPartitionBusyError';
  }
}

const oneLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').slice(0, 2000);

/**
 * Re-applies a projection's parked events, in position order, partition by partition: it takes the partition's lease
 * (refusing, with `ParkedPartitionBusyError`, a partition a live worker holds), reads each parked event from the
 * store, applies it (a fold: to its stream's document; a table projection: in the commit's transaction, each in its
 * own savepoint), and commits the applied ones out of the dead-letter list together with their effects. An event that
 * fails again stays parked. The checkpoint does not move. A parked event is applied after the events that followed
 * it in its stream (the order the park broke is not restored).
 */
export const replayParked = async <Tx>(projection: AnyProjection<Tx>, options: ReplayParkedOptions<Tx>): Promise<ReplayParkedReport> => {
  const { projections, store } = options;
  const partitions = Math.max(1, options.partitions ?? 1);
  const parked = await projections.parked(projection.name, projection.version);
  const replayed: ParkedEvent[] = [];
  const stillParked: ParkedEvent[] = [];
  for (let partition = 0; partition < partitions; partition++) {
    const mine = parked.filter((p) => p.partition === partition);
    if (mine.length === 0) continue;
    const key = { name: projection.name, version: projection.version, partition, partitions };
    const lease = await projections.acquire(key, options.owner, options.leaseMs ?? 30_000);
    if (!lease) throw new ParkedPartitionBusyError(projection.name, projection.version, partition);
    try {
      const snapshot = await projections.load(lease);
      const events: { parked: ParkedEvent; event: ProjectionEvent | null; error: unknown }[] = [];
      for (const p of mine) {
        let found: ProjectionEvent | null = null;
        let error: unknown = new Error(`stream "${p.stream}" has no revision ${p.revision}`);
        for await (const recorded of store.read(p.stream, { from: p.revision, maxCount: 1 })) {
          const parsed = toLogEvent(recorded);
          if (E.isLeft(parsed)) error = parsed.left;
          else found = { stream: recorded.stream, revision: recorded.revision, position: recorded.position, event: parsed.right } as ProjectionEvent;
        }
        events.push({ parked: p, event: found, error: found ? null : error });
      }
      const unparked: bigint[] = [];
      const done: ParkedEvent[] = [];
      const failedAgain = (p: ParkedEvent, e: unknown): void => void stillParked.push({ ...p, error: oneLine(e) });
      if (isTableProjection(projection)) {
        const tables = await projections.migrate(projection.name, projection.version, projection.tables);
        const again: ParkedEvent[] = [];
        await projections.commit(lease, {
          position: snapshot.position ?? 0n,
          documents: new Map(),
          parked: [],
          unparked, // read by the store after `write` filled it
          applied: 0,
          write: async (tx, isolate) => {
            for (const { parked: p, event, error } of events) {
              if (!event) {
                again.push({ ...p, error: oneLine(error) });
                continue;
              }
              const failed = await isolate(() => projection.handle([event], tx, tables));
              if (failed === null) {
                unparked.push(p.position);
                done.push(p);
              } else again.push({ ...p, error: oneLine(failed) });
            }
          },
        });
        replayed.push(...done);
        stillParked.push(...again);
      } else {
        const fold = projection as Projection<unknown>;
        const docs = new Map<string, string | null>();
        const states = new Map<string, unknown>();
        for (const { parked: p, event, error } of events) {
          if (!event) {
            failedAgain(p, error);
            continue;
          }
          const key = isKeyedProjection(projection) ? p.stream : '';
          const text = docs.get(key) ?? snapshot.documents.get(key);
          const before = states.get(key) ?? (text ? JSON.parse(text) : JSON.parse(JSON.stringify(fold.initialState)));
          const copy = JSON.parse(JSON.stringify(before)) as unknown;
          try {
            const next = isKnownEvent(event.event) || fold.evolveIgnored ? applyProjectionEvent(fold, copy, event, event.event) : copy;
            states.set(key, next);
            docs.set(key, JSON.stringify(next));
            unparked.push(p.position);
            replayed.push(p);
          } catch (e) {
            failedAgain(p, e);
          }
        }
        await projections.commit(lease, { position: snapshot.position ?? 0n, documents: docs, parked: [], unparked, applied: unparked.length });
      }
    } finally {
      await projections.release(lease);
    }
  }
  return { replayed, stillParked };
};
