/**
 * CPU time read the way the benchmarks compare work on a loaded machine: the calling thread's own time on a core
 * (Linux: `/proc/thread-self/schedstat`, ns) and the whole process's (`process.cpuUsage`, every thread, V8's helper
 * threads included, µs).
 */
import { readFileSync } from 'node:fs';

/** The calling thread's CPU time so far, in ns (Linux only: `/proc/thread-self/schedstat`). */
export const threadCpuNs = (): number => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);

/** This process's CPU time so far (user + system, every thread), in µs. */
export const processCpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Another process's CPU time so far (user + system), in ms, from `/proc/<pid>/stat` (Linux; the kernel counts in
 * ticks of 10 ms). The fields are read after the command name's closing parenthesis, since the name may hold spaces.
 */
export const pidCpuMs = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
