import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { openPostgresOwnership } from '../../../adapters/lease/postgres-ownership.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { auditLines } from '../../../domain/audit.js';
import { Host } from '../../../host/host.js';
import type { CallResult } from '../../../host/host-types.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { until } from '../../runtime/children/support.js';
import { PG_URL, describePg, dropSchema, uniqueSchema } from '../store/postgres/pg-test-support.js';

/**
 * Live session leases (PostgreSQL): while host A's lease on a session is live, host B answers `agent-busy` with A as
 * the owner and takes nothing; once the lease has expired (the database clock decides: here its `expires_at` is
 * moved into the past, as a host that stopped renewing leaves it), B takes the session over. A, fenced by the stream,
 * lets the session go: its next write is refused, its live session is dropped, it closes cleanly, and the log is
 * one unforked, valid history. Leases last a minute, so no renewal runs while the test does.
 */
const schema = uniqueSchema('lease');
const url = new URL(PG_URL);
url.searchParams.set('schema', schema);
const spec = url.toString();
afterAll(() => dropSchema(schema));

interface TestHost {
  readonly host: Host;
  readonly store: EventStore;
  call(method: string, payload: unknown): Promise<CallResult>;
  close(): Promise<void>;
}

const startHost = async (name: 'A' | 'B', block: number, leaseMs = 60_000): Promise<TestHost> => {
  const store = await openStore(spec);
  const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: () => `ok from ${name}` }), clock: steppingClock(), ids: sequentialIds(block), logger: silentLogger, writeBatchDelayMs: 0 });
  const ownership = await openPostgresOwnership({ url: spec, hostId: `host-${name}`, leaseMs, advertise: () => `http://host-${name.toLowerCase()}.test` });
  let n = 0;
  const host = new Host({ runtime, ownership, logger: silentLogger, newMessageId: () => `${name}-prompt-${++n}` });
  let rpc = 0;
  let closed: Promise<void> | undefined;
  return {
    host,
    store,
    call: (method, payload) => host.call(method, payload, { rpcId: `${name}-rpc-${++rpc}`, principal: { id: 'local' } }),
    close: () =>
      (closed ??= (async () => {
        await host.close(); // releases its leases and closes the ownership port
        await store.close();
      })()),
  };
};

const prompt = (text: string, messageId: string, sessionId = 's') => ({ sessionId, mode: 'queue', content: [{ type: 'text', text }], messageId, durable: true });

/** The lease row of a session, as the database holds it. */
const leaseRow = async (db: pg.Client, sessionId = 's'): Promise<{ host_id: string; live: boolean } | undefined> =>
  (await db.query<{ host_id: string; live: boolean }>(`SELECT host_id, expires_at >= now() AS live FROM "${schema}".session_leases WHERE session_id = $1`, [sessionId])).rows[0];

