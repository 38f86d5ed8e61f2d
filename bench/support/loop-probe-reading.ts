/**
 * The readings of `bench/support/loop-delay-probe.mjs` (one JSON line per SIGUSR2) and their table cells, for
 * `bench/host-http.ts`.
 */
/** Percentiles of one event-loop histogram, ms. */
export interface Quantiles {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  readonly count: number;
}
/** GC pauses of one kind over a reading: how many, their sum and the longest, ms. */
export interface Pauses {
  readonly count: number;
  readonly ms: number;
  readonly max: number;
}
/** One reading of `bench/support/loop-delay-probe.mjs` (see there): the delay (1 ms timer, its resolution taken off), the old 10 ms interval figure, GC pauses, CPU. */
export interface LoopDelay extends Quantiles {
  readonly interval10: Quantiles;
  /** The process's CPU time between two runs of a 1 ms timer, capped at the wall time between them, ms: the holds of its own work, hardly changed by other processes' load. */
  readonly cpuHeld: { readonly p50: number; readonly p99: number; readonly p999: number; readonly max: number };
  /** The main thread's own time on a core between two runs of the 1 ms timer, ms (Linux: /proc/thread-self/schedstat; absent elsewhere). */
  readonly mainHeld?: { readonly p50: number; readonly p99: number; readonly p999: number; readonly max: number };
  /** The main thread's time waiting for a core over the reading, ms (Linux). */
  readonly runWaitMs?: number;
  readonly gc: { readonly minor: Pauses; readonly major: Pauses };
  /** CPU time of the process (user + system) over the reading, ms. */
  readonly cpuMs: number;
}

/** One cell per server of the run (joined with ·), or n/a when a reading is missing. */
export const cellOf = (loop: (LoopDelay | null)[], cell: (l: LoopDelay) => string) => (loop.every((l) => l !== null) ? loop.map((l) => cell(l!)).join(' · ') : 'n/a');
/** The delay (1 ms timer less its resolution), p50/p99/max. */
export const loopCell = (loop: (LoopDelay | null)[]) => cellOf(loop, (l) => `${l.p50.toFixed(1)}/${l.p99.toFixed(1)}/${l.max.toFixed(0)}`);
/** The old figure: the 10 ms timer's interval, p50/p99/max. */
export const intervalCell = (loop: (LoopDelay | null)[]) => cellOf(loop, (l) => `${l.interval10.p50.toFixed(0)}/${l.interval10.p99.toFixed(0)}/${l.interval10.max.toFixed(0)}`);
/** The CPU-time holds, p99/p999/max. */
export const heldCell = (loop: (LoopDelay | null)[]) => cellOf(loop, (l) => `${l.cpuHeld.p99.toFixed(1)}/${l.cpuHeld.p999.toFixed(1)}/${l.cpuHeld.max.toFixed(0)}`);
/** The main thread's own holds, p99/p999/max, and its wait for a core over the reading (ms). */
export const mainHeldCell = (loop: (LoopDelay | null)[]) => cellOf(loop, (l) => (l.mainHeld ? `${l.mainHeld.p99.toFixed(1)}/${l.mainHeld.p999.toFixed(1)}/${l.mainHeld.max.toFixed(0)} · ${l.runWaitMs}` : 'n/a'));
/** GC pauses: scavenges count/longest, major collections count/longest. */
export const gcCell = (loop: (LoopDelay | null)[]) => cellOf(loop, (l) => `${l.gc.minor.count}×/${l.gc.minor.max.toFixed(1)} · ${l.gc.major.count}×/${l.gc.major.max.toFixed(1)}`);

/** What the loop columns of the table mean. */
export const LOOP_LEGEND =
  "loop delay: a 1 ms timer's lateness (monitorEventLoopDelay resolution 1, less its 1 ms); 10 ms interval: monitorEventLoopDelay resolution 10 read raw (the figure of the earlier tables: the hold plus about 10 ms); CPU-held: the process's CPU time between two runs of a 1 ms timer, capped at the wall time between them (its own work's holds, hardly changed by the machine's load), p99/p999/max; main-thread held: the main thread's own time on a core between two runs of a 1 ms timer (/proc/thread-self/schedstat), p99/p999/max, · its wait for a core over the window (ms); idle: the delay p99 · the 10 ms interval p99 over 1 s of the idle server before the load; GC pauses during the load: scavenges count×/longest ms · major collections count×/longest ms";
/** The idle calibration: the delay's p99 · the 10 ms interval's p99. */
export const idleCell = (idle: (LoopDelay | null)[]) => cellOf(idle, (l) => `${l.p99.toFixed(1)} · ${l.interval10.p99.toFixed(1)}`);
