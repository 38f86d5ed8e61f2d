/**
 * The CPU a cold `session.history` page costs in `steerlog serve`, builds side by side (issue 29, item 5):
 *
 *   npx tsx bench/history-cpu.ts --dir <store dir> --session <id> [--build <tree> ...] [--rounds N] [--after a,b]
 *
 * For each round, each build (this tree and every `--build`, interleaved) and each `after` (default: 1000 and the
 * session's last 200 events): a fresh `serve` of the store (fold snapshots as they are on disk), its first
 * `session.list` (as the console asks first), then the page of 200 events after `after`, twice. Printed per page:
 * the wall time and the CPU time of the serve process across it (its main thread, and all its threads), read from
 * `/proc/<pid>/task/<tid>/schedstat` — figures a loaded machine disturbs much less than wall times — and the load
 * average. Linux only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine } from './support/machine.js';
import { serveStore } from './support/steerlog-processes.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const argsOf = (name: string): string[] => process.argv.flatMap((a, i) => (a === `--${name}` && process.argv[i + 1] !== undefined ? [process.argv[i + 1]!] : []));
const argOf = (name: string, fallback: string): string => argsOf(name)[0] ?? fallback;

const dir = resolve(argOf('dir', ''));
const sessionId = argOf('session', 'long-500000');
const rounds = Number(argOf('rounds', '3'));
const builds = [ROOT, ...argsOf('build').map((b) => resolve(b))];

/** CPU ms of a process so far: its main thread, and all its threads. */
const cpuOf = (pid: number): { main: number; all: number } => {
  const ns = (path: string): number => Number(readFileSync(path, 'utf8').split(' ')[0]);
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      all += ns(`/proc/${pid}/task/${task}/schedstat`);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return { main: ns(`/proc/${pid}/schedstat`) / 1e6, all: all / 1e6 };
};

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

console.log(`# history-cpu — machine: ${machineLine()}; ${new Date().toISOString()}; store ${dir}, session ${sessionId}`);
console.log('round | build | after | load (1 min) | cold: wall / main CPU / all CPU | again: wall / main CPU / all CPU');
for (let round = 1; round <= rounds; round++) {
  for (const build of builds) {
    const afters = argsOf('after').flatMap((a) => a.split(',')).map(Number);
    for (const after of afters.length > 0 ? afters : [1000, -200]) {
      const host = await serveStore(resolve(build, 'bin/steerlog.js'), `jsonl:${dir}`);
      try {
        const list = await host.rpc('session.list', {});
        const row = (list.body.result?.value as { sessions: { sessionId: string; lastSeq?: number }[] }).sessions.find((r) => r.sessionId === sessionId);
        if (row?.lastSeq === undefined) throw new Error(`no session ${sessionId} in ${dir}`);
        const from = after < 0 ? row.lastSeq + after : after;
        await settle(100);
        const cells: string[] = [];
        for (let ask = 0; ask < 2; ask++) {
          const before = cpuOf(host.pid);
          const res = await host.rpc('session.history', { sessionId, after: from, limit: 200 });
          await settle(50);
          const cpu = cpuOf(host.pid);
          if ((res.body.result?.value as { events?: unknown[] } | undefined)?.events?.length !== 200) throw new Error(`history failed: ${JSON.stringify(res.body).slice(0, 300)}`);
          cells.push(`${res.ms.toFixed(1)} / ${(cpu.main - before.main).toFixed(1)} / ${(cpu.all - before.all).toFixed(1)} ms`);
        }
        console.log(`${round} | ${build} | ${from} | ${loadavg()[0]!.toFixed(2)} | ${cells.join(' | ')}`);
      } finally {
        await host.stop();
      }
    }
  }
}
