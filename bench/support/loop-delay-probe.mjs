// Preloaded into a benchmarked process (`node --import ./bench/support/loop-delay-probe.mjs …`), never into the
// product: measures the process's own event-loop delay with perf_hooks.monitorEventLoopDelay and, on each SIGUSR2,
// appends one JSON line to $STEERLOG_LOOP_DELAY_FILE ({ p50, p99, p999, max, mean, count } in ms, and cpuMs, the
// process's CPU time (user + system), since the previous SIGUSR2) and resets the histogram. Without the variable it does nothing. Plain JavaScript so it loads the same into
// any build of steerlog (the baseline's dist as well as this one's) without a TypeScript loader.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { appendFileSync } from 'node:fs';

const file = process.env.STEERLOG_LOOP_DELAY_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const ms = (ns) => Number((ns / 1e6).toFixed(2));
  let cpu = process.cpuUsage();
  process.on('SIGUSR2', () => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const line = { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), p999: ms(h.percentile(99.9)), max: ms(h.max), mean: ms(h.mean), count: h.count, cpuMs: Math.round((used.user + used.system) / 1000) };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    h.reset();
  });
}
