import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from '../../../host/schemas.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const GATED_MODEL = join(ROOT, 'test/e2e/support/gated-model.ts');

/** A `steerlog serve` child process (from source through tsx) with the gated model. */
export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly gateDir: string;
  readonly stderr: () => string;
  rpc(method: string, payload: unknown, init?: { rpcId?: string; headers?: Record<string, string> }): Promise<ServerResponse>;
  /** Resolves once a step holding `[hold:tag]` is inside the model. */
  started(tag: string): Promise<void>;
  release(tag: string): void;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash) and wait for exit. */
  kill9(): Promise<void>;
}

let rpcs = 0;
const poll = async (check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

export const startServe = async (store: string, extraArgs: readonly string[] = [], gateDir?: string): Promise<ServeProcess> => {
  const gates = gateDir ?? mkdtempSync(join(tmpdir(), 'steerlog-gate-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'adapters/cli/main.ts'), 'serve', '--store', store, '--port', '0', '--model', `module:${GATED_MODEL}`, '--write-batch-ms', '5', ...extraArgs],
    { cwd: ROOT, env: { ...process.env, STEERLOG_GATE_DIR: gates }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await Promise.race([
    poll(() => /listening on (http:\/\/\S+)/.test(out), 'serve to listen'),
    exited.then((code) => {
      throw new Error(`serve exited ${code}: ${err}`);
    }),
  ]);
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return {
    url,
    child,
    gateDir: gates,
    stderr: () => err,
    rpc: async (method, payload, init = {}) => {
      const res = await fetch(`${url}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...init.headers },
        body: JSON.stringify({ type: 'client-request', rpcId: init.rpcId ?? `e2e-${++rpcs}`, method, payload }),
      });
      return (await res.json()) as ServerResponse;
    },
    started: (tag) => poll(() => existsSync(join(gates, `started-${tag}`)), `step [hold:${tag}]`),
    release: (tag) => writeFileSync(join(gates, `release-${tag}`), ''),
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
};

export const removeDir = (dir: string): void => rmSync(dir, { recursive: true, force: true });
