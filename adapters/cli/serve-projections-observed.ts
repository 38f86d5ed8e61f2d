import type { HostObservability } from '../http/observability.js';
import { createProjectionMetrics } from '../http/projection-metrics.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { startServeProjections, type ServeProjections, type ServeProjectionsOptions } from './serve-projections.js';

/**
 * `steerlog serve --projection` with the host's observability: starts the projection workers (see
 * {@link startServeProjections}) so that each batch they commit is counted in the host's metrics
 * (`steerlog_projection_batch_*`) and, with live telemetry, exported as a `projection-batch {projection}` `db.*`
 * span; and lists every partition's lag on `/metrics` (`steerlog_projection_lag_events` and `_seconds`), read from
 * the status `GET /projections` answers at each scrape.
 */
export const startObservedServeProjections = async (
  options: Omit<ServeProjectionsOptions, 'onOperation'>,
  observability: HostObservability,
  telemetry?: SessionTelemetry,
): Promise<ServeProjections> => {
  const metrics = createProjectionMetrics(observability.registry);
  const storeOperation = telemetry?.storeOperation?.bind(telemetry);
  const projections = await startServeProjections({
    ...options,
    onOperation: (op) => {
      metrics.onOperation(op);
      storeOperation?.(op);
    },
  });
  observability.addCollector(() => metrics.refresh(projections));
  return projections;
};
