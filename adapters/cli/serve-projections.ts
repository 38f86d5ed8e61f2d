import {
  isTableProjection,
  parseFailurePolicy,
  isProjectionSupersededError,
  startProjectionWorker,
  stopWhenSuperseded,
  type AnyProjection,
  type FailurePolicy,
  type ProjectionWorker,
} from '../../projections/index.js';
import { projectionPartitionJson, projectionStatus, type ProjectionPartitionJson } from '../../audit/projection-status.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import { observeProjectionStore } from '../../projections/worker/observed-projection-store.js';
import { logAt, type Logger } from '../../runtime/logger.js';
import type { ProjectionStatusSource } from '../http/projection-routes.js';
import { oneLine, UsageError } from './cli-failure.js';
import { loadProjectionModule, positiveIntOption } from './projection-module.js';
import { openProjectionStore, workerId, type OpenedProjectionStore } from './projection-worker-cli.js';

/** Options of {@link startServeProjections} (`steerlog serve --projection …`). */
export interface ServeProjectionsOptions {
  /** The projection modules (each one's default export a projection, as `steerlog project` takes). */
  readonly modules: readonly string[];
  /** The host's own store: the workers read it in the host process (live appends reach them without polling). */
  readonly store: EventStore;
  /** The host's store spec: the default checkpoints follow it (as `steerlog project --follow`). */
  readonly storeSpec: string;
  /** `--projection-checkpoints`: where the checkpoints are kept. @defaultValue as `steerlog project --follow` */
  readonly checkpoints?: string;
  /** `--projection-partitions`. @defaultValue '1' */
  readonly partitions?: string;
  /** `--projection-failure`. @defaultValue 'stop' */
  readonly failure?: string;
  /** The workers' lease, ms. @defaultValue 10_000 */
  readonly leaseMs?: number;
  readonly logger: Logger;
  /**
   * Told of every projection batch the workers commit (`projection-batch` operations: `db.*` spans with
   * `--otlp`). @defaultValue none: not told
   */
  readonly onOperation?: (operation: StoreOperation) => void;
}

/** One worker the host runs, as `GET /projections` shows it. */
export interface ServedWorkerJson {
  readonly name: string;
  readonly version: number;
  readonly owner: string;
  /**
   * `catching-up` until every partition it holds reached the head once, then `live`; `failed` (see `error`) or
   * `stopped` (with `error` saying why when a rebuild superseded its version: `projection-superseded`).
   */
  readonly state: 'catching-up' | 'live' | 'failed' | 'stopped';
  /** The partitions it holds now. */
  readonly partitions: readonly number[];
  readonly error: string | null;
}

/** The body of the host's `GET /projections`. */
export interface ServedProjectionsJson {
  readonly ok: true;
  /** Where the checkpoints are (no password). */
  readonly checkpoints: string;
  /** The workers this host runs. */
  readonly workers: readonly ServedWorkerJson[];
  /** Every partition the checkpoint store knows (this host's workers and any other's), with its lag. */
  readonly partitions: readonly ProjectionPartitionJson[];
}

/** The projection workers a host runs, and the status it serves. */
export interface ServeProjections extends ProjectionStatusSource {
  status(): Promise<ServedProjectionsJson>;
  /** Stops every worker (each finishes its batch, commits and releases its leases), then closes the checkpoint store. */
  close(): Promise<void>;
}

interface Served {
  readonly projection: AnyProjection<unknown>;
  readonly worker: ProjectionWorker;
  state: ServedWorkerJson['state'];
  error: string | null;
}

/**
 * Starts a projection worker per module inside the host process (the same modules, checkpoints, leases and
 * partitions as `steerlog project <module> --follow`, so hosts and standalone workers share the partitions), and
 * answers `GET /projections`. A worker that fails (failure policy `stop`) is logged and shown `failed`; the host
 * keeps serving.
 */
export const startServeProjections = async (options: ServeProjectionsOptions): Promise<ServeProjections> => {
  const projections = await Promise.all(options.modules.map((m) => loadProjectionModule(m, '--projection')));
  const names = new Set<string>();
  for (const p of projections) {
    if (names.has(p.name)) throw new UsageError(`--projection: two modules define the projection "${p.name}"`);
    names.add(p.name);
  }
  const partitions = positiveIntOption(options.partitions, '--projection-partitions', 1);
  const failure: FailurePolicy | null = parseFailurePolicy(options.failure ?? 'stop');
  if (failure === null) throw new UsageError('--projection-failure is stop, park or retry:<n>[:park|:stop]');
  // an in-memory store keeps nothing across runs: neither do its projections' checkpoints (a temporary directory)
  const durable = !options.storeSpec.startsWith('memory:') || options.checkpoints !== undefined;
  const opened: OpenedProjectionStore = await openProjectionStore(options.checkpoints, options.storeSpec, durable);
  const served: Served[] = [];
  try {
    for (const projection of projections) {
      if (isTableProjection(projection) && !opened.projections.supportsTables) {
        throw new UsageError(`--projection: "${projection.name}" is a table projection: it needs PostgreSQL checkpoints (--projection-checkpoints postgres://…)`);
      }
      const worker = startProjectionWorker(projection, {
        store: options.store,
        projections: options.onOperation ? observeProjectionStore(opened.projections, options.onOperation) : opened.projections,
        owner: workerId(),
        partitions,
        failure,
        follow: true,
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
      });
      const entry: Served = { projection, worker, state: 'catching-up', error: null };
      served.push(entry);
      void worker.caughtUp.then(
        () => {
          if (entry.state === 'catching-up') entry.state = 'live';
          logAt(options.logger, 'info', `projection ${projection.name}@${projection.version} caught up`, { owner: worker.owner });
        },
        () => undefined,
      );
      // superseded by a rebuild's swap: the worker stops (committed, leases released) and says so; the host keeps serving
      stopWhenSuperseded(projection, worker, { projections: opened.projections }).done.then(
        () => {
          if (entry.state !== 'failed') entry.state = 'stopped';
        },
        (e: unknown) => {
          if (isProjectionSupersededError(e)) {
            entry.state = 'stopped';
            entry.error = oneLine(e);
            logAt(options.logger, 'warn', `projection ${projection.name}@${projection.version}: ${entry.error}`, { owner: worker.owner });
            return;
          }
          entry.state = 'failed';
          entry.error = oneLine(e);
          logAt(options.logger, 'error', `projection ${projection.name}@${projection.version} stopped: ${entry.error}`, { owner: worker.owner });
        },
      );
    }
  } catch (e) {
    await Promise.all(served.map((s) => s.worker.stop()));
    await opened.close();
    throw e;
  }
  return {
    status: async () => {
      const rows = await projectionStatus({ store: options.store, projections: opened.projections });
      return {
        ok: true,
        checkpoints: opened.label,
        workers: served.map((s) => ({
          name: s.projection.name,
          version: s.projection.version,
          owner: s.worker.owner,
          state: s.state,
          partitions: s.worker.owned(),
          error: s.error,
        })),
        partitions: rows.map(projectionPartitionJson),
      };
    },
    close: async () => {
      await Promise.all(served.map((s) => s.worker.stop()));
      await opened.close();
    },
  };
};
