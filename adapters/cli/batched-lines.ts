/** A line sink that writes the lines of one turn of the event loop together. */
export interface BatchedLines {
  /** Queues one line (without its newline); it is written before the event loop's next turn. */
  readonly line: (line: string) => void;
  /** Writes what is queued now. */
  readonly flush: () => void;
}

/**
 * Lines written in one `write` per turn of the event loop instead of one per line: `steerlog serve` logs a line per
 * request, and under load a write per request (a system call each, synchronous on a pipe or a file) cost the Host
 * more than parsing the request. The lines keep their order; they are written at the next `setImmediate`, so a line
 * is late by at most one turn of the loop, and `flush` writes the rest at once (on shutdown).
 */
export const batchedLines = (write: (chunk: string) => void): BatchedLines => {
  let queued: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (queued.length === 0) return;
    const chunk = `${queued.join('\n')}\n`;
    queued = [];
    write(chunk);
  };
  return {
    line: (line) => {
      queued.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
};
