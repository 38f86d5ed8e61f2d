import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHostObservability, type HostObservability, type HostObservabilityOptions } from '../../../adapters/http/observability.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/open-store.js';
import { startHttpServer, type RunningHttpServer } from '../../../adapters/http/server.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { Host } from '../../../host/host.js';
import { silentLogger } from '../../../runtime/logger.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { parseExposition, value } from '../../support/prometheus-text.js';


// ---- a host with its observability ---------------------------------------------------------------------------------
const opened: { server: RunningHttpServer; host: Host; observability: HostObservability }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    o.observability.close();
    await o.server.close();
    await o.host.close();
  }
});
const start = async (store: EventStore, tokens: { principal: string; token: string }[] = [], options: HostObservabilityOptions = {}) => {
  const model = new ScriptedModel([], { whenExhausted: { text: 'ok', usage: { inputTokens: 11, outputTokens: 3 } } });
  const runtime = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 5 });
  const host = new Host({ runtime, logger: silentLogger });
  const observability = createHostObservability(host, { probeTimeoutMs: 1500, ...options });
  const server = await startHttpServer({ host, port: 0, log: () => {}, tokens, observability });
  opened.push({ server, host, observability });
  const rpc = async (method: string, payload: unknown, headers: Record<string, string> = {}) =>
    (await fetch(`${server.url}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ type: 'client-request', rpcId: `r-${Math.random()}`, method, payload }),
    }).then((r) => r.json())) as { result: { ok: boolean } };
  return { server, host, rpc };
};

describe('GET /metrics', () => {
  it('lists the host and session metrics in the Prometheus text format, fed by a session that ran a turn', async () => {
    const { server, host, rpc } = await start(new MemoryEventStore());
    expect((await rpc('session.create', { sessionId: 'm1' })).result.ok).toBe(true);
    expect((await rpc('session.prompt', { sessionId: 'm1', mode: 'queue', content: [{ type: 'text', text: 'hi' }] })).result.ok).toBe(true);
    const agent = host.live.get('m1')!.agent;
    await agent.whenIdle();
    await agent.checkpoint();
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const e = parseExposition(await res.text());
    expect(Object.fromEntries(e.types)).toMatchObject({
      steerlog_turn_duration_seconds: 'histogram',
      steerlog_step_duration_seconds: 'histogram',
      gen_ai_client_operation_duration_seconds: 'histogram',
      steerlog_tool_duration_seconds: 'histogram',
      gen_ai_client_token_usage_total: 'counter',
      steerlog_inbox_claim_latency_seconds: 'histogram',
      steerlog_inbox_queue_depth: 'gauge',
      steerlog_live_sessions: 'gauge',
      steerlog_sse_clients: 'gauge',
      steerlog_http_requests_total: 'counter',
      steerlog_http_request_duration_seconds: 'histogram',
      steerlog_store_append_duration_seconds: 'histogram',
      steerlog_store_append_batch_events: 'histogram',
      steerlog_store_append_failures_total: 'counter',
      steerlog_store_fsync_duration_seconds: 'histogram',
      steerlog_store_fsync_batch_appends: 'histogram',
    });
    expect(value(e, 'steerlog_turn_duration_seconds_count', { end_reason: 'completed' })).toBe(1);
    expect(value(e, 'steerlog_step_duration_seconds_count')).toBe(1);
    expect(value(e, 'gen_ai_client_operation_duration_seconds_count', { gen_ai_operation_name: 'chat' })).toBe(1);
    expect(value(e, 'gen_ai_client_token_usage_total', { gen_ai_token_type: 'input' })).toBe(11);
    expect(value(e, 'gen_ai_client_token_usage_total', { gen_ai_token_type: 'output' })).toBe(3);
    expect(value(e, 'steerlog_inbox_claim_latency_seconds_count', { class: 'prompt' })).toBe(1);
    expect(value(e, 'steerlog_inbox_queue_depth', { list: 'next-turn' })).toBe(0);
    expect(value(e, 'steerlog_live_sessions')).toBe(1);
    expect(value(e, 'steerlog_sse_clients')).toBe(0);
    expect(value(e, 'steerlog_http_requests_total', { method: 'POST', route: '/api/session.prompt', status: '200' })).toBe(1);
    expect(value(e, 'steerlog_store_append_batch_events_count')! >= 1).toBe(true);
    expect(value(e, 'steerlog_store_append_batch_events_sum')).toBe((await (async () => {
      let n = 0;
      for await (const _ of host.store.read('m1')) n++;
      return n;
    })()));
  });

  it('times the fsync batches of a JSONL store, and counts the spans of the live telemetry export', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'i32-fsync-'));
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    try {
      const stats = { exported: 7, dropped: 2, failed: 1, queued: 3, unread: 40 };
      const { server, host, rpc } = await start(store, [], { telemetryStats: () => stats });
      expect((await rpc('session.create', { sessionId: 'f1' })).result.ok).toBe(true);
      expect((await rpc('session.prompt', { sessionId: 'f1', mode: 'queue', content: [{ type: 'text', text: 'hi' }] })).result.ok).toBe(true);
      const agent = host.live.get('f1')!.agent;
      await agent.whenIdle();
      await agent.checkpoint();
      const e = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
      const appends = value(e, 'steerlog_store_append_duration_seconds_count', { outcome: 'ok' })!;
      const fsyncs = value(e, 'steerlog_store_fsync_duration_seconds_count', { outcome: 'ok' })!;
      expect(fsyncs).toBeGreaterThanOrEqual(1);
      // every append was made durable by one fsync batch, and a batch holds at least one append
      expect(value(e, 'steerlog_store_fsync_batch_appends_sum')).toBe(appends);
      expect(fsyncs).toBeLessThanOrEqual(appends);
      expect(e.types.get('steerlog_telemetry_spans_total')).toBe('counter');
      expect(value(e, 'steerlog_telemetry_spans_total', { outcome: 'exported' })).toBe(7);
      expect(value(e, 'steerlog_telemetry_spans_total', { outcome: 'dropped' })).toBe(2);
      expect(value(e, 'steerlog_telemetry_spans_total', { outcome: 'failed' })).toBe(1);
      expect(e.types.get('steerlog_telemetry_backlog')).toBe('gauge');
      expect(value(e, 'steerlog_telemetry_backlog', { what: 'queued_spans' })).toBe(3);
      expect(value(e, 'steerlog_telemetry_backlog', { what: 'unread_records' })).toBe(40);
    } finally {
      for (const o of opened.splice(0)) {
        o.observability.close();
        await o.server.close();
        await o.host.close();
      }
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports the event-loop delay since the previous scrape, by quantile, from the histogram it reads and resets', async () => {
    let resets = 0;
    let count = 4;
    // a histogram in nanoseconds: the p-th percentile is p ms, the largest 250 ms
    const loopDelay = { get count() { return count; }, max: 250e6, percentile: (p: number) => p * 1e6, reset: () => void resets++, enable: () => true, disable: () => true };
    const { server } = await start(new MemoryEventStore(), [], { loopDelay, loopDelayResolutionMs: 60 });
    const scrape = async () => parseExposition(await (await fetch(`${server.url}/metrics`)).text());
    const e = await scrape();
    expect(e.types.get('steerlog_event_loop_delay_seconds')).toBe('gauge');
    // each reading less the histogram's resolution (60 ms here), never below 0
    const listed = ['0.5', '0.99', '0.999', '1'].map((quantile) => value(e, 'steerlog_event_loop_delay_seconds', { quantile }));
    expect(listed.map((v) => Math.round(v! * 1e6) / 1e6)).toEqual([0, 0.039, 0.0399, 0.19]);
    expect(resets).toBe(1);
    // nothing measured since: zeros, and a new window again
    count = 0;
    const empty = await scrape();
    expect(['0.5', '0.99', '0.999', '1'].map((quantile) => value(empty, 'steerlog_event_loop_delay_seconds', { quantile }))).toEqual([0, 0, 0, 0]);
    expect(resets).toBe(2);
  });

  it('counts the open live-mirror streams, and pending messages by list', async () => {
    const { server, host } = await start(new MemoryEventStore());
    // following the sessions for the metrics is no live-mirror listener: without a stream no frame is built
    expect(host.listenerCount).toBe(0);
    const ac = new AbortController();
    const stream = await fetch(`${server.url}/api/stream`, { signal: ac.signal });
    expect(stream.status).toBe(200);
    const e = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
    expect(value(e, 'steerlog_sse_clients')).toBe(host.listenerCount);
    expect(value(e, 'steerlog_sse_clients')).toBe(1);
    ac.abort();
  });

  it('with a token: /metrics, /healthz and /readyz need it, like the API', async () => {
    const { server } = await start(new MemoryEventStore(), [{ principal: 'ops', token: 'sekret' }]);
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(401);
      expect((await fetch(`${server.url}${path}`, { headers: { authorization: 'Bearer sekret' } })).status, path).toBe(200);
    }
  });

  it('without a token: answered on loopback names only (the door refuses a foreign Host)', async () => {
    const { server } = await start(new MemoryEventStore());
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(`${server.url}/metrics`);
      request({ host: u.hostname, port: u.port, path: '/metrics', headers: { host: `attacker.example:${u.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
  });
});

