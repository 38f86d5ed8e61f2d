import { afterAll, describe, expect, it } from 'vitest';
import { auditLines } from '../../domain/audit.js';
import { openStore } from '../../adapters/store/open-store.js';
import type { ServerResponse } from '../../host/schemas.js';
import { PG_URL, dropSchema, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

/**
 * Many hosts on one PostgreSQL: N `steerlog serve` processes share S sessions, M clients prompt them with
 * `durable: true` (retrying the same messageId after any failure), and a killer SIGKILLs a random host mid-work and
 * starts a new one, K times. Afterwards every accepted messageId is in its session's log exactly once, no id is
 * admitted twice, every stream is contiguous and audits ok. By default N = 2, K = 2 (each host start costs a few
 * seconds); STEERLOG_HOSTS=3 STEERLOG_HOST_KILLS=20 runs the full count.
 */
const KILLS = Number(process.env['STEERLOG_HOST_KILLS'] ?? 2);
const HOSTS = Number(process.env['STEERLOG_HOSTS'] ?? 2);
const CLIENTS = 4;
const SESSIONS = ['mh-a', 'mh-b', 'mh-c'];

const schema = uniqueSchema('multihost');
const url = new URL(PG_URL);
url.searchParams.set('schema', schema);
const spec = url.toString();
const hosts: (ServeProcess | null)[] = [];
afterAll(async () => {
  for (const h of hosts) if (h) await h.stop().catch(() => {});
  for (const h of hosts) if (h) removeDir(h.gateDir);
  await dropSchema(schema);
}, 60_000);

const rpc = async (base: string, method: string, payload: unknown): Promise<ServerResponse | null> => {
  try {
    const res = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: `mh-${Math.random()}`, method, payload }),
      signal: AbortSignal.timeout(10_000),
    });
    return (await res.json()) as ServerResponse;
  } catch {
    return null; // the host is gone (killed) or did not answer
  }
};

describe('many hosts on one PostgreSQL', () => {
  it(`${HOSTS} hosts × ${CLIENTS} clients, ${KILLS} kill -9 takeovers: every accepted messageId exactly once, no fork, audit ok`, async () => {
    process.env['STEERLOG_ECHO_DELAY_MS'] = '3';
    const args = ['--model', 'echo', '--lease-ms', '600'];
    for (let i = 0; i < HOSTS; i++) hosts.push(await startServe(spec, args));
    const live = () => hosts.filter((h): h is ServeProcess => h !== null);
    const first = live()[0]!;
    for (const s of SESSIONS) expect((await rpc(first.url, 'session.create', { sessionId: s }))!.result.ok).toBe(true);

    const accepted = new Map<string, string>(); // messageId → session
    let busyAnswers = 0;
    let stop = false;
    const client = async (c: number) => {
      for (let k = 0; !stop; k++) {
        const sessionId = SESSIONS[(c + k) % SESSIONS.length]!;
        const messageId = `c${c}-${k}`;
        let target: string | undefined;
        // retry the same messageId until a host accepts it: a retry after a crash is idempotent
        for (let attempt = 0; attempt < 400; attempt++) {
          const hs = live();
          const base = target ?? hs[Math.floor(Math.random() * hs.length)]!.url;
          target = undefined;
          const r = await rpc(base, 'session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: messageId }], messageId, durable: true });
          if (r?.result.ok) {
            accepted.set(messageId, sessionId);
            break;
          }
          if (r && !r.result.ok && r.result.error.code === 'agent-busy') {
            busyAnswers++;
            const owner = (r.result.error.details as { owner?: { url?: string } }).owner;
            if (owner?.url && hs.some((h) => h.url === owner.url)) target = owner.url;
          }
          await new Promise((res) => setTimeout(res, 25));
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    for (let kill = 0; kill < KILLS; kill++) {
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 400));
      const i = Math.floor(Math.random() * hosts.length);
      const victim = hosts[i]!;
      hosts[i] = null;
      await victim.kill9();
      removeDir(victim.gateDir);
      hosts[i] = await startServe(spec, args);
    }
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(clients);
    for (let i = 0; i < hosts.length; i++) {
      expect(await hosts[i]!.stop()).toBe(0);
      removeDir(hosts[i]!.gateDir);
      hosts[i] = null;
    }

    const store = await openStore(spec);
    try {
      const admitted = new Map<string, number>();
      let interrupted = 0;
      for (const sessionId of SESSIONS) {
        const lines: string[] = [];
        let expected = 0;
        for await (const e of store.read(sessionId)) {
          expect(Number(e.revision)).toBe(expected++);
          lines.push(JSON.stringify({ seq: Number(e.revision), id: e.id, time: e.time, type: e.type, data: e.data }));
          if (e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'interrupted') interrupted++;
          if (e.type === 'agent/inbox/spliced') {
            const d = e.data as { inserted: { id: string }[]; outcome?: string };
            if (d.outcome === undefined) for (const m of d.inserted) admitted.set(m.id, (admitted.get(m.id) ?? 0) + 1);
          }
        }
        const report = auditLines(sessionId, lines);
        expect(report.errors, sessionId).toEqual([]);
        expect(report.ok).toBe(true);
      }
      expect(accepted.size).toBeGreaterThan(0);
      for (const [id, count] of admitted) expect(count, id).toBe(1);
      for (const id of accepted.keys()) expect(admitted.get(id), id).toBe(1);
      console.log(`multi-host: ${HOSTS} hosts, ${accepted.size} accepted prompts, ${KILLS} kills, ${interrupted} turns closed by crash repair, ${busyAnswers} agent-busy answers`);
    } finally {
      await store.close();
    }
  }, 600_000);
});
