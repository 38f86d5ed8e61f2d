import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';
import { partitionOf, type PartitionStatus, type ProjectionStore } from '../projections/index.js';

/** One partition of one projection version, with its lag behind the store's head. */
export interface ProjectionPartitionReport extends PartitionStatus {
  /** Events of this partition's streams after its checkpoint. */
  readonly lagEvents: number;
  /** Seconds since the oldest of those events was written (0 when there is none). */
  readonly lagSeconds: number;
  /** `running` (a live lease), `idle` (no live lease, nothing to apply), `behind` (no live lease, events to apply). */
  readonly state: 'running' | 'idle' | 'behind';
  /** This version is the live one: the one `rebuild` swapped in last (none swapped: the highest version). */
  readonly live: boolean;
}

/** Options of {@link projectionStatus}. */
export interface ProjectionStatusOptions {
  readonly store: EventStore;
  readonly projections: ProjectionStore<unknown>;
  /** Only this projection. @defaultValue every one */
  readonly name?: string;
  /** The clock. @defaultValue Date.now */
  readonly now?: () => number;
}

/**
 * Every partition of every projection version in `projections` (owner, epoch, position, applied, parked) with its lag:
 * the events after its checkpoint that belong to its streams, counted by reading the store after the oldest
 * checkpoint of the version (O(lag)), and the age of the oldest of them.
 */
export const projectionStatus = async (options: ProjectionStatusOptions): Promise<ProjectionPartitionReport[]> => {
  const rows = await options.projections.status(options.name);
  const now = (options.now ?? Date.now)();
  const out: ProjectionPartitionReport[] = [];
  const groups = new Map<string, PartitionStatus[]>();
  for (const row of rows) {
    const k = `${row.key.name}@${row.key.version}`;
    groups.set(k, [...(groups.get(k) ?? []), row]);
  }
  const liveOf = new Map<string, number>();
  for (const row of rows) {
    if (!liveOf.has(row.key.name)) liveOf.set(row.key.name, (await options.projections.liveVersion(row.key.name)) ?? -1);
  }
  for (const row of rows) if (liveOf.get(row.key.name) === -1 || !rows.some((r) => r.key.name === row.key.name && r.key.version === liveOf.get(row.key.name))) {
    // none swapped in (or the swapped one is gone): the highest version counts as live
    liveOf.set(row.key.name, Math.max(...rows.filter((r) => r.key.name === row.key.name).map((r) => r.key.version)));
  }
  for (const group of groups.values()) {
    const n = group[0]!.key.partitions;
    const lag = new Map<number, { events: number; oldest: number | null }>();
    let min: bigint | null | undefined;
    for (const row of group) if (min === undefined || row.position === null || (min !== null && row.position < min)) min = row.position;
    for await (const page of readAllPages(options.store, min === null || min === undefined ? {} : { after: min })) {
      for (const event of page) {
        const partition = partitionOf(event.stream, n);
        const row = group.find((r) => r.key.partition === partition);
        if (!row || (row.position !== null && event.position <= row.position)) continue;
        const l = lag.get(partition) ?? { events: 0, oldest: null };
        l.events++;
        l.oldest ??= event.time;
        lag.set(partition, l);
      }
    }
    for (const row of group) {
      const l = lag.get(row.key.partition);
      const lagEvents = l?.events ?? 0;
      out.push({
        ...row,
        lagEvents,
        lagSeconds: l?.oldest != null ? Math.max(0, (now - l.oldest) / 1000) : 0,
        state: row.owner !== null ? 'running' : lagEvents > 0 ? 'behind' : 'idle',
        live: liveOf.get(row.key.name) === row.key.version,
      });
    }
  }
  return out;
};

/** A partition's report as JSON (`steerlog projections status --json`, the host's `GET /projections`). */
export interface ProjectionPartitionJson {
  readonly name: string;
  readonly version: number;
  readonly partition: number;
  readonly partitions: number;
  readonly state: ProjectionPartitionReport['state'];
  /** This version is the live one. */
  readonly live: boolean;
  readonly owner: string | null;
  readonly epoch: number;
  /** The committed checkpoint, a decimal string (null: none yet). */
  readonly position: string | null;
  readonly committedAt: string | null;
  readonly lagEvents: number;
  readonly lagSeconds: number;
  /** Events applied so far, a decimal string. */
  readonly applied: string;
  readonly parked: number;
}

/** The JSON form of a partition's report: positions and counts as decimal strings, dates as ISO strings. */
export const projectionPartitionJson = (r: ProjectionPartitionReport): ProjectionPartitionJson => ({
  name: r.key.name,
  version: r.key.version,
  partition: r.key.partition,
  partitions: r.key.partitions,
  state: r.state,
  live: r.live,
  owner: r.owner,
  epoch: r.epoch,
  position: r.position?.toString() ?? null,
  committedAt: r.committedAt?.toISOString() ?? null,
  lagEvents: r.lagEvents,
  lagSeconds: r.lagSeconds,
  applied: r.applied.toString(),
  parked: r.parked,
});
