/**
 * The heap a live session keeps per event it admits: 32 sessions on a JSONL store (`steerlog serve`'s runtime wiring:
 * write-behind window 200 ms, fold snapshots, the echo model), each sent `--prompts` queued prompts while its first
 * turn waits in its model call (so no turn ends and every run does the same work), then the heap used after two full
 * collections, less the heap before the prompts, over the events appended. Run against a built checkout's `dist/`
 * (this one by default), alternating with another (`--baseline <dir>`), each round in a fresh process:
 *
 *   npm run build && node --expose-gc --import tsx bench/host-retained-heap.ts [--prompts 300] [--rounds 2] [--baseline <dir>]
 *
 * Everything held counts: the live log's events, what waits for the store, the inbox's pending messages, the
 * observers' state. What is retained is traced at every major collection and copied by the scavenges that promote it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { argOf } from './support/bench-args.js';
import { machineLine } from './support/machine.js';

const SESSIONS = 32;

/** One measurement in this process, against the `dist/` of `root`: bytes retained per event. */
const measure = async (root: string, prompts: number): Promise<{ events: number; bytes: number }> => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const { createRuntime } = await load('runtime/runtime.js');
  const { openStore } = await load('adapters/store/open-store.js');
  const { EchoModel } = await load('adapters/model/echo/echo-model.js');
  const { createUserMessage } = await load('domain/message.js');
  const { silentLogger } = await load('runtime/logger.js');
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-retained-'));
  try {
    const store = await openStore(`jsonl:${dir}`);
    const runtime = createRuntime({ store, model: new EchoModel({ delayMs: 600_000 }), writeBatchDelayMs: 200, logger: silentLogger, resumeFromSnapshots: true });
    type A = { readonly sessionId: string; readonly events: readonly unknown[]; followup(m: unknown): void };
    const agents: A[] = Array.from({ length: SESSIONS }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
    const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await settle(300);
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const e0 = agents.reduce((n, a) => n + a.events.length, 0);
    for (let k = 0; k < prompts; k++) {
      for (const a of agents) a.followup(createUserMessage(`prompt ${k} of ${a.sessionId} with a few words`, { kind: 'user', rpcId: 'r' }));
      if (k % 20 === 19) await settle(50);
    }
    // past the write-behind window: what waited for the store is written
    await settle(600);
    gc();
    gc();
    const bytes = process.memoryUsage().heapUsed - before;
    return { events: agents.reduce((n, a) => n + a.events.length, 0) - e0, bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const prompts = Number(argOf('prompts', '300'));
const only = argOf('only', '');
if (only !== '') {
  const r = await measure(only, prompts);
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}
const self = resolve(fileURLToPath(new URL('..', import.meta.url)));
const baseline = argOf('baseline', '');
const rounds = Number(argOf('rounds', '2'));
console.log(machineLine());
console.log(`${SESSIONS} sessions × ${prompts} queued prompts, no turn ends; heap retained per event after two full collections`);
for (let i = 0; i < rounds; i++) {
  for (const [name, root] of baseline ? [['baseline', resolve(baseline)], ['this', self]] : [['this', self]]) {
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--only', root!, '--prompts', String(prompts)], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { events: number; bytes: number };
    console.log(`${name}: ${r.events} events, ${(r.bytes / 1e6).toFixed(2)} MB retained, ${(r.bytes / r.events).toFixed(0)} B per event`);
  }
}
