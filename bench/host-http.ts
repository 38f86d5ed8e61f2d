/**
 * The Host under load over HTTP: C clients × P prompts against real `steerlog serve` processes (echo model without
 * delay), for `durable: false` and `durable: true`, on JSONL and PostgreSQL, and with two hosts sharing PostgreSQL.
 * Each client owns one session and sends its prompts one after another (an HTTP keep-alive connection pool).
 * Reports admissions/s and the p50/p99 receipt latency; afterwards reads every store back and checks that every
 * accepted messageId was admitted exactly once.
 *   npx tsx bench/host-http.ts [clients=64] [prompts=200]
 */
import { openStore } from '../adapters/store/open-store.js';
import type { ServerResponse } from '../host/schemas.js';
import { PG_URL, dropSchema, uniqueSchema } from '../test/adapters/store/postgres/pg-test-support.js';
import { removeDir, startServe, type ServeProcess } from '../test/e2e/support/serve-process.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineLine } from './support/machine.js';

const CLIENTS = Number(process.argv[2] ?? 64);
const PROMPTS = Number(process.argv[3] ?? 200);
process.env['STEERLOG_ECHO_DELAY_MS'] = '0';

const rpc = async (base: string, method: string, payload: unknown): Promise<ServerResponse> => {
  const res = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: 'b', method, payload }),
  });
  return (await res.json()) as ServerResponse;
};
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface Run {
  readonly label: string;
  readonly spec: string;
  readonly hosts: number;
  readonly durable: boolean;
}

const runOnce = async (run: Run, tag: string) => {
  const hosts: ServeProcess[] = [];
  for (let i = 0; i < run.hosts; i++) hosts.push(await startServe(run.spec, ['--model', 'echo', '--write-batch-ms', '200']));
  const sessions = Array.from({ length: CLIENTS }, (_, c) => `${tag}-s${c}`);
  // each session is created on (and so owned by) one host; its client talks to that host
  await Promise.all(sessions.map((s, c) => rpc(hosts[c % hosts.length]!.url, 'session.create', { sessionId: s })));
  const latencies: number[] = [];
  const accepted = new Map<string, string>();
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    sessions.map(async (sessionId, c) => {
      const base = hosts[c % hosts.length]!.url;
      for (let k = 0; k < PROMPTS; k++) {
        const messageId = `${tag}-c${c}-${k}`;
        const t0 = performance.now();
        const r = await rpc(base, 'session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: messageId }], messageId, durable: run.durable });
        latencies.push(performance.now() - t0);
        if (r.result.ok) accepted.set(messageId, sessionId);
        else refused++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const h of hosts) {
    await h.stop();
    removeDir(h.gateDir);
  }
  // every accepted id exactly once in the logs
  const store = await openStore(run.spec);
  const counts = new Map<string, number>();
  try {
    for (const s of sessions)
      for await (const e of store.read(s))
        if (e.type === 'agent/inbox/spliced' && (e.data as { outcome?: string }).outcome === undefined)
          for (const m of (e.data as { inserted: { id: string }[] }).inserted) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  } finally {
    await store.close();
  }
  const exactlyOnce = [...accepted.keys()].every((id) => counts.get(id) === 1) && [...counts.values()].every((n) => n === 1);
  latencies.sort((a, b) => a - b);
  return { seconds, admissions: accepted.size, refused, rate: accepted.size / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), exactlyOnce };
};

const jsonlDir = mkdtempSync(join(tmpdir(), 'steerlog-bench-host-'));
const schema = uniqueSchema('benchhost');
const pg = new URL(PG_URL);
pg.searchParams.set('schema', schema);
const runs: Run[] = [
  { label: 'JSONL, 1 host, durable:false', spec: `jsonl:${jsonlDir}`, hosts: 1, durable: false },
  { label: 'JSONL, 1 host, durable:true', spec: `jsonl:${jsonlDir}`, hosts: 1, durable: true },
  { label: 'PostgreSQL, 1 host, durable:false', spec: pg.toString(), hosts: 1, durable: false },
  { label: 'PostgreSQL, 1 host, durable:true', spec: pg.toString(), hosts: 1, durable: true },
  { label: 'PostgreSQL, 2 hosts, durable:false', spec: pg.toString(), hosts: 2, durable: false },
  { label: 'PostgreSQL, 2 hosts, durable:true', spec: pg.toString(), hosts: 2, durable: true },
];
console.log(machineLine());
console.log(`${CLIENTS} clients × ${PROMPTS} prompts each, echo model (no delay), write-behind window 200 ms`);
console.log('| run | admissions | admissions/s | p50 receipt | p99 receipt | every accepted id exactly once |');
console.log('|---|---|---|---|---|---|');
try {
  for (const [i, run] of runs.entries()) {
    const r = await runOnce(run, `r${i}`);
    console.log(`| ${run.label} | ${r.admissions}${r.refused ? ` (${r.refused} refused)` : ''} | ${r.rate.toFixed(0)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.exactlyOnce ? 'yes' : 'NO'} |`);
  }
} finally {
  removeDir(jsonlDir);
  await dropSchema(schema);
}
