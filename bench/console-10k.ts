/**
 * What the console's audit view asks the server for when it opens a 10,000-turn session (80,001 events, the
 * session `test/e2e/console-10k.browser.ts` writes), one request at a time, on `steerlog serve`'s HTTP app in
 * process over a JSONL store with its derived caches (as `serve` runs): the opening requests at once, cold without the
 * console's timeline cache and after a restart with it, then each request one at a time, cold and again (warm): the
 * time and the size of each answer (and for the opening requests, the process's CPU time from their start to each answer).
 * With `--sqlite`, the same over the SQLite store (`sqlite:<dir>/store.db`), which keeps no derived cache beside the
 * stream: a restart answers as a first start does (what the embedded default would cost the console if it were SQLite).
 * Usage: npx tsx bench/console-10k.ts [turns] [--sqlite]
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpServer } from '../adapters/http/server.js';
import { EchoModel } from '../adapters/model/echo/echo-model.js';
import { openStore } from '../adapters/store/open-store.js';
import { jsonlDerivedCache } from '../adapters/store/jsonl/derived-cache-files.js';
import { Host } from '../host/host.js';
import { silentLogger } from '../runtime/logger.js';
import { createRuntime } from '../runtime/runtime.js';
import type { NewEvent } from '../runtime/ports/event-store.js';
import { machineLine } from './support/machine.js';

/** The 10k-turn session of the browser suite: one turn a second, a queued prompt, its claim, one step, one answer. */
export const tenThousandTurns = (sessionId: string, turns: number): NewEvent[] => {
  const out: NewEvent[] = [];
  let seq = 0;
  const t0 = 1_700_000_000_000;
  const push = (type: string, data: unknown, dt: number) => out.push({ id: `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`, type, time: t0 + dt, data });
  push('session/created', { sessionId, createdAt: t0, kind: 'ordinary' }, 0);
  for (let turn = 1; turn <= turns; turn++) {
    const at = turn * 1000;
    const id = `p-${turn}`;
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: `prompt number ${turn}` }], source: { kind: 'user' } }] }, at);
    push('turn/start', { turn }, at + 100);
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }, at + 101);
    push('step/start', { turn, step: 1 }, at + 102);
    push('user/message', { id, role: 'user', content: [{ type: 'text', text: `prompt number ${turn}` }], source: { kind: 'user' } }, at + 103);
    push('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] } }, at + 600);
    push('step/end', { turn, step: 1 }, at + 601);
    push('turn/end', { turn, reason: { kind: 'completed' } }, at + 602);
  }
  return out;
};

/** The requests the audit view makes at once when it opens (the sessions list's overview beside them). */
const openingPaths = (id: string) => [`/api/timeline-summary/${id}?buckets=250`, `/api/timeline-turns/${id}?from=0&to=100`, `/api/overview?ids=${id}`];

const main = async () => {
  const sqlite = process.argv.includes('--sqlite');
  const turns = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 10_000);
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-bench-console-10k-'));
  const id = 'ten-thousand-turns';
  try {
    const store = await openStore(sqlite ? `sqlite:${join(dir, 'store.db')}` : `jsonl:${dir}`);
    const events = tenThousandTurns(id, turns);
    for (let i = 0; i < events.length; i += 5_000) await store.append(id, events.slice(i, i + 5_000), i === 0 ? 'no_stream' : BigInt(i - 1));
    // a server as `steerlog serve` starts one: the JSONL store's derived caches (derived/) kept for the console
    const start = () =>
      startHttpServer({
        host: new Host({ runtime: createRuntime({ store, model: new EchoModel(), logger: silentLogger }), logger: silentLogger }),
        port: 0,
        log: () => {},
        ...(sqlite ? {} : { console: { derivedCache: jsonlDerivedCache(dir) } }),
      });
    let server = await start();
    const time = async (path: string, t0 = performance.now()) => {
      const res = await fetch(`${server.url}${path}`);
      const body = await res.text();
      return `${String(Math.round(performance.now() - t0)).padStart(6)} ms ${String(Math.round(body.length / 1024)).padStart(6)} KiB  ${res.status} ${path}`;
    };
    const paths = [
      `/api/timeline-summary/${id}?buckets=250`,
      `/api/timeline-turns/${id}?from=0&to=100`,
      `/api/timeline-turns/${id}?from=9900&to=10000`,
      `/api/timeline-inputs/${id}?id=p-1&id=p-5000`,
      `/api/timeline-summary/${id}?from=${1_700_000_000_000 + 4_000_000}&to=${1_700_000_000_000 + 4_100_000}&buckets=250`,
      `/api/overview?ids=${id}`,
      `/api/chain/${id}`,
      `/api/audit/${id}`,
      `/api/timeline/${id}`,
      `/api/audit/${id}?at=40000`,
      `/api/context/${id}?step=${turns}.1`,
    ];
    const cacheWritten = async () => {
      if (sqlite) return;
      for (let i = 0; i < 600 && !existsSync(join(dir, 'derived')); i++) await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 600 && readdirSync(join(dir, 'derived')).some((n) => n.endsWith('.tmp')); i++) await new Promise((r) => setTimeout(r, 50));
    };
    const opening = async (label: string) => {
      // the opening requests at once, each timed from the same start (what the browser sees of the server), and the
      // process's CPU time until they are answered (what the server spent: on a loaded machine the wall time is that
      // divided by the share of a core the process gets)
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const cpuMs = () => {
        const c = process.cpuUsage(cpu0);
        return `CPU ${String(Math.round((c.user + c.system) / 1000)).padStart(5)} ms`;
      };
      const answers = await Promise.all(openingPaths(id).map(async (p) => `${await time(p, t0)}  (${cpuMs()} so far)`));
      process.stdout.write(`${label}:\n${answers.join('\n')}\n`);
      process.stdout.write(`${await time(`/api/chain/${id}`, t0)}  (the chain answer, which waits for the cache's check)\n`);
    };
    process.stdout.write(`${machineLine()}\n${events.length} events, ${sqlite ? 'SQLite store' : `JSONL store (${Math.round(statSync(join(dir, 'global.idx')).size / 80)} indexed)`}\n`);
    await opening('opening, cold, no cache (a first start)');
    await cacheWritten();
    await server.close();
    server = await start();
    await opening(sqlite ? 'opening, cold, a restart (no derived cache: the SQLite store keeps none)' : 'opening, cold, the cache beside the stream (a restart)');
    await server.close();
    server = await start();
    process.stdout.write(`one at a time, cold (a restart${sqlite ? '' : ', the cache beside the stream'}):\n`);
    for (const p of paths) process.stdout.write(`${await time(p)}\n`);
    process.stdout.write('warm:\n');
    for (const p of paths) process.stdout.write(`${await time(p)}\n`);
    await server.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (process.argv[1]?.endsWith('console-10k.ts')) await main();
