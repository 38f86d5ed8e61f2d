import type { CliIo } from './io.js';

/** Counts events and, on a terminal, shows the count on stderr (none when piped or with --json). */
export interface Progress {
  /** One more event. */
  tick(): void;
  /** Clears the line (call once, when done). */
  done(): void;
}

const NONE: Progress = { tick: () => {}, done: () => {} };

export interface ProgressOptions {
  /** Redraw at most this often (ms). @defaultValue 200 */
  readonly everyMs?: number;
  /** The clock (injectable for tests). @defaultValue Date.now */
  readonly now?: () => number;
}

/**
 * A progress line for long audits and verifications: `label: 1,234,567 events` redrawn in place on stderr, only
 * when stderr is a TTY and the output is not JSON.
 */
export const createProgress = (io: CliIo, label: string, json: boolean, options: ProgressOptions = {}): Progress => {
  const stderr = io.stderr as CliIo['stderr'] & { readonly isTTY?: boolean };
  if (json || stderr.isTTY !== true) return NONE;
  const every = options.everyMs ?? 200;
  const now = options.now ?? Date.now;
  let count = 0;
  let last = now();
  let drawn = false;
  return {
    tick() {
      count++;
      if ((count & 1023) !== 0) return;
      const t = now();
      if (t - last < every) return;
      last = t;
      drawn = true;
      stderr.write(`\r${label}: ${count.toLocaleString('en-US')} events`);
    },
    done() {
      if (drawn) stderr.write('\r\u001b[2K');
    },
  };
};
