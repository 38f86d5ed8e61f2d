import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LogEvent } from '../../domain/events.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import type { ExportScheduling } from './export-thread-scheduling.js';
import type { OtlpProtocol } from './otlp-exporter.js';
import type { SpanExportQueueOptions, SpanExportStats } from './span-export-queue.js';
import { TelemetryUnavailableError } from './telemetry-unavailable.js';
import { HandOverWriter, pushFollow, pushForget, pushObserve, pushOperation, type HandOver } from './log-handover.js';

/**
 * The live export on a worker thread. Telemetry is a projection of the log, so the runtime's thread hands the worker
 * the log itself — the committed events, in order, with the store operations between them — in one message per
 * hand-over (at most every {@link HANDOFF_DELAY_MS}, or at once when {@link HANDOFF_ITEMS} values wait); the worker
 * runs the whole projection: the span derivation, the export queue, the SDK's spans, the OTLP encoding and the HTTP
 * request. What the runtime's thread pays per event is pushing what the span derivation reads of it — its seq, time
 * and type, and for the types whose fields it reads their data's JSON (made for the store already), a splice's
 * metadata, a turn end's hash — into the hand-over's three channels (its numbers in one buffer, moved to the worker
 * with the message; its strings end to end in one string; its rare objects), and their share of the message's
 * structured clone (`log-handover.ts`). Running from TypeScript
 * sources (tests, benchmarks), the worker loads its entry through `tsx`.
 */

/** What the worker is started with. @internal */
export interface ExportThreadData {
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  readonly queue: SpanExportQueueOptions;
  /**
   * `count`: the worker derives the spans and counts them as exported without encoding or sending them (what the
   * overhead benchmark's `none` measures: the runtime thread's share and the derivation, no exporter).
   * @defaultValue 'otlp'
   */
  readonly exporter?: 'otlp' | 'count';
  /**
   * `low`: the worker lowers its own thread's priority (`export-thread-scheduling.ts`: Linux `SCHED_IDLE`, else nice
   * 19); `normal`: the process's. @defaultValue 'normal'
   */
  readonly priority?: 'low' | 'normal';
  /** Where the worker looks for `chrt` (tests name a missing one). @defaultValue `CHRT_PATHS` */
  readonly chrtPaths?: readonly string[];
  /**
   * One `Int32` the worker adds to, after reading each hand-over, the events and store operations it held (their
   * `count`): the runtime's thread compares it with what it posted to know how far the worker is behind.
   */
  readonly read: SharedArrayBuffer;
}

/** What the runtime's thread posts to the worker: `log` holds a hand-over's records (`log-handover.ts`), its buffer transferred. @internal */
export type ToExportThread =
  | { readonly kind: 'log'; readonly handOver: HandOver; readonly count: number }
  | { readonly kind: 'flush'; readonly id: number }
  | { readonly kind: 'shutdown'; readonly id: number };

/** What the worker posts back. @internal */
export type FromExportThread =
  | { readonly kind: 'ready'; readonly scheduling: ExportScheduling }
  | { readonly kind: 'unavailable'; readonly packageName: string }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'stats'; readonly stats: SpanExportStats; readonly id?: number };

/** The runtime's side of the export worker. @internal */
export interface ExportThread {
  /** One committed event of a live session (`dataJson`: its data's JSON when known), handed over with the next message. */
  observe(sessionId: string, event: LogEvent, dataJson?: string): void;
  /**
   * A session went live with this history (copied now for the worker; the array itself is kept to follow the session
   * again after a cut: the runtime's session log array, which keeps growing).
   */
  follow(sessionId: string, history: readonly LogEvent[]): void;
  /** The session is no longer followed (the worker exports its open spans). */
  forget(sessionId: string): void;
  /** A store operation, for a `db.*` span. */
  storeOperation(op: StoreOperation): void;
  /** Hands over what waits, and waits until the worker has exported every span it derived. */
  flush(): Promise<void>;
  /** Hands over what waits; the worker exports the spans still open and every span, then stops. */
  shutdown(): Promise<void>;
  /** The worker's counts as of its last report (after each export, flush and shutdown), and what was lost here. */
  stats(): SpanExportStats;
  /** How the worker thread is scheduled (what it applied at its start). */
  readonly scheduling: ExportScheduling;
}

