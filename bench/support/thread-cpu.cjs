// Preload (`node -r bench/support/thread-cpu.cjs …`): prints to stderr, at exit, the main thread's own CPU time (user +
// system, from /proc/self/task/<pid>/stat; Linux only) and the wall time since the preload, so an A/B of a command
// that runs a worker beside its main thread (the audit's chain check) can compare the thread that sets the wall time.
const { readFileSync, writeSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const t0 = process.hrtime.bigint();
  process.on('exit', () => {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks of 1/100 s (the kernel's USER_HZ)
    const cpu = (Number(fields[11]) + Number(fields[12])) / 100;
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    writeSync(2, `MAINTHREAD cpu ${cpu.toFixed(2)} wall ${wall.toFixed(2)}\n`);
  });
}
