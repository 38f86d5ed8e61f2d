/** The Host over HTTP (`steerlog/http`): the Hono app, the node server with its timeouts, bearer tokens. */
export { createHttpApp, DEFAULT_BODY_LIMIT_BYTES, type HttpAppOptions } from './app.js';
export { startHttpServer, checkBind, checkAllowedHosts, checkBodyLimit, HostConfigError, isHostConfigError, type HttpServerOptions, type RunningHttpServer } from './server.js';
export { authenticate, isLoopback, type BearerToken } from './auth.js';
export type { SseOptions } from './sse-stream.js';
export { openPostgresOwnership, type PostgresOwnershipOptions } from '../lease/postgres-ownership.js';
export { createHostObservability, registerObservabilityRoutes, routeOf, HOST_METRICS, READINESS_PROBE_STREAM, type HostObservability, type HostObservabilityOptions, type Readiness, type LoopDelayHistogram } from './observability.js';
