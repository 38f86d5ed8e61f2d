import type { OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import type { ContentRedaction } from '../../projections/telemetry/span-types.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { startExportThread } from './export-thread.js';
import type { ExportScheduling } from './export-thread-scheduling.js';
import type { OtlpProtocol } from './otlp-exporter.js';
import { openSpanExportQueue } from './open-export-queue.js';
import { createSpanFollower } from './span-follower.js';
import type { SpanExportQueue, SpanExporterLike, SpanExportQueueOptions, SpanExportStats } from './span-export-queue.js';

/**
 * Live export through the official OpenTelemetry JS SDK: the spans the telemetry derivation completes as a session's
 * events commit wait in a bounded export queue and leave in batches through the SDK's `SpanExporter` (the
 * OTLP/HTTP exporter, protobuf by default, JSON when asked). The SDK packages are optional peer dependencies, loaded
 * only here: `@opentelemetry/sdk-trace`, `@opentelemetry/resources`, `@opentelemetry/core` and
 * `@opentelemetry/exporter-trace-otlp-proto` or `@opentelemetry/exporter-trace-otlp-http` (2.12.1 / 0.223.1, the
 * newest that run on Node 20). The spans keep the
 * derivation's ids and times, so a live export and a later `steerlog trace` of the same session agree span for span;
 * a session disposed with spans still open (inbox activity after its last turn, a turn cut short) exports them
 * closed at its last event and marked `steerlog.span.open`, as `steerlog trace` of the session would. Store
 * appends and fsync batches the runtime tells of become `db.*` spans (live only: they are not in the log).
 */

export { TelemetryUnavailableError, isTelemetryUnavailableError } from './telemetry-unavailable.js';
export type { ExportScheduling } from './export-thread-scheduling.js';

/** Options of {@link createOtelTelemetry}. */
export interface OtelTelemetryOptions {
  /** The OTLP/HTTP endpoint (`<endpoint>/v1/traces` receives the spans). Required unless `exporter` is given. */
  readonly endpoint?: string;
  /**
   * The SDK `SpanExporter` to use instead of OTLP/HTTP (the SDK's `InMemorySpanExporter` in tests).
   * @defaultValue an `OTLPTraceExporter` for `endpoint`
   */
  readonly exporter?: unknown;
  /**
   * The OTLP/HTTP encoding when exporting to `endpoint`: `http/protobuf` through
   * `@opentelemetry/exporter-trace-otlp-proto`, `http/json` through `@opentelemetry/exporter-trace-otlp-http`
   * (each an optional peer dependency). The SDK's protobuf encoding costs less CPU per span and sends fewer bytes.
   * @defaultValue 'http/protobuf'
   */
  readonly protocol?: OtlpProtocol;
  /** The resource's `service.name`. @defaultValue 'steerlog' */
  readonly serviceName?: string;
  /** The content redaction hook; content is exported only through it. @defaultValue none: no content */
  readonly content?: ContentRedaction;
  /** Send each span at once instead of in batches (tests, short runs). @defaultValue false */
  readonly simple?: boolean;
  /**
   * The export queue's bounds (`maxQueueSize` 16384 spans, `maxExportBatchSize` 512, `scheduledDelayMs` 1000,
   * `exportTimeoutMs` 30000 by default): a burst beyond the queue drops spans, counted in
   * {@link OtelTelemetry.stats}. @defaultValue those defaults
   */
  readonly queue?: Omit<SpanExportQueueOptions, 'immediate' | 'onSettled'>;
  /**
   * Where the spans are derived, encoded and sent. `worker`: on a worker thread that the runtime's thread hands the
   * committed events to (in one message every 10 ms at most, or as soon as about twenty turns' worth wait; each event as what the span derivation reads of it, its data the JSON its store writes), so the derivation, the SDK's spans, the
   * OTLP encoding and the request cost the runtime's thread nothing more; it takes an `endpoint`, and neither
   * `exporter` nor `content` (objects of this thread). `caller`: on the thread that calls `createOtelTelemetry`,
   * beside the runtime. {@link OtelTelemetry.stats} from a worker are its counts as of its last report (after each
   * export, flush and shutdown).
   * @defaultValue 'worker' with an `endpoint` and neither `exporter` nor `content`, else 'caller'
   */
  readonly thread?: 'worker' | 'caller';
  /**
   * The export worker's scheduling priority. `low`: on Linux the worker thread (that thread only) runs under the
   * `SCHED_IDLE` policy — only on CPU time no other thread of the machine wants, any thread that wakes taking its
   * core at once — set through util-linux's `chrt` at the worker's start; where `chrt` is missing or refused, at nice
   * 19 ({@link OtelTelemetry.exportScheduling} says which, and why). The runtime's threads (its event loop, the
   * store's writes and fsyncs) then never wait for the export: it runs later, not for less. When the cores are busy
   * with other work the export lags; what waits is bounded — the committed events in its hand-over, its spans in the
   * export queue (see `queue`), beyond it dropped and counted in {@link OtelTelemetry.stats} — and a flush or a
   * shutdown still waits for every span, on whatever CPU time is left. `normal`: the process's priority, the worker
   * competing for the cores like the runtime's threads (on a machine whose cores are saturated by other work, the
   * export keeps its share). Elsewhere than Linux, and with `thread: 'caller'`, ignored.
   * @defaultValue 'low'
   */
  readonly exportPriority?: 'low' | 'normal';
}

/** The live exporter: a {@link SessionTelemetry} for `createRuntime({ telemetry })`, and how to flush and stop it. */
export interface OtelTelemetry extends SessionTelemetry {
  /** Sends what is buffered. */
  forceFlush(): Promise<void>;
  /** Sends what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
  /**
   * Spans exported, dropped (the queue was full; with the worker, also events not handed to it), failed (the exporter
   * refused them or timed out) and queued; with the worker, `unread`: events and store operations it has yet to read.
   */
  stats(): SpanExportStats;
  /** Where the export runs and how its thread is scheduled (as applied: see `exportPriority`). */
  readonly exportScheduling: ExportScheduling;
}

/** The export queue in front of the SDK exporter (`exporter`, or the OTLP/HTTP one of `protocol` for `endpoint`). */
const openQueue = (options: OtelTelemetryOptions): Promise<SpanExportQueue<OperationSpanSource>> =>
  openSpanExportQueue({
    ...(options.exporter !== undefined ? { exporter: options.exporter as SpanExporterLike } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    protocol: options.protocol ?? 'http/protobuf',
    serviceName: options.serviceName ?? 'steerlog',
    queue: { ...(options.queue ?? {}), immediate: options.simple === true },
  });

/** The caller's thread's scheduling, which the export leaves as it is. */
const ON_CALLER_THREAD: ExportScheduling = Object.freeze({ thread: 'caller', policy: 'normal' });

/** The live export on the caller's thread: the follower and the queue beside the runtime. */
const onThisThread = async (options: OtelTelemetryOptions): Promise<OtelTelemetry> => {
  const queue = await openQueue(options);
  const follower = createSpanFollower((s) => queue.add(s), options.content);
  return {
    capturesContent: options.content !== undefined,
    follow: follower.follow,
    observe: follower.observe,
    forget: follower.forget,
    storeOperation: follower.storeOperation,
    forceFlush: () => queue.flush(),
    shutdown: async () => {
      follower.forgetAll();
      await queue.shutdown();
    },
    stats: () => queue.stats(),
    exportScheduling: ON_CALLER_THREAD,
  };
};

/**
 * The live export on a worker thread: the runtime's thread hands over the log, the worker does the rest. With
 * `exporter: 'count'` the worker derives the spans and counts them without sending (the overhead benchmark's `none`).
 * @internal
 */
export const onWorker = async (options: OtelTelemetryOptions & { readonly endpoint: string }, exporter: 'otlp' | 'count' = 'otlp'): Promise<OtelTelemetry> => {
  const thread = await startExportThread({
    endpoint: options.endpoint,
    protocol: options.protocol ?? 'http/protobuf',
    serviceName: options.serviceName ?? 'steerlog',
    queue: { ...(options.queue ?? {}), immediate: options.simple === true },
    exporter,
    priority: options.exportPriority ?? 'low',
  });
  return {
    capturesContent: false,
    follow: thread.follow,
    observe: thread.observe,
    forget: thread.forget,
    storeOperation: thread.storeOperation,
    forceFlush: thread.flush,
    shutdown: thread.shutdown,
    stats: thread.stats,
    exportScheduling: thread.scheduling,
  };
};

/**
 * Creates the live OpenTelemetry exporter (loads the SDK, on the thread that exports). Each live session is folded by
 * its own span derivation; a session that goes live with history (a resume) has that history folded without
 * exporting it. With an `endpoint` (and neither `exporter` nor `content`) the derivation and the export run on a
 * worker thread (see `thread`).
 */
export const createOtelTelemetry = async (options: OtelTelemetryOptions): Promise<OtelTelemetry> => {
  if (options.exporter === undefined && options.endpoint === undefined) throw new TypeError('createOtelTelemetry(options): an endpoint or an exporter');
  const worker = options.exporter === undefined && options.content === undefined;
  const thread = options.thread ?? (worker ? 'worker' : 'caller');
  if (thread === 'worker') {
    if (!worker) throw new TypeError("createOtelTelemetry(options): thread 'worker' takes an endpoint, and neither an exporter nor a content hook (they are this thread's objects)");
    return onWorker({ ...options, endpoint: options.endpoint! });
  }
  return onThisThread(options);
};
