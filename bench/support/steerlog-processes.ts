/**
 * Spawning the built `steerlog` for the store-scale benchmarks: a CLI command's wall time, a store's open time in a
 * fresh process, and a `steerlog serve` to time and ask over HTTP.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A duration for a table: ms below a second, else seconds. */
export const ms = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`);

/** Runs `node <cli> ...args` to its end: its wall time (node start included), status and output. */
export const wallOf = (cli: string, args: string[]): { ms: number; status: number | null; out: string } => {
  const t = performance.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { ms: performance.now() - t, status: r.status, out: r.stdout + r.stderr };
};

/** In a fresh node process: the in-process time of `openStore(spec, {readOnly: true})`. */
export const openTimeOf = (build: string, spec: string): number => {
  const script = `import { openStore } from ${JSON.stringify(join(build, 'dist/adapters/store/open-store.js'))};
const t = performance.now(); const s = await openStore(${JSON.stringify(spec)}, { readOnly: true }); const d = performance.now() - t; await s.close(); console.log(d);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout.trim());
};

/** A running `steerlog serve`. */
export interface Serve {
  readonly url: string;
  readonly pid: number;
  readonly startMs: number;
  rpc(method: string, payload: unknown): Promise<{ ms: number; body: { result?: { ok?: boolean; value?: unknown } } }>;
  get(path: string): Promise<{ ms: number; bytes: number; status: number }>;
  rss(): number;
  stop(): Promise<void>;
}

/** `fetch`, once more when a kept-alive connection was reset before an answer (the server closed it idle as it was reused). */
const fetchOnce = async (url: string, init?: RequestInit): Promise<Response> => {
  try {
    return await fetch(url, init);
  } catch (e) {
    if ((e as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw e;
    return fetch(url, init);
  }
};

/** Starts `steerlog serve --store <spec>` (echo model, port 0) and resolves once it listens, with the time that took. */
export const serveStore = async (cli: string, spec: string): Promise<Serve> => {
  const t = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--store', spec, '--port', '0', '--model', 'echo'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, STEERLOG_ECHO_DELAY_MS: '0' } });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((res, rej) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${err}`)));
  });
  const startMs = performance.now() - t;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url,
    pid: child.pid!,
    startMs,
    rpc: async (method, payload) => {
      const t1 = performance.now();
      const res = await fetchOnce(`${url}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'client-request', rpcId: 'b', method, payload }) });
      const body = (await res.json()) as { result?: { ok?: boolean; value?: unknown } };
      return { ms: performance.now() - t1, body };
    },
    get: async (path) => {
      const t1 = performance.now();
      const res = await fetchOnce(`${url}${path}`);
      const text = await res.text();
      return { ms: performance.now() - t1, bytes: text.length, status: res.status };
    },
    rss: () => {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : Number.NaN;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
};

