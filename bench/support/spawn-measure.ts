import { spawn } from 'node:child_process';

/** What one spawned command cost: wall seconds, CPU seconds (user + system) and peak RSS (from GNU time), its stdout. */
export interface Spawned {
  readonly seconds: number;
  /** User + system CPU time: far less moved by other processes' load than the wall time. */
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
  readonly stdout: string;
  readonly code: number | null;
}

/** Runs `node <args>` under /usr/bin/time -f '%M %U %S' (peak RSS in KiB, user and system CPU seconds, printed last on stderr) and times it. */
export const spawnMeasured = (args: readonly string[]): Promise<Spawned> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%M %U %S', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      const [kib, user, sys] = (err.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
      if (!Number.isFinite(kib) || !Number.isFinite(user) || !Number.isFinite(sys)) return reject(new Error(`no peak RSS and CPU time from /usr/bin/time: ${err.slice(-500)}`));
      resolve({ seconds, cpuSeconds: user! + sys!, peakRssMiB: kib! / 1024, stdout: Buffer.concat(out).toString(), code });
    });
  });
