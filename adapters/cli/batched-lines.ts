/** A line sink that writes its lines together: once per turn of the event loop, or once per time window. */
export interface BatchedLines {
  /** Queues one line (without its newline); it is written at the next write of the batch. */
  readonly line: (line: string) => void;
  /** Writes what is queued now. */
  readonly flush: () => void;
}

/** Options of {@link batchedLines}. */
export interface BatchedLinesOptions {
  /**
   * How long a line may wait for the lines after it, ms: the queued lines are written once this long after the first
   * of them (a timer that does not keep the process alive). 0 writes them at the next turn of the event loop
   * (`setImmediate`). @defaultValue 0
   */
  readonly maxDelayMs?: number;
  /** Queued text (UTF-16 code units, newlines included) that is written at once, without waiting. @defaultValue 65536 */
  readonly maxQueued?: number;
}

/**
 * Lines written in one `write` per batch instead of one per line: `steerlog serve` logs a line per request, and under
 * load a write per request (a system call each, synchronous on a pipe or a file) cost the Host more than parsing the
 * request. The lines keep their order; a line is late by at most one turn of the loop (or `maxDelayMs`), and `flush`
 * writes the rest at once (on shutdown).
 */
export const batchedLines = (write: (chunk: string) => void, options: BatchedLinesOptions = {}): BatchedLines => {
  const maxDelayMs = options.maxDelayMs ?? 0;
  const maxQueued = options.maxQueued ?? 65_536;
  let queued: string[] = [];
  let queuedLength = 0;
  let timer: NodeJS.Timeout | null = null;
  let immediate = false;
  const flush = (): void => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    immediate = false;
    if (queued.length === 0) return;
    const chunk = `${queued.join('\n')}\n`;
    queued = [];
    queuedLength = 0;
    write(chunk);
  };
  // the scheduled write: a flush that finds nothing queued (an explicit flush came first) writes nothing
  const scheduled = (): void => {
    timer = null;
    immediate = false;
    flush();
  };
  return {
    line: (line) => {
      queued.push(line);
      queuedLength += line.length + 1;
      if (queuedLength >= maxQueued) return flush();
      if (maxDelayMs > 0) {
        if (timer === null) (timer = setTimeout(scheduled, maxDelayMs)).unref();
      } else if (!immediate) {
        immediate = true;
        setImmediate(scheduled);
      }
    },
    flush,
  };
};