describe('GET /healthz and /readyz', () => {
  it('a host whose store answers is healthy and ready, its live sessions held', async () => {
    const { server, rpc } = await start(new MemoryEventStore());
    await rpc('session.create', { sessionId: 'r1' });
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, store: { ok: true }, leases: { live: 1, held: 1 } });
  });

  it('a store that fails its reads makes the host not ready (503), still healthy', async () => {
    class BrokenStore extends MemoryEventStore {
      broken = false;
      override read(...args: Parameters<MemoryEventStore['read']>): ReturnType<MemoryEventStore['read']> {
        if (this.broken) throw new Error('connection refused');
        return super.read(...args);
      }
    }
    const store = new BrokenStore();
    const { server } = await start(store);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    store.broken = true;
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, store: { ok: false, error: 'connection refused' } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describePg('GET /readyz over PostgreSQL', () => {
  it('fails when PostgreSQL stops answering (its connections cut and refused by a proxy in front of it)', async () => {
    const target = new URL(PG_URL);
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop);
      upstream.on('error', drop);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as AddressInfo).port;
    const schema = uniqueSchema('i32_readyz');
    const url = new URL(PG_URL);
    url.port = String(port);
    const store = await openStore(`${url.toString()}?schema=${schema}`);
    try {
      const { server } = await start(store);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      // "stop" the server: no new connection is accepted, the open ones are cut
      proxy.close();
      for (const s of sockets) s.destroy();
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { store: { ok: boolean } }).store.ok).toBe(false);
    } finally {
      await store.close().catch(() => {});
      await dropSchema(schema);
    }
  });
});
