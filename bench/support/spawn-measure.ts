import { spawn } from 'node:child_process';

/** What one spawned command cost: wall seconds, peak RSS (from GNU time), its stdout. */
export interface Spawned {
  readonly seconds: number;
  readonly peakRssMiB: number;
  readonly stdout: string;
  readonly code: number | null;
}

/** Runs `node <args>` under /usr/bin/time -f %M (peak RSS in KiB, printed last on stderr) and times it. */
export const spawnMeasured = (args: readonly string[]): Promise<Spawned> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      const kib = Number(err.trim().split('\n').at(-1));
      if (!Number.isFinite(kib)) return reject(new Error(`no peak RSS from /usr/bin/time: ${err.slice(-500)}`));
      resolve({ seconds, peakRssMiB: kib / 1024, stdout: Buffer.concat(out).toString(), code });
    });
  });
