import type { Hono } from 'hono';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { size } from '../../domain/inbox/pending-list.js';
import { COUNT_BUCKETS, createSessionMetrics, MetricsRegistry, type SessionMetrics } from '../../projections/telemetry/metrics.js';
import type { Host } from '../../host/host.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { storeOperationsOf } from '../../runtime/ports/store-operations.js';
import { authenticate, type BearerToken } from './auth.js';

/**
 * The host's own observability: `GET /metrics` (Prometheus text format), `GET /healthz` (the process answers) and
 * `GET /readyz` (the store answers a read and every live session's lease is held here). Like `/api/`, they pass the
 * door checks, and need the bearer token when the host has one: without a token they are answered on loopback names
 * (and `allowedHosts`) only.
 */

/** The metric names the host adds to the session metrics (see docs/observability.md). */
export const HOST_METRICS = {
  requests: 'steerlog_http_requests_total',
  requestDuration: 'steerlog_http_request_duration_seconds',
  sseClients: 'steerlog_sse_clients',
  liveSessions: 'steerlog_live_sessions',
  queueDepth: 'steerlog_inbox_queue_depth',
  appendDuration: 'steerlog_store_append_duration_seconds',
  appendBatch: 'steerlog_store_append_batch_events',
  appendFailures: 'steerlog_store_append_failures_total',
  fsyncDuration: 'steerlog_store_fsync_duration_seconds',
  fsyncBatch: 'steerlog_store_fsync_batch_appends',
  telemetrySpans: 'steerlog_telemetry_spans_total',
  telemetryBacklog: 'steerlog_telemetry_backlog',
  loopDelay: 'steerlog_event_loop_delay_seconds',
} as const;

/** The quantiles of `steerlog_event_loop_delay_seconds` (1: the largest delay). */
const LOOP_DELAY_QUANTILES: readonly number[] = [0.5, 0.99, 0.999, 1];

/** What the host measures, and how to stop measuring. */
export interface HostObservability {
  readonly registry: MetricsRegistry;
  readonly sessions: SessionMetrics;
  /** Counts one answered HTTP request. */
  readonly request: (method: string, route: string, status: number, seconds: number) => void;
  /** Whether the host is ready: the store answers, the leases of its live sessions are held here. */
  readonly readiness: () => Promise<Readiness>;
  /** Stops following the host's sessions and puts the store's `append` back. */
  readonly close: () => void;
  /** Adds work to do before each `/metrics` render (reading figures kept elsewhere, asynchronously). */
  readonly addCollector: (collect: () => Promise<void>) => void;
  /** Runs the collectors (each one's failure contained): `/metrics` awaits it before rendering. */
  readonly collect: () => Promise<void>;
}

/** The body of `GET /readyz`. */
export interface Readiness {
  readonly ready: boolean;
  readonly store: { readonly ok: boolean; readonly error?: string };
  readonly leases: { readonly live: number; readonly held: number; readonly error?: string };
}

/** Options of {@link createHostObservability}. */
export interface HostObservabilityOptions {
  /** How long the readiness probe waits for the store. @defaultValue 2000 */
  readonly probeTimeoutMs?: number;
  /**
   * The host holds its sessions by lease in a store shared with other hosts (PostgreSQL leases): a session is held
   * only when the lease store names this host. Without, a host alone holds every session it runs.
   * @defaultValue false
   */
  readonly sharedLeases?: boolean;
  /** The clock of the append timings (ms). @defaultValue performance.now */
  readonly now?: () => number;
  /**
   * The live telemetry exporter's counts (`OtelTelemetry.stats`), listed as `steerlog_telemetry_spans_total` by
   * outcome (exported, dropped, failed), and what waits as `steerlog_telemetry_backlog` (spans queued; events and
   * store operations the export worker has not read yet). @defaultValue none: not listed
   */
  readonly telemetryStats?: () => { readonly exported: number; readonly dropped: number; readonly failed: number; readonly queued?: number; readonly unread?: number };
  /**
   * The event-loop delay histogram listed as `steerlog_event_loop_delay_seconds` (read and reset at each scrape,
   * enabled here and disabled at close). @defaultValue `perf_hooks.monitorEventLoopDelay({ resolution: 10 })`
   */
  readonly loopDelay?: LoopDelayHistogram;
  /**
   * The resolution of {@link loopDelay}'s histogram, in milliseconds. A `perf_hooks` event-loop histogram records the
   * interval between the runs of its own timer, not how late a run was: an idle process reads its resolution. So the
   * listed delay is each reading less this resolution (never below 0). @defaultValue 10, the default histogram's
   */
  readonly loopDelayResolutionMs?: number;
}

/** What the host reads of an event-loop delay histogram (`perf_hooks.IntervalHistogram`), in nanoseconds. */
export interface LoopDelayHistogram {
  readonly count: number;
  readonly max: number;
  percentile(percentile: number): number;
  reset(): void;
  enable(): boolean;
  disable(): boolean;
}

