import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DerivedSpan } from '../../projections/telemetry/span-types.js';
import type { OtlpProtocol } from './otlp-exporter.js';
import type { SpanExportQueueOptions, SpanExportStats } from './span-export-queue.js';
import { TelemetryUnavailableError } from './telemetry-unavailable.js';

/**
 * The live export on a worker thread: the session's thread derives the spans and hands them over in a JSON string
 * once per turn of the event loop (or every 512 spans); the worker turns them into the SDK's spans, queues them
 * ({@link SpanExportQueue}, the same bounds) and sends them through the SDK's OTLP/HTTP exporter. What the runtime's
 * thread pays per span is the derivation and one `JSON.stringify`; the SDK's span conversion, the OTLP encoding and
 * the HTTP request run beside it. Running from TypeScript sources (tests, benchmarks), the worker loads its entry
 * through `tsx`.
 */

/** What the worker is started with. @internal */
export interface ExportThreadData {
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  readonly queue: Omit<SpanExportQueueOptions, 'immediate' | 'onSettled'>;
}

/** What the runtime's thread posts to the worker. @internal */
export type ToExportThread =
  | { readonly kind: 'spans'; readonly json: string }
  | { readonly kind: 'flush'; readonly id: number }
  | { readonly kind: 'shutdown'; readonly id: number };

/** What the worker posts back. @internal */
export type FromExportThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'unavailable'; readonly packageName: string }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'stats'; readonly stats: SpanExportStats; readonly id?: number };

/** Where spans go: a queue on this thread, or the worker. @internal */
export interface SpanSink {
  add(span: DerivedSpan): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
  stats(): SpanExportStats;
}

/** Spans handed to the worker at once when this many wait (else at the next turn of the event loop). */
const HANDOFF_SPANS = 512;
/** How long a span waits on the runtime's thread for others to go with it to the worker (ms). */
const HANDOFF_DELAY_MS = 25;
const NO_STATS: SpanExportStats = Object.freeze({ exported: 0, dropped: 0, failed: 0, queued: 0 });

/** The worker: its compiled entry next to this file, or (from TypeScript sources) a script that loads it through tsx. */
const newWorker = (workerData: ExportThreadData): Worker => {
  const compiled = new URL('./export-thread-entry.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, { workerData });
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const source = new URL('./export-thread-entry.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`, { eval: true, workerData });
};

/**
 * Starts the export worker and waits until it has loaded the SDK: throws `TelemetryUnavailableError` when a package
 * is missing there. The worker does not keep the process alive; `flush` and `shutdown` wait for it.
 * @internal
 */
export const startExportThread = async (data: ExportThreadData): Promise<SpanSink> => {
  const worker = newWorker(data);
  let pending: DerivedSpan[] = [];
  let scheduled = false;
  let closed = false;
  let alive = true;
  let last: SpanExportStats = NO_STATS;
  let lostWithWorker = 0;
  let droppedHere = 0;
  let nextId = 0;
  const waiting = new Map<number, () => void>();
  const waitFor = (message: ToExportThread & { id: number }): Promise<void> => {
    if (!alive) return Promise.resolve();
    worker.ref();
    return new Promise<void>((resolve) => {
      waiting.set(message.id, () => {
        waiting.delete(message.id);
        if (waiting.size === 0) worker.unref();
        resolve();
      });
      worker.postMessage(message);
    });
  };
  const died = (): void => {
    if (!alive) return;
    alive = false;
    lostWithWorker = last.queued + pending.length;
    pending = [];
    for (const done of [...waiting.values()]) done();
  };
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: FromExportThread) => {
      switch (m.kind) {
        case 'ready':
          resolve();
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
  try {
    await ready;
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  worker.unref();
  const handOff = (): void => {
    scheduled = false;
    if (pending.length === 0 || !alive) return;
    const json = JSON.stringify(pending);
    pending = [];
    worker.postMessage({ kind: 'spans', json } satisfies ToExportThread);
  };
  return {
    add: (span) => {
      if (closed || !alive) {
        droppedHere++;
        return;
      }
      pending.push(span);
      if (pending.length >= HANDOFF_SPANS) handOff();
      else if (!scheduled) {
        scheduled = true;
        setTimeout(handOff, HANDOFF_DELAY_MS).unref();
      }
    },
    flush: async () => {
      handOff();
      await waitFor({ kind: 'flush', id: nextId++ });
    },
    shutdown: async () => {
      if (closed) return;
      handOff();
      closed = true;
      await waitFor({ kind: 'shutdown', id: nextId++ });
      alive = false;
      await worker.terminate();
    },
    stats: () => ({
      exported: last.exported,
      dropped: last.dropped + droppedHere,
      failed: last.failed + lostWithWorker,
      queued: alive ? last.queued + pending.length : 0,
    }),
  };
};