/**
 * Records handed to the worker at once when this many values wait (else after the delay): about 20 one-step turns'
 * worth. While the runtime runs turns back to back without its event loop reaching the timers (a model and a store
 * that answer at once: every await a resolved promise), the delay never fires and this bound alone hands the log
 * over; the worker then derives and sends in step with the runtime, and what is left for a flush to wait on is at
 * most this many values' spans (at 16384, about 180 such turns).
 */
const HANDOFF_ITEMS = 2048;
/** How long a record waits on the runtime's thread for others to go with it to the worker (ms). */
const HANDOFF_DELAY_MS = 10;
/**
 * The most events and store operations handed to the worker and not read by it yet, as a multiple of the export
 * queue's bound (`maxQueueSize`): past it the worker is that far behind, and what comes next is not handed over.
 */
const UNREAD_PER_QUEUED_SPAN = 4;
const NO_STATS: SpanExportStats = Object.freeze({ exported: 0, dropped: 0, failed: 0, queued: 0 });

/**
 * The export worker's young generation (MiB; V8's nursery, where its short-lived objects — each hand-over's events,
 * each batch's spans and bodies — are allocated and collected): bounded at 3 MiB, two semi-spaces of 1 MiB (by
 * default V8 lets them grow to 16 MiB each under a steady allocation). Measured on the memory store's 1-step turns,
 * the runtime kept 0.92–0.94× of its turns/s with the export on, against 0.91–0.93× with V8's default, in four pairs
 * of runs one after the other, and the process's CPU per turn did not grow (docs/benchmarks.md, 2026-12-04) —
 * presumably because the worker's garbage then stays within a footprint that evicts less of the cache the runtime's
 * core shares with it. On the JSONL store's 1-step turns two such pairs showed no difference either way.
 */
const YOUNG_GENERATION_MB = 3;

