// Preloaded into a benchmarked process (`node --import ./bench/support/loop-holds-probe.mjs …`), never into the
// product: records every long hold of the process's event loop, to be laid over a `--cpu-prof` profile of the same
// process (`bench/loop-holds.ts`). Without $STEERLOG_LOOP_HOLDS_FILE it does nothing; a `%p` in it is the pid (the
// profile's file name carries the pid too).
//
// A hold is the time between two runs of a 1 ms timer of the probe's own that is at least $STEERLOG_LOOP_HOLDS_MS
// (default 10 ms) of wall time or of the main thread's time on a core: [start, end] in µs of the monotonic clock
// (`process.hrtime`, the clock of the profile's timestamps), the process's CPU time (user + system, µs) and the main
// thread's own time on a core (µs, /proc/thread-self/schedstat; 0 off Linux) between the two runs. Beside them every GC entry of a
// PerformanceObserver (start in the same clock, duration, kind: 1 minor, 4 major, 8 incremental, 16 weak callbacks),
// and the count of the timer's runs (how many intervals the holds are out of). On each SIGUSR2 it appends one JSON
// line { runs, holds, gcs } to the file and starts over: `bench/host-http.ts` signals at the start, after the idle
// second, when the measured window opens and when it closes, so the fourth line is the measured window.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { appendFileSync, openSync, readSync } from 'node:fs';

const file = process.env.STEERLOG_LOOP_HOLDS_FILE?.replace('%p', String(process.pid));
if (file) {
  const threshold = Number(process.env.STEERLOG_LOOP_HOLDS_MS ?? 10) * 1000;
  const hr = () => Number(process.hrtime.bigint() / 1000n);
  // performance.now() (ms since the time origin) into the monotonic clock's µs
  const offsetUs = hr() - performance.now() * 1000;
  let holds = [];
  let gcs = [];
  let runs = 0;
  // the main thread's time on a core (ns, the first field of /proc/thread-self/schedstat; Linux), else 0
  let fd = null;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {}
  const buf = Buffer.alloc(96);
  const onCore = () => (fd === null ? 0 : Number(buf.toString('latin1', 0, readSync(fd, buf, 0, 96, 0)).split(' ')[0]));
  let last = hr();
  let lastCpu = process.cpuUsage();
  let lastCore = onCore();
  setInterval(() => {
    const now = hr();
    const core = onCore();
    runs++;
    // a hold: the wall time or the main thread's own time on a core reached the threshold
    if (now - last >= threshold || (core - lastCore) / 1000 >= threshold) {
      const c = process.cpuUsage();
      holds.push([last, now, c.user - lastCpu.user + (c.system - lastCpu.system), Math.round((core - lastCore) / 1000)]);
      lastCpu = c;
    } else lastCpu = process.cpuUsage();
    last = now;
    lastCore = core;
  }, 1).unref();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([Math.round(offsetUs + e.startTime * 1000), Math.round(e.duration * 1000), e.detail?.kind ?? e.kind]);
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    appendFileSync(file, `${JSON.stringify({ runs, holds, gcs })}\n`);
    holds = [];
    gcs = [];
    runs = 0;
  });
}
