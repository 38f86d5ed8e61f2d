/**
 * The console's audit endpoint on a long session: builds a JSONL store holding one session of about N events
 * (`STEERLOG_BENCH_EVENTS`, default 100_000: one queued prompt per turn, one step each), starts `steerlog serve`'s
 * HTTP app in process, and times `GET /api/audit/<id>` at the last seq, at the middle, and with one input's fate.
 * Usage: npx tsx bench/console-audit.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpServer } from '../adapters/http/server.js';
import { EchoModel } from '../adapters/model/echo/echo-model.js';
import { openStore } from '../adapters/store/open-store.js';
import { Host } from '../host/host.js';
import { silentLogger } from '../runtime/logger.js';
import { createRuntime } from '../runtime/runtime.js';
import type { NewEvent } from '../runtime/ports/event-store.js';
import { median } from './support/machine.js';

/** A session log of about `n` events: per turn, a queued prompt, its claim, one step with the prompt and a reply. */
export const longSessionEvents = (sessionId: string, n: number): NewEvent[] => {
  const out: NewEvent[] = [];
  let seq = 0;
  const push = (type: string, data: unknown) => out.push({ id: `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`, type, time: 1_700_000_000_000 + seq, data });
  push('session/created', { sessionId, createdAt: 1_700_000_000_000, kind: 'ordinary' });
  for (let turn = 1; out.length + 8 <= n; turn++) {
    const id = `p-${turn}`;
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } }] });
    push('turn/start', { turn });
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    push('step/start', { turn, step: 1 });
    push('user/message', { id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } });
    push('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] } });
    push('step/end', { turn, step: 1 });
    push('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return out;
};

const main = async () => {
  const n = Number(process.env['STEERLOG_BENCH_EVENTS'] ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-bench-console-'));
  try {
    const store = await openStore(`jsonl:${dir}`);
    const events = longSessionEvents('long-1', n);
    for (let i = 0; i < events.length; i += 5_000) await store.append('long-1', events.slice(i, i + 5_000), i === 0 ? 'no_stream' : BigInt(i - 1));
    const host = new Host({ runtime: createRuntime({ store, model: new EchoModel(), logger: silentLogger }), logger: silentLogger });
    const server = await startHttpServer({ host, port: 0, log: () => {} });
    const time = async (query: string) => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/audit/long-1${query}`);
      const body = await res.text();
      return { ms: Math.round(performance.now() - t0), kb: Math.round(body.length / 1024) };
    };
    const first = await time('');
    process.stdout.write(`first request (reads and folds everything) ${first.ms} ms\n`);
    const rows: Record<string, { ms: number; kb: number }[]> = { last: [], middle: [], fate: [] };
    for (let round = 0; round < 3; round++) {
      rows['last']!.push(await time(''));
      rows['middle']!.push(await time(`?at=${Math.floor(events.length / 2)}`));
      rows['fate']!.push(await time('?message=p-77'));
    }
    process.stdout.write(`${events.length} events\n`);
    for (const [k, v] of Object.entries(rows)) process.stdout.write(`${k.padEnd(7)} median ${median(v.map((x) => x.ms))} ms, ${v[0]!.kb} KiB\n`);
    await server.close();
    await host.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (import.meta.url === `file://${process.argv[1]}`) await main();