/** The worker: its compiled entry next to this file, or (from TypeScript sources) a script that loads it through tsx. */
const newWorker = (workerData: ExportThreadData): Worker => {
  const options = { workerData, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } };
  const compiled = new URL('./export-thread-entry.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, options);
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const source = new URL('./export-thread-entry.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`, { ...options, eval: true });
};

/**
 * Starts the export worker and waits until it has loaded the SDK and its exporter: throws `TelemetryUnavailableError`
 * when a package is missing. The worker does not keep the process alive; `flush` and `shutdown` wait for it.
 * @internal
 */
export const startExportThread = async (options: Omit<ExportThreadData, 'read'>): Promise<ExportThread> => {
  const data: ExportThreadData = { ...options, read: new SharedArrayBuffer(4) };
  const read = new Int32Array(data.read);
  const maxUnread = UNREAD_PER_QUEUED_SPAN * Math.max(1, data.queue.maxQueueSize ?? 16_384);
  const worker = newWorker(data);
  const records = new HandOverWriter();
  /** Events and store operations in `records`, and posted in all (modulo 2^32, as the worker's count). */
  let count = 0;
  let posted = 0;
  /** Sessions whose events stopped being handed over while the worker was too far behind, until followed again. */
  const cut = new Set<string>();
  /**
   * Each followed session's history as the runtime gave it: its session log's own array, which grows as events
   * commit, so that a cut session can be followed again from its whole log once the worker has caught up.
   */
  const histories = new Map<string, readonly LogEvent[]>();
  /**
   * A cut session's next event, once the worker has caught up (half the bound): the session is followed again with
   * its log up to this event (folded, not exported; the event counts as dropped like those before it) and its later
   * events are handed over. False (still cut) while the worker lags, or when the history does not reach the event.
   */
  const rejoin = (sessionId: string, event: LogEvent): boolean => {
    if (unread() >= maxUnread / 2) return false;
    const history = histories.get(sessionId);
    const last = history?.[history.length - 1];
    if (history === undefined || last === undefined || history[0]!.seq !== 0) return false;
    if (last.seq === event.seq) pushFollow(records, sessionId, history);
    else if (last.seq === event.seq - 1) pushFollow(records, sessionId, [...history, event]);
    else return false;
    cut.delete(sessionId);
    queued();
    return true;
  };
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let alive = true;
  let last: SpanExportStats = NO_STATS;
  let lostWithWorker = 0;
  let droppedHere = 0;
  let nextId = 0;
  const waiting = new Map<number, () => void>();
  const died = (): void => {
    if (!alive) return;
    alive = false;
    lostWithWorker = last.queued;
    records.clear();
    for (const done of [...waiting.values()]) done();
  };
  const ready = new Promise<ExportScheduling>((resolve, reject) => {
    worker.on('message', (m: FromExportThread) => {
      switch (m.kind) {
        case 'ready':
          resolve(m.scheduling);
          return;
        case 'unavailable':
          reject(new TelemetryUnavailableError(m.packageName));
          return;
        case 'failed':
          reject(new Error(`the telemetry export thread failed to start: ${m.message}`));
          return;
        case 'stats':
          last = m.stats;
          if (m.id !== undefined) waiting.get(m.id)?.();
          return;
      }
    });
    worker.once('error', (e) => {
      died();
      reject(e);
    });
    worker.once('exit', (code) => {
      died();
      reject(new Error(`the telemetry export thread exited (${code}) before it was ready`));
    });
  });
  let scheduling: ExportScheduling;
  try {
    scheduling = await ready;
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  worker.unref();
  const handOff = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (records.size === 0 || !alive) return;
    const handOver = records.take();
    const message: ToExportThread = { kind: 'log', handOver, count };
    posted = (posted + count) | 0;
    count = 0;
    worker.postMessage(message, [handOver.numbers.buffer as ArrayBuffer]);
  };
  /** Events and store operations the worker has not read yet: posted, or waiting here. */
  const unread = (): number => ((posted - Atomics.load(read, 0)) | 0) + count;
  /** Hands the records over when enough wait, else after the delay. */
  const queued = (): void => {
    if (records.size >= HANDOFF_ITEMS) handOff();
    else if (timer === undefined) {
      timer = setTimeout(handOff, HANDOFF_DELAY_MS);
      timer.unref();
    }
  };
  /** Can records still be handed over? An event or store operation that cannot counts as dropped. */
  const open = (spanSource: boolean): boolean => {
    if (closed || !alive) {
      if (spanSource) droppedHere++;
      return false;
    }
    return true;
  };
  const waitFor = (kind: 'flush' | 'shutdown'): Promise<void> => {
    handOff();
    if (!alive) return Promise.resolve();
    const id = nextId++;
    worker.ref();
    return new Promise<void>((resolve) => {
      waiting.set(id, () => {
        waiting.delete(id);
        if (waiting.size === 0) worker.unref();
        resolve();
      });
      worker.postMessage({ kind, id } satisfies ToExportThread);
    });
  };
  return {
    observe: (sessionId, event, dataJson) => {
      if (!open(true)) return;
      if (cut.size > 0 && cut.has(sessionId)) {
        droppedHere++;
        rejoin(sessionId, event);
        return;
      }
      if (unread() >= maxUnread) {
        // the worker is too far behind: the session's spans open so far are exported (closed, marked open) and
        // its later events are counted as dropped until it is followed again (its derivation needs every event)
        cut.add(sessionId);
        droppedHere++;
        pushForget(records, sessionId);
        queued();
        return;
      }
      pushObserve(records, sessionId, event, dataJson);
      count++;
      queued();
    },
    follow: (sessionId, history) => {
      if (!open(false)) return;
      cut.delete(sessionId);
      histories.set(sessionId, history);
      pushFollow(records, sessionId, history);
      queued();
    },
    forget: (sessionId) => {
      histories.delete(sessionId);
      if (!open(false)) return;
      if (cut.delete(sessionId)) return;
      pushForget(records, sessionId);
      queued();
    },
    storeOperation: (op) => {
      if (!open(true)) return;
      if (unread() >= maxUnread) {
        droppedHere++;
        return;
      }
      pushOperation(records, op);
      count++;
      queued();
    },
    flush: () => waitFor('flush'),
    shutdown: async () => {
      if (closed) return;
      const done = waitFor('shutdown');
      closed = true;
      await done;
      alive = false;
      await worker.terminate();
    },
    scheduling,
    stats: () => ({
      exported: last.exported,
      dropped: last.dropped + droppedHere,
      failed: last.failed + lostWithWorker,
      queued: alive ? last.queued : 0,
      unread: alive ? unread() : 0,
    }),
  };
};
