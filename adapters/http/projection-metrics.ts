import { COUNT_BUCKETS, type MetricsRegistry } from '../../projections/telemetry/metrics.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * The projection metrics of a host that runs projection workers (`steerlog serve --projection`): the lag of every
 * projection partition its checkpoint store knows, in events and in seconds — the figures `GET /projections` reports,
 * read from the same status when `/metrics` is scraped — and the duration and size of each batch the host's workers
 * commit.
 */

/** The metric names (see docs/observability.md). */
export const PROJECTION_METRICS = {
  lagEvents: 'steerlog_projection_lag_events',
  lagSeconds: 'steerlog_projection_lag_seconds',
  batchDuration: 'steerlog_projection_batch_duration_seconds',
  batchEvents: 'steerlog_projection_batch_events',
} as const;

/** One partition's lag, as `GET /projections` lists it. */
export interface ProjectionLagRow {
  readonly name: string;
  readonly version: number;
  readonly partition: number;
  readonly lagEvents: number;
  readonly lagSeconds: number;
}

/** Where the lag comes from: the status `GET /projections` answers. */
export interface ProjectionLagSource {
  status(): Promise<{ readonly partitions: readonly ProjectionLagRow[] }>;
}

/** The projection metrics registered in a host's registry. */
export interface ProjectionMetrics {
  /** Counts one projection batch (a `projection-batch` store operation; other operations are ignored). */
  readonly onOperation: (operation: StoreOperation) => void;
  /**
   * Reads the lag from `source` (before `/metrics` renders): the lag gauges list what it answered. A status that
   * fails lists no lag (an old figure would claim a lag nobody measured).
   */
  readonly refresh: (source: ProjectionLagSource) => Promise<void>;
}

const labelsOf = (r: { readonly name: string; readonly version: number; readonly partition: number }): Record<string, string> => ({
  projection: r.name,
  version: String(r.version),
  partition: String(r.partition),
});

/** Registers the projection metrics in `registry` (listed from now on, empty until a refresh or a batch). */
export const createProjectionMetrics = (registry: MetricsRegistry): ProjectionMetrics => {
  let rows: readonly ProjectionLagRow[] = [];
  registry.gauge(PROJECTION_METRICS.lagEvents, 'Events of a projection partition\'s streams after its checkpoint, by projection, version and partition', () =>
    rows.map((r) => ({ labels: labelsOf(r), value: r.lagEvents })),
  );
  registry.gauge(PROJECTION_METRICS.lagSeconds, 'Age of the oldest event a projection partition has not applied (0: none), by projection, version and partition', () =>
    rows.map((r) => ({ labels: labelsOf(r), value: r.lagSeconds })),
  );
  registry.histogram(PROJECTION_METRICS.batchDuration, 'Time a projection batch commit takes (this host\'s workers), by projection and outcome');
  registry.histogram(PROJECTION_METRICS.batchEvents, 'Events applied by one projection batch (this host\'s workers), by projection', COUNT_BUCKETS);
  return {
    onOperation: (op) => {
      if (op.operation !== 'projection-batch') return;
      registry.observe(PROJECTION_METRICS.batchDuration, '', { projection: op.collection, outcome: op.error === undefined ? 'ok' : 'failed' }, Math.max(0, op.endTime - op.startTime) / 1000);
      registry.observe(PROJECTION_METRICS.batchEvents, '', { projection: op.collection }, op.events, COUNT_BUCKETS);
    },
    refresh: async (source) => {
      try {
        rows = (await source.status()).partitions;
      } catch {
        rows = [];
      }
    },
  };
};
