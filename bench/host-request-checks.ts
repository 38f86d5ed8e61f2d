/**
 * The checks of one `session.prompt` request as `bench:host` sends it (the envelope, then the payload), by zod and by
 * the hand-written fast paths (host/schemas/fast-requests.ts), and the answer's headers built as a Headers object (what
 * reading `c.res.headers` costs) against none: CPU µs per request (`process.cpuUsage`, the minimum of interleaved
 * rounds, one process, so the machine's load inflates both sides alike).
 *
 *   npx tsx bench/host-request-checks.ts [requests per round] [rounds]
 */
import { ClientRequestSchema, fastClientRequest, fastPromptRequest, SessionPromptRequestSchema } from '../host/schemas.js';
import { machineLine } from './support/machine.js';

const N = Number(process.argv[2] ?? 50_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const bodies = Array.from({ length: 1024 }, (_, i) =>
  JSON.stringify({ type: 'client-request', rpcId: 'b', method: 'session.prompt', payload: { sessionId: `r1-s${i % 32}`, mode: 'queue', content: [{ type: 'text', text: `r1-c${i % 64}-${i}` }], messageId: `r1-c${i % 64}-${i}`, durable: false } }),
);
const values = bodies.map((b) => JSON.parse(b) as unknown);

let sink = 0;
const cpuUs = (f: () => void): number => {
  const t0 = process.cpuUsage();
  f();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / N;
};
const parts: Record<string, () => void> = {
  'zod: envelope + payload': () => {
    for (let i = 0; i < N; i++) {
      const e = ClientRequestSchema.safeParse(values[i & 1023]);
      if (e.success && SessionPromptRequestSchema.safeParse(e.data.payload).success) sink++;
    }
  },
  'fast: envelope + payload': () => {
    for (let i = 0; i < N; i++) {
      const e = fastClientRequest(values[i & 1023]);
      if (e !== null && fastPromptRequest(e.payload) !== null) sink++;
    }
  },
  'answer headers as a Headers object (c.res.headers)': () => {
    for (let i = 0; i < N; i++) {
      const h = new Headers({ 'content-type': 'application/json' });
      h.set('x-request-id', 'a9f0c2de-8c1e-4d6e-9f1a-0d6e2b7c5a11');
      const out: Record<string, string> = {};
      for (const [k, v] of h) out[k] = v;
      sink += Object.keys(out).length;
    }
  },
  'answer headers as a plain object': () => {
    for (let i = 0; i < N; i++) {
      const out = { 'content-type': 'application/json', 'x-request-id': 'a9f0c2de-8c1e-4d6e-9f1a-0d6e2b7c5a11' };
      for (const k in out) sink += k.length;
    }
  },
};
const best = new Map<string, number>();
for (let r = 0; r < ROUNDS; r++) for (const [name, f] of Object.entries(parts)) best.set(name, Math.min(best.get(name) ?? Infinity, cpuUs(f)));
console.log(machineLine());
console.log(`load average: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}; ${N} requests per round, min of ${ROUNDS} rounds`);
console.log('| part | CPU µs per request |');
console.log('|---|---|');
for (const [name, us] of best) console.log(`| ${name} | ${us.toFixed(2)} |`);
if (sink < 0) console.log(sink);
