import { startProjectionWorker, type AnyProjection, type ProjectionStore } from '../../projections/index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { oneLine, UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { workerId } from './projection-worker-cli.js';

/** What {@link rebuildProjection} did. */
export interface RebuildOutcome {
  /** The version live before (null: none was). */
  readonly previous: number | null;
  /** The version built and swapped in. */
  readonly version: number;
}

/** Options of {@link rebuildProjection}. */
export interface RebuildOptions {
  readonly store: EventStore;
  readonly projections: ProjectionStore<unknown>;
  readonly partitions: number;
  readonly leaseMs?: number;
  /** Where the progress bar goes (stderr, only on a TTY). */
  readonly io: CliIo;
}

const BAR = 30;

/**
 * `steerlog projections rebuild <module>`: builds the module's version beside the live one (its own checkpoints,
 * documents and tables: nothing of the live version is touched), following the store until it caught up with the
 * head, then swaps it in (`ProjectionStore.swap`: PostgreSQL replaces the live views in one transaction) and stops,
 * committing and releasing its leases. The previous version is kept (its workers may still run) until
 * `steerlog projections drop`. Refused when the module's version is already the live one. On a TTY, a progress bar:
 * the new version's checkpoint against the live version's (the head, while its workers run).
 */
export const rebuildProjection = async (projection: AnyProjection<unknown>, options: RebuildOptions): Promise<RebuildOutcome> => {
  const { projections } = options;
  const previous = await projections.liveVersion(projection.name);
  const rows = await projections.status(projection.name);
  const liveVersion = previous ?? (rows.length > 0 ? Math.max(...rows.map((r) => r.key.version)) : null);
  if (liveVersion === projection.version) {
    throw new UsageError(`projection "${projection.name}"@${projection.version} is the live version: bump the module's version to rebuild it beside the live one`);
  }
  if (liveVersion !== null && liveVersion > projection.version) {
    throw new UsageError(`projection "${projection.name}": the live version is ${liveVersion}, newer than the module's ${projection.version}`);
  }
  const target = rows.filter((r) => r.key.version === liveVersion).reduce<bigint | null>((max, r) => (r.position !== null && (max === null || r.position > max) ? r.position : max), null);
  const stderr = options.io.stderr as CliIo['stderr'] & { readonly isTTY?: boolean };
  const tty = stderr.isTTY === true;
  const positions = new Map<number, bigint>();
  let drawnAt = 0;
  let drawn = false;
  const draw = (): void => {
    const now = Date.now();
    if (!tty || now - drawnAt < 200) return;
    drawnAt = now;
    drawn = true;
    const at = positions.size < options.partitions ? null : [...positions.values()].reduce((a, b) => (a < b ? a : b));
    const label = `rebuilding ${projection.name}@${projection.version}`;
    if (target === null || target <= 0n) {
      stderr.write(`\r${label}: position ${at ?? '-'}`);
      return;
    }
    const share = at === null ? 0 : Math.min(1, Number(at) / Number(target));
    const filled = Math.round(share * BAR);
    stderr.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  position ${at ?? '-'} / ${target}`);
  };
  const worker = startProjectionWorker(projection, {
    store: options.store,
    projections,
    owner: workerId(),
    partitions: options.partitions,
    follow: true,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    onCommit: (partition, position) => {
      positions.set(partition, position);
      draw();
    },
  });
  try {
    await Promise.race([worker.caughtUp, worker.done]);
    await worker.caughtUp; // rejects when the worker ended first (a failed event: nothing is swapped)
    await projections.swap(projection.name, projection.version);
  } catch (e) {
    await worker.stop();
    throw new Error(`rebuild of ${projection.name}@${projection.version} failed, nothing swapped: ${oneLine(e)}`);
  } finally {
    if (drawn) stderr.write('\r\u001b[2K');
  }
  await worker.stop();
  await worker.done;
  return { previous: liveVersion, version: projection.version };
};
