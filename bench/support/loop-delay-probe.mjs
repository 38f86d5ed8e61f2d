// Preloaded into a benchmarked process (`node --import ./bench/support/loop-delay-probe.mjs …`), never into the
// product: measures the process's own event loop and, on each SIGUSR2, appends one JSON line to
// $STEERLOG_LOOP_DELAY_FILE and resets its readings. Without the variable it does nothing. Plain JavaScript so it
// loads the same into any build of steerlog (the baseline's dist as well as this one's) without a TypeScript loader.
//
// perf_hooks.monitorEventLoopDelay records the time between two runs of its own repeating timer, not how late the
// timer ran: an idle process reads the resolution itself (about 10 ms at `resolution: 10`). So the probe keeps two:
// - `interval10`: `monitorEventLoopDelay({ resolution: 10 })` as read before (p50/p99/p999/max/mean, ms), the old
//   figure, kept to compare with the earlier tables;
// - the delay: `monitorEventLoopDelay({ resolution: 1 })` less its 1 ms resolution (p50/p99/p999/max/mean, ms,
//   floored at 0): how late a timer due every millisecond ran, which is, within a millisecond, how long the loop was
//   held before it could run it.
// And, from a PerformanceObserver of 'gc' entries: the garbage collector's pauses of the reading (count, total and
// longest, ms), minor (scavenges of the young generation) and major (mark-sweep-compact, incremental marking) apart.
// And `cpuHeld` (p50/p99/p999/max, ms): a 1 ms timer of the probe's own reads the process's CPU time (user + system)
// at each run; what the process spent between two runs, capped at the wall time between them, is how long its own
// work held the loop then. Unlike the delay it hardly grows when other processes take the machine's cores (time the
// process waits for a core is not CPU time), so it compares builds on a loaded machine; it counts the process's other
// threads too (GC helpers, the libuv pool), hence the cap.
// And `mainHeld` (p50/p99/p999/max, ms; Linux only, else absent): the main thread's own time on a core between two
// runs of the same timer, from /proc/thread-self/schedstat (its first field, read with one pread of an fd opened at
// start, about 3 µs): the loop's holds by the main thread's work alone, without the GC helper threads and the libuv
// pool that `cpuHeld` counts, and without the time the thread waited for a core (schedstat's second field, summed
// over the reading as `runWaitMs`).
// Each line also carries cpuMs, the process's CPU time (user + system) since the previous SIGUSR2.
import { monitorEventLoopDelay, createHistogram, PerformanceObserver, constants } from 'node:perf_hooks';
import { appendFileSync, openSync, readSync } from 'node:fs';

const file = process.env.STEERLOG_LOOP_DELAY_FILE;
if (file) {
  const fine = monitorEventLoopDelay({ resolution: 1 });
  const coarse = monitorEventLoopDelay({ resolution: 10 });
  fine.enable();
  coarse.enable();
  const ms = (ns) => Number((ns / 1e6).toFixed(2));
  // the CPU time between two runs of a 1 ms timer, capped at the wall time between them (recorded in µs)
  const held = createHistogram();
  let lastCpu = process.cpuUsage();
  let lastWall = performance.now();
  setInterval(() => {
    const now = performance.now();
    const c = process.cpuUsage();
    const cpuUs = c.user - lastCpu.user + (c.system - lastCpu.system);
    held.record(Math.max(1, Math.round(Math.min(cpuUs, (now - lastWall) * 1000))));
    lastCpu = c;
    lastWall = now;
  }, 1).unref();
  // the main thread's on-core and run-queue-wait nanoseconds (/proc/thread-self/schedstat), or null off Linux
  let schedFd = null;
  try {
    schedFd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {}
  const schedBuf = Buffer.alloc(96);
  const sched = () => {
    const n = readSync(schedFd, schedBuf, 0, 96, 0);
    const [run, wait] = schedBuf.toString('latin1', 0, n).split(' ');
    return [Number(run), Number(wait)];
  };
  const mainHeld = createHistogram();
  let lastSched = schedFd === null ? null : sched();
  let runWaitNs = 0;
  if (schedFd !== null) {
    setInterval(() => {
      const now = sched();
      mainHeld.record(Math.max(1, Math.round((now[0] - lastSched[0]) / 1000)));
      runWaitNs += now[1] - lastSched[1];
      lastSched = now;
    }, 1).unref();
  }
  const heldMs = (us) => Number((us / 1e3).toFixed(2));
  /** The fine histogram's figures less its resolution: the lateness of the 1 ms timer. */
  const late = (ns) => Math.max(0, ms(ns - 1e6));
  const gcEmpty = () => ({ minor: { count: 0, ms: 0, max: 0 }, major: { count: 0, ms: 0, max: 0 } });
  let gc = gcEmpty();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail?.kind ?? e.kind;
      const g = kind === constants.NODE_PERFORMANCE_GC_MINOR ? gc.minor : kind === constants.NODE_PERFORMANCE_GC_WEAKCB ? null : gc.major;
      if (!g) continue;
      g.count++;
      g.ms += e.duration;
      if (e.duration > g.max) g.max = e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const round = (g) => ({ count: g.count, ms: Number(g.ms.toFixed(1)), max: Number(g.max.toFixed(2)) });
  let cpu = process.cpuUsage();
  process.on('SIGUSR2', () => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const line = {
      p50: late(fine.percentile(50)),
      p99: late(fine.percentile(99)),
      p999: late(fine.percentile(99.9)),
      max: late(fine.max),
      mean: late(fine.mean),
      count: fine.count,
      interval10: { p50: ms(coarse.percentile(50)), p99: ms(coarse.percentile(99)), p999: ms(coarse.percentile(99.9)), max: ms(coarse.max), mean: ms(coarse.mean), count: coarse.count },
      cpuHeld: { p50: heldMs(held.percentile(50)), p99: heldMs(held.percentile(99)), p999: heldMs(held.percentile(99.9)), max: heldMs(held.max) },
      ...(schedFd !== null ? { mainHeld: { p50: heldMs(mainHeld.percentile(50)), p99: heldMs(mainHeld.percentile(99)), p999: heldMs(mainHeld.percentile(99.9)), max: heldMs(mainHeld.max) }, runWaitMs: Math.round(runWaitNs / 1e6) } : {}),
      gc: { minor: round(gc.minor), major: round(gc.major) },
      cpuMs: Math.round((used.user + used.system) / 1000),
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    fine.reset();
    coarse.reset();
    held.reset();
    mainHeld.reset();
    runWaitNs = 0;
    gc = gcEmpty();
  });
}
