import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * How the export worker thread is scheduled. `low` asks Linux to run the worker only on CPU time no other thread of
 * the machine wants: the `SCHED_IDLE` policy on that thread alone (any thread that wakes takes its core at once), or,
 * where that policy cannot be set, nice 19 (which still lets the worker finish its time slice first: on the
 * scheduler of current kernels a waking thread waits for it). Node has no call that sets a scheduling policy, so the
 * worker runs `chrt -i` (`--idle`) on its own thread id once, at its start (util-linux's `chrt`, looked for at fixed paths,
 * never through `PATH`, and never through a shell). A thread cannot leave `SCHED_IDLE` or a higher nice value without
 * privilege: the worker keeps what it is given until it stops.
 */

/** What the export's thread got, as `OtelTelemetry.exportScheduling` tells it. */
export interface ExportScheduling {
  /** Where the spans are derived, encoded and sent: a worker thread, or the thread that created the telemetry. */
  readonly thread: 'worker' | 'caller';
  /**
   * The worker thread's scheduling: `idle` (Linux `SCHED_IDLE`, nice 19), `nice-19` (the normal policy at nice 19),
   * `normal` (the process's priority, as asked, or on the caller's thread).
   */
  readonly policy: 'idle' | 'nice-19' | 'normal';
  /** Why `low` was not applied as asked on Linux (no `chrt`; `chrt` or the kernel refused). */
  readonly note?: string;
}

/** Where the worker looks for util-linux's `chrt` (no `PATH` lookup: the process's `PATH` is not trusted here). */
export const CHRT_PATHS: readonly string[] = ['/usr/bin/chrt', '/bin/chrt', '/usr/local/bin/chrt'];
/** Linux's `SCHED_IDLE` policy number, as `/proc/<tid>/stat` gives a thread's policy. */
const SCHED_IDLE = 5;
/** How long `chrt` may take before the worker gives up on it (ms). */
const CHRT_TIMEOUT_MS = 5000;

/** This thread's id (Linux: `/proc/thread-self` links to `<pid>/task/<tid>`). */
const threadId = (): number => Number(readlinkSync('/proc/thread-self').split('/').pop());

/** The scheduling policy and nice value of thread `tid` of this process (fields 41 and 19 of its `stat`). */
export const threadSchedule = (tid: number | 'self' = 'self'): { readonly policy: number; readonly nice: number } => {
  const stat = readFileSync(tid === 'self' ? '/proc/thread-self/stat' : `/proc/self/task/${tid}/stat`, 'utf8');
  // the fields after the command name (which may hold spaces and parentheses): field 3 is the first of them
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) };
};

/** A one-line reason from a failed `chrt`: its exit status and the first line of what it wrote. */
const chrtFailure = (e: unknown): string => {
  const err = e as { status?: number | null; signal?: string | null; stderr?: Buffer | string; code?: string };
  const said = String(err.stderr ?? '').trim().split('\n')[0] ?? '';
  if (err.code !== undefined) return `chrt could not run (${err.code})`;
  return `chrt failed (${err.signal ?? `exit ${String(err.status)}`}${said === '' ? '' : `: ${said}`})`;
};

/**
 * Lowers the calling thread's priority as `low` asks (see the file's comment): nice 19, then `SCHED_IDLE` through the
 * first `chrt` of `chrtPaths` that exists, the policy read back from `/proc` rather than trusted from `chrt`'s exit
 * status. Returns what was applied; never throws (the thread keeps what it could get, and the note says why).
 */
export const lowerThisThread = (chrtPaths: readonly string[] = CHRT_PATHS): ExportScheduling => {
  // elsewhere the option does nothing, as documented: not a failure to report
  if (process.platform !== 'linux') return { thread: 'worker', policy: 'normal' };
  let tid: number;
  try {
    tid = threadId();
    setPriority(tid, 19);
  } catch (e) {
    return { thread: 'worker', policy: 'normal', note: `the thread's priority could not be lowered (${e instanceof Error ? e.message : String(e)})` };
  }
  const chrt = chrtPaths.find((p) => existsSync(p));
  if (chrt === undefined) return { thread: 'worker', policy: 'nice-19', note: `SCHED_IDLE not set: no chrt at ${chrtPaths.join(', ')} (util-linux)` };
  let note: string | undefined;
  try {
    execFileSync(chrt, ['-i', '-p', '0', String(tid)], { stdio: ['ignore', 'ignore', 'pipe'], timeout: CHRT_TIMEOUT_MS, env: { LC_ALL: 'C' } });
  } catch (e) {
    note = `SCHED_IDLE not set: ${chrtFailure(e)}`;
  }
  const now = threadSchedule();
  if (now.policy === SCHED_IDLE) return { thread: 'worker', policy: 'idle' };
  return { thread: 'worker', policy: now.nice === 19 ? 'nice-19' : 'normal', note: note ?? `SCHED_IDLE not set: ${chrt} succeeded, yet the thread's policy is ${now.policy}` };
};