const timeout = async <T>(p: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** A stream no session uses: the readiness probe reads it (an empty read proves the store answers). */
export const READINESS_PROBE_STREAM = 'steerlog-readyz-probe';

/**
 * Starts measuring `host`: follows its live sessions (the session metrics fold their logs), the open live-mirror
 * streams, the queue depth of every live session, and the timing and size of every store append (`host.store`'s
 * `append` is wrapped in place until {@link HostObservability.close}).
 */
export const createHostObservability = (host: Host, options: HostObservabilityOptions = {}): HostObservability => {
  const registry = new MetricsRegistry();
  const now = options.now ?? (() => performance.now());
  registry.counter(HOST_METRICS.requests, 'HTTP requests answered, by method, route and status');
  registry.histogram(HOST_METRICS.requestDuration, 'Time to answer an HTTP request (to its headers, for the live stream), by route');
  registry.gauge(HOST_METRICS.sseClients, 'Open live-mirror streams (GET /api/stream)', () => [{ labels: {}, value: host.listenerCount }]);
  registry.gauge(HOST_METRICS.liveSessions, 'Sessions live on this host', () => [{ labels: {}, value: host.live.size }]);
  registry.gauge(HOST_METRICS.queueDepth, 'Pending inbox messages over the live sessions, by list', () => {
    let nextTurn = 0;
    let nextStep = 0;
    for (const s of host.live.values()) {
      const state = s.agent.inbox.state;
      nextTurn += size(state.nextTurn);
      nextStep += size(state.nextStep);
    }
    return [
      { labels: { list: 'next-turn' }, value: nextTurn },
      { labels: { list: 'next-step' }, value: nextStep },
    ];
  });
  registry.histogram(HOST_METRICS.appendDuration, 'Time a store append takes (one write-behind batch), by outcome');
  registry.histogram(HOST_METRICS.appendBatch, 'Events per store append', COUNT_BUCKETS);
  registry.counter(HOST_METRICS.appendFailures, 'Store appends that failed');
  registry.histogram(HOST_METRICS.fsyncDuration, 'Time a store fsync batch takes (a JSONL group commit), by outcome');
  registry.histogram(HOST_METRICS.fsyncBatch, 'Appends made durable by one fsync batch', COUNT_BUCKETS);
  const offOperations = storeOperationsOf(host.store)?.onOperation((op) => {
    if (op.operation !== 'fsync') return;
    registry.observe(HOST_METRICS.fsyncDuration, '', { outcome: op.error === undefined ? 'ok' : 'failed' }, Math.max(0, op.endTime - op.startTime) / 1000);
    registry.observe(HOST_METRICS.fsyncBatch, '', {}, op.appends ?? 1, COUNT_BUCKETS);
  });
  const telemetryStats = options.telemetryStats;
  if (telemetryStats) {
    registry.counterFrom(HOST_METRICS.telemetrySpans, 'Spans of the live telemetry export, by outcome (exported, dropped: the export queue was full, failed)', () => {
      const s = telemetryStats();
      return [
        { labels: { outcome: 'exported' }, value: s.exported },
        { labels: { outcome: 'dropped' }, value: s.dropped },
        { labels: { outcome: 'failed' }, value: s.failed },
      ];
    });
    registry.gauge(HOST_METRICS.telemetryBacklog, 'What the live telemetry export has yet to do: spans queued for export, and events and store operations the export worker has not read yet (its lag)', () => {
      const s = telemetryStats();
      return [
        { labels: { what: 'queued_spans' }, value: s.queued ?? 0 },
        { labels: { what: 'unread_records' }, value: s.unread ?? 0 },
      ];
    });
  }
  // the delay of this process's event loop (what makes every request wait), since the previous scrape
  const loopDelay = options.loopDelay ?? monitorEventLoopDelay({ resolution: 10 });
  const resolutionNs = (options.loopDelayResolutionMs ?? 10) * 1e6;
  loopDelay.enable();
  registry.gauge(HOST_METRICS.loopDelay, 'Event-loop delay of the host process since the previous scrape, by quantile (1: the largest), seconds (perf_hooks.monitorEventLoopDelay at 10 ms resolution, each reading less the resolution)', () => {
    const count = loopDelay.count;
    const values = LOOP_DELAY_QUANTILES.map((q) => ({
      labels: { quantile: String(q) },
      value: count === 0 ? 0 : Math.max(0, (q === 1 ? loopDelay.max : loopDelay.percentile(q * 100)) - resolutionNs) / 1e9,
    }));
    loopDelay.reset();
    return values;
  });
  const sessions = createSessionMetrics(registry);

  // every live session: its history folded (not counted), then each new event observed
  const offs = new Map<string, () => void>();
  const follow = (sessionId: string): void => {
    const live = host.live.get(sessionId);
    if (!live || offs.has(sessionId)) return;
    sessions.follow(sessionId, live.agent.events);
    offs.set(sessionId, live.agent.onEvent((e) => sessions.observe(sessionId, e)));
  };
  for (const id of host.live.keys()) follow(id);
  const offHost = host.listenSessions((signal) => {
    if (signal.kind === 'attached') follow(signal.session.agent.sessionId);
    else if (signal.kind === 'detached') {
      offs.get(signal.sessionId)?.();
      offs.delete(signal.sessionId);
      sessions.forget(signal.sessionId);
    }
  });

  const store = host.store as EventStore & { append: EventStore['append'] };
  const ownAppend = Object.prototype.hasOwnProperty.call(store, 'append') ? store.append : undefined;
  const original = store.append;
  /** The series of every successful append, kept from the first one on. */
  let appendOk: ((seconds: number) => void) | undefined;
  let appendBatch: ((events: number) => void) | undefined;
  store.append = async function timedAppend(this: unknown, stream, events, expected) {
    const started = now();
    try {
      const result = await original.call(store, stream, events, expected);
      (appendOk ??= registry.histogramSeries(HOST_METRICS.appendDuration, '', { outcome: 'ok' }))((now() - started) / 1000);
      (appendBatch ??= registry.histogramSeries(HOST_METRICS.appendBatch, '', {}, COUNT_BUCKETS))(events.length);
      return result;
    } catch (e) {
      registry.observe(HOST_METRICS.appendDuration, '', { outcome: 'failed' }, (now() - started) / 1000);
      registry.inc(HOST_METRICS.appendFailures, '');
      throw e;
    }
  };

  const probeTimeoutMs = options.probeTimeoutMs ?? 2000;
  const readiness = async (): Promise<Readiness> => {
    let storeState: Readiness['store'];
    try {
      await timeout(
        (async () => {
          for await (const _ of host.store.read(READINESS_PROBE_STREAM, { maxCount: 1 })) break;
        })(),
        probeTimeoutMs,
        'the store',
      );
      storeState = { ok: true };
    } catch (e) {
      storeState = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const ids = [...host.live.keys()];
    let leases: Readiness['leases'];
    try {
      const self = host.ownership.self.hostId;
      const holders = await timeout(Promise.all(ids.map((id) => host.ownership.holder(id))), probeTimeoutMs, 'the lease store');
      // a host alone holds every session it runs (its holder() names nobody); a shared one, those its lease names
      const held = holders.filter((h) => (h === null ? options.sharedLeases !== true : h.hostId === self)).length;
      leases = { live: ids.length, held };
    } catch (e) {
      leases = { live: ids.length, held: 0, error: e instanceof Error ? e.message : String(e) };
    }
    return { ready: storeState.ok && leases.error === undefined && leases.held === leases.live, store: storeState, leases };
  };

  const collectors: (() => Promise<void>)[] = [];
  const requestSeries = new Map<string, (by: number) => void>();
  const durationSeries = new Map<string, (seconds: number) => void>();
  return {
    registry,
    sessions,
    addCollector: (collect) => void collectors.push(collect),
    collect: async () => {
      await Promise.all(collectors.map((c) => c().catch(() => undefined)));
    },
    request: (method, route, status, seconds) => {
      // each series looked up by its labels once, when first counted (in the order `inc` and `observe` would make it)
      const key = `${method} ${route} ${status}`;
      let count = requestSeries.get(key);
      if (count === undefined) requestSeries.set(key, (count = registry.counterSeries(HOST_METRICS.requests, '', { method, route, status: String(status) })));
      count(1);
      let duration = durationSeries.get(route);
      if (duration === undefined) durationSeries.set(route, (duration = registry.histogramSeries(HOST_METRICS.requestDuration, '', { route })));
      duration(seconds);
    },
    readiness,
    close: () => {
      loopDelay.disable();
      offHost();
      offOperations?.();
      for (const off of offs.values()) off();
      offs.clear();
      if (ownAppend !== undefined) store.append = ownAppend;
      else delete (store as { append?: unknown }).append;
    },
  };
};

/** The route label of a request path: its fixed part (`/api/<method>`, `/api/stream`, `/metrics`, …), never an id. */
export const routeOf = (path: string): string => {
  if (path === '/api/stream' || path === '/metrics' || path === '/healthz' || path === '/readyz' || path === '/projections') return path;
  if (path.startsWith('/api/')) return /^\/api\/[a-z]+(\.[a-zA-Z]+)?$/.test(path) ? path : '/api/other';
  return 'console';
};

/** Registers `/metrics`, `/healthz` and `/readyz` (after the door checks, before the console's routes). */
export const registerObservabilityRoutes = (app: Hono<any>, observability: HostObservability, tokens: readonly BearerToken[]): void => {
  const guard = async (c: { req: { header: (name: string) => string | undefined } }): Promise<boolean> => tokens.length === 0 || authenticate(c.req.header('authorization'), tokens) !== null;
  app.get('/healthz', async (c) => {
    if (!(await guard(c))) return c.json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer' });
    return c.json({ status: 'ok' });
  });
  app.get('/readyz', async (c) => {
    if (!(await guard(c))) return c.json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer' });
    const r = await observability.readiness();
    return c.json(r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    if (!(await guard(c))) return c.json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer' });
    await observability.collect();
    return c.body(observability.registry.render(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
};
