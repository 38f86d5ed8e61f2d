/**
 * The queue between the span derivation and an OpenTelemetry `SpanExporter`: spans wait in a bounded queue and leave
 * in batches, one export at a time, when a batch is full or a short delay has passed (what the SDK's
 * `BatchSpanProcessor` does, with what it does not: a queue sized for bursts by default, and the spans it had to drop
 * counted where a metric can read them). An export that fails or times out counts its spans as failed; the queue goes
 * on with the next batch.
 */

/** The SDK `SpanExporter`, structurally (the SDK is an optional peer dependency, never imported here). */
export interface SpanExporterLike {
  export(spans: unknown[], resultCallback: (result: { readonly code: number; readonly error?: Error }) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

/** Options of {@link SpanExportQueue}. */
export interface SpanExportQueueOptions {
  /** The most spans waiting for export; a span beyond it is dropped and counted. @defaultValue 16384 */
  readonly maxQueueSize?: number;
  /** The most spans per export. @defaultValue 512 */
  readonly maxExportBatchSize?: number;
  /** How long a span waits for a batch to fill before it is sent anyway (ms). @defaultValue 1000 */
  readonly scheduledDelayMs?: number;
  /** How long one export may take before its spans count as failed (ms). @defaultValue 30000 */
  readonly exportTimeoutMs?: number;
  /** Send each span as it comes, synchronously (tests, short runs): no batching, no delay. @defaultValue false */
  readonly immediate?: boolean;
  /** Called after each export settles (accepted, refused or timed out), when the counts have changed. @defaultValue none */
  readonly onSettled?: () => void;
}

/** What the queue has done since it was created. */
export interface SpanExportStats {
  /** Spans the exporter accepted. */
  readonly exported: number;
  /**
   * Spans dropped because the queue was full; with the export worker, also the events and store operations not
   * handed to it because it was too far behind (see `unread`) or had stopped.
   */
  readonly dropped: number;
  /** Spans of exports that failed or timed out. */
  readonly failed: number;
  /** Spans waiting now. */
  readonly queued: number;
  /**
   * The export worker's lag: committed events and store operations handed to it (or waiting to be) that it has not
   * read yet. Absent when the export runs on the runtime's thread.
   */
  readonly unread?: number;
}

const SUCCESS = 0; // @opentelemetry/core ExportResultCode.SUCCESS

/** A bounded, batching export queue in front of a `SpanExporter`; `S` is what is queued, `toSdk` what is exported. */
export class SpanExportQueue<S> {
  readonly #exporter: SpanExporterLike;
  readonly #toSdk: (span: S) => unknown;
  readonly #maxQueue: number;
  readonly #batch: number;
  readonly #delayMs: number;
  readonly #timeoutMs: number;
  readonly #immediate: boolean;
  readonly #onSettled: (() => void) | undefined;
  /** The spans waiting: `#queue` from `#head` on (the batches sent are cut from its front without copying the rest). */
  #queue: S[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  #exporting: Promise<void> | null = null;
  #closed = false;
  #exported = 0;
  #dropped = 0;
  #failed = 0;
  /** Exports under way in immediate mode. */
  readonly #pending = new Set<Promise<void>>();

  constructor(exporter: SpanExporterLike, toSdk: (span: S) => unknown, options: SpanExportQueueOptions = {}) {
    this.#exporter = exporter;
    this.#toSdk = toSdk;
    this.#maxQueue = Math.max(1, options.maxQueueSize ?? 16_384);
    this.#batch = Math.max(1, Math.min(options.maxExportBatchSize ?? 512, this.#maxQueue));
    this.#delayMs = Math.max(0, options.scheduledDelayMs ?? 1000);
    this.#timeoutMs = Math.max(1, options.exportTimeoutMs ?? 30_000);
    this.#immediate = options.immediate ?? false;
    this.#onSettled = options.onSettled;
  }

  /** Queues one span (or, immediate, sends it now). A span beyond the queue's bound, or after shutdown, is dropped. */
  add(span: S): void {
    if (this.#closed) {
      this.#dropped++;
      return;
    }
    if (this.#immediate) {
      const p = this.#send([span]);
      this.#pending.add(p);
      void p.finally(() => this.#pending.delete(p));
      return;
    }
    if (this.#queue.length - this.#head >= this.#maxQueue) {
      this.#dropped++;
      return;
    }
    this.#queue.push(span);
    if (this.#queue.length - this.#head >= this.#batch) this.#kick();
    else if (this.#timer === undefined && this.#exporting === null) {
      this.#timer = setTimeout(() => this.#kick(), this.#delayMs);
      this.#timer.unref?.();
    }
  }

  /** The counts so far. */
  stats(): SpanExportStats {
    return { exported: this.#exported, dropped: this.#dropped, failed: this.#failed, queued: this.#queue.length - this.#head };
  }

  /** Sends everything queued (in batches, one after the other) and waits for it. */
  async flush(): Promise<void> {
    this.#clearTimer();
    await Promise.all([...this.#pending]);
    while (this.#exporting !== null || this.#queue.length > this.#head) {
      if (this.#exporting !== null) await this.#exporting;
      else this.#kick();
    }
    await this.#exporter.forceFlush?.();
  }

  /** Sends what is queued, then shuts the exporter down; spans added later are dropped. */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    await this.#exporter.shutdown();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Starts exporting the next batch unless an export is under way (which starts the next one when it ends). */
  #kick(): void {
    this.#clearTimer();
    const waiting = this.#queue.length - this.#head;
    if (this.#exporting !== null || waiting === 0) return;
    let batch: S[];
    if (this.#head === 0 && waiting <= this.#batch) {
      batch = this.#queue;
      this.#queue = [];
    } else {
      // a backlog: the batch is cut from the front; the rest is copied down only once the front is half the array
      // (each span is copied O(1) times, not once per batch sent before it)
      batch = this.#queue.slice(this.#head, this.#head + Math.min(waiting, this.#batch));
      this.#head += batch.length;
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      } else if (this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
    this.#exporting = this.#send(batch).finally(() => {
      this.#exporting = null;
      const left = this.#queue.length - this.#head;
      if (left >= this.#batch) this.#kick();
      else if (left > 0 && this.#timer === undefined) {
        this.#timer = setTimeout(() => this.#kick(), this.#delayMs);
        this.#timer.unref?.();
      }
    });
  }

  /** One export of `batch`, counted; never rejects. */
  #send(batch: readonly S[]): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const done = (ok: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (ok) this.#exported += batch.length;
        else this.#failed += batch.length;
        this.#onSettled?.();
        resolve();
      };
      const timer = setTimeout(() => done(false), this.#timeoutMs);
      timer.unref?.();
      try {
        this.#exporter.export(batch.map(this.#toSdk), (result) => done(result.code === SUCCESS));
      } catch {
        done(false);
      }
    });
  }
}