describePg('session leases on PostgreSQL', () => {
  it("B answers agent-busy {owner: A} while A's lease is live, takes over only after it expired; A, fenced, lets the session go", async () => {
    const db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    const a = await startHost('A', 0xa00);
    const b = await startHost('B', 0xb00);
    try {
      expect(await a.call('session.create', { sessionId: 's' })).toMatchObject({ ok: true });
      expect(await a.call('session.prompt', prompt('first, on A', 'm-a1'))).toMatchObject({ ok: true, value: { accepted: true } });
      await a.host.live.get('s')!.agent.whenIdle();
      expect(await leaseRow(db)).toEqual({ host_id: 'host-A', live: true });

      // A's lease is live: B refuses, naming A, and takes nothing (the lease it would take, the holder it reads)
      for (const [method, payload] of [
        ['session.prompt', prompt('on B too early', 'm-b0')],
        ['session.wake', { sessionId: 's' }],
        ['session.cancel', { sessionId: 's' }],
      ] as const) {
        const r = await b.call(method, payload);
        expect(r, method).toMatchObject({ ok: false, error: { code: 'agent-busy', details: { reason: 'owned-elsewhere', owner: { hostId: 'host-A', url: 'http://host-a.test' } } } });
      }
      expect(b.host.live.has('s')).toBe(false);
      expect(await leaseRow(db)).toEqual({ host_id: 'host-A', live: true });

      // the lease runs out (A stopped renewing): B takes the session over
      await db.query(`UPDATE "${schema}".session_leases SET expires_at = now() - interval '1 second' WHERE session_id = 's'`);
      expect(await b.call('session.prompt', prompt('second, on B', 'm-b1'))).toMatchObject({ ok: true, value: { accepted: true } });
      await b.host.live.get('s')!.agent.whenIdle();
      expect(await leaseRow(db)).toEqual({ host_id: 'host-B', live: true });

      // A still believes it runs s: its next write is fenced by the stream; A lets the session go
      expect(a.host.live.has('s')).toBe(true);
      const late = await a.call('session.prompt', prompt('late, on A', 'm-a2'));
      // not durable (the store refused A's write): the client retries the same messageId
      expect(late).toMatchObject({ ok: false, error: { code: 'internal' } });
      expect(a.host.live.has('s')).toBe(false);
      // A answers the retry as B did before: the session runs on B, reachable there
      expect(await a.call('session.prompt', prompt('late, on A', 'm-a2'))).toMatchObject({ ok: false, error: { code: 'agent-busy', details: { owner: { hostId: 'host-B', url: 'http://host-b.test' } } } });
      expect(await b.call('session.prompt', prompt('late, on A', 'm-a2'))).toMatchObject({ ok: true, value: { accepted: true } });
      await b.host.live.get('s')!.agent.whenIdle();
      expect(b.host.live.has('s')).toBe(true);
      expect(await leaseRow(db)).toEqual({ host_id: 'host-B', live: true });
      await a.close();

      // one history: A's first prompt, B's, then the late one once (through B); valid, revisions contiguous
      const lines: string[] = [];
      const texts: string[] = [];
      let rev = 0n;
      for await (const e of b.store.read('s')) {
        expect(e.revision).toBe(rev++);
        lines.push(JSON.stringify({ seq: Number(e.revision), id: e.id, time: e.time, type: e.type, data: e.data }));
        if (e.type === 'user/message') texts.push(JSON.stringify(e.data));
      }
      expect(auditLines('s', lines)).toMatchObject({ ok: true, errors: [] });
      expect(texts.map((t) => ['first, on A', 'second, on B', 'late, on A'].filter((x) => t.includes(x)))).toEqual([['first, on A'], ['second, on B'], ['late, on A']]);
    } finally {
      await a.close();
      await b.close();
      await db.end();
    }
  });

  it('A, renewing, finds its lease taken after it expired: A lets the session go without writing, B runs it', async () => {
    const db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    // A renews every 200 ms: the takeover must come between an expiry and A's next renewal, so it is retried
    const a = await startHost('A', 0xa10, 600);
    const b = await startHost('B', 0xb10);
    try {
      expect(await a.call('session.create', { sessionId: 't' })).toMatchObject({ ok: true });
      let taken = false;
      for (let attempt = 0; attempt < 50 && !taken; attempt++) {
        await db.query(`UPDATE "${schema}".session_leases SET expires_at = now() - interval '1 second' WHERE session_id = 't' AND host_id = 'host-A'`);
        const r = await b.call('session.prompt', prompt('on B', `m-b${attempt}`, 't'));
        if (r.ok) taken = true;
        else expect(r).toMatchObject({ ok: false, error: { code: 'agent-busy', details: { owner: { hostId: 'host-A' } } } });
      }
      expect(taken).toBe(true);
      // A's next renewal finds the lease gone: it lets t go (nothing written by A after B took over)
      await until(() => !a.host.live.has('t'));
      await b.host.live.get('t')!.agent.whenIdle();
      expect(await leaseRow(db, 't')).toEqual({ host_id: 'host-B', live: true });
      await a.close();
      const lines: string[] = [];
      for await (const e of b.store.read('t')) lines.push(JSON.stringify({ seq: Number(e.revision), id: e.id, time: e.time, type: e.type, data: e.data }));
      expect(auditLines('t', lines)).toMatchObject({ ok: true, errors: [] });
    } finally {
      await a.close();
      await b.close();
      await db.end();
    }
  });
});
