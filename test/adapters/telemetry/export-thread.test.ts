import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { traceSession } from '../../../audit/trace-session.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createOtelTelemetry } from '../../../adapters/telemetry/otel-telemetry.js';
import { startExportThread } from '../../../adapters/telemetry/export-thread.js';
import { threadSchedule } from '../../../adapters/telemetry/export-thread-scheduling.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createUserMessage } from '../../../domain/message.js';
import type { LogEvent } from '../../../domain/events.js';
import { envelopeOfRecorded } from '../../../runtime/ports/recorded-envelope.js';
import type { ModelRequest } from '../../../runtime/ports/model.js';
import { decodeOtlpBody, decodeOtlpJson } from '../../support/otlp-decode.js';

/**
 * The live export on its worker thread (`createOtelTelemetry({ endpoint })`): the runtime's thread hands the committed
 * events over and never encodes a span; what the worker sends equals a later `steerlog trace` of each session, and
 * shutdown sends every span, the open ones included.
 */

interface Received {
  readonly type: string;
  readonly body: Buffer;
}

/** An OTLP/HTTP receiver on this thread (the worker sends to it over the loopback). */
const startReceiver = async () => {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ type: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
};

const order = (a: { spanId: unknown }, b: { spanId: unknown }) => String(a.spanId).localeCompare(String(b.spanId));

/** What `steerlog trace` derives from a stored session, decoded as the receiver's spans are. */
const laterTrace = async (store: MemoryEventStore, sessionId: string) => {
  const envelopes = [];
  for await (const e of store.read(sessionId)) envelopes.push(envelopeOfRecorded(e));
  return decodeOtlpJson((await traceSession(envelopes)).request as unknown as Record<string, unknown>);
};

describe('live export on the export worker thread', () => {
  it('the runtime’s thread never encodes; the spans the worker sends equal a later trace of each session', async () => {
    // the SDK's protobuf serializer, as this thread's exporter would call it (one CommonJS instance per thread)
    const transformer = createRequire(import.meta.url)('@opentelemetry/otlp-transformer') as { ProtobufTraceSerializer: { serializeRequest: (s: unknown[]) => unknown } };
    const serializer = transformer.ProtobufTraceSerializer;
    const original = serializer.serializeRequest;
    let encodedHere = 0;
    serializer.serializeRequest = (spans) => {
      encodedHere += spans.length;
      return original.call(serializer, spans);
    };
    const receiver = await startReceiver();
    try {
      const telemetry = await createOtelTelemetry({ endpoint: receiver.endpoint, });
      const store = new MemoryEventStore();
      const model = new ScriptedModel([], { whenExhausted: (r: ModelRequest) => (r.step < 2 ? { toolCalls: [{ callId: `c${r.turn}`, name: 'lookup' }] } : 'done') });
      const runtime = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 1, telemetry, tools: [{ name: 'lookup', execute: () => ({ content: 'found' }) }] });
      const agents = ['w-1', 'w-2'].map((sessionId) => runtime.createSession({ sessionId }));
      for (let t = 0; t < 3; t++) {
        for (const a of agents) a.followup(createUserMessage('go'));
        await Promise.all(agents.map((a) => a.whenIdle()));
      }
      // inbox activity after the last turn, without waking the agent, leaves a span open: the disposal exports it
      agents[0]!.send(createUserMessage('later'), 'next-turn', false);
      await agents[0]!.checkpoint();
      await Promise.all(agents.map((a) => a.dispose()));
      await telemetry.shutdown();
      const spans = receiver.received.flatMap((r) => decodeOtlpBody(r.type, r.body));
      expect(encodedHere).toBe(0);
      expect(telemetry.stats()).toEqual({ exported: spans.length, dropped: 0, failed: 0, queued: 0, unread: 0 });
      const live = spans.filter((s) => s.attributes['db.operation.name'] === undefined).sort(order);
      const later = [...(await laterTrace(store, 'w-1')), ...(await laterTrace(store, 'w-2'))].sort(order);
      expect(later.some((s) => s.attributes['steerlog.span.open'] === true)).toBe(true);
      expect(live).toEqual(later);
      // and one db.* span per append
      expect(spans.filter((s) => s.attributes['db.operation.name'] !== undefined).length).toBeGreaterThan(0);
    } finally {
      serializer.serializeRequest = original;
      await receiver.close();
    }
  });

  it('shutdown sends every span still queued, in batches, without a flush before it (here as OTLP/JSON)', async () => {
    const receiver = await startReceiver();
    try {
      const telemetry = await createOtelTelemetry({ endpoint: receiver.endpoint, protocol: 'http/json', queue: { maxExportBatchSize: 16, scheduledDelayMs: 60_000 } });
      const store = new MemoryEventStore();
      const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: () => 'done' }), logger: silentLogger, writeBatchDelayMs: 1, telemetry });
      const ids = ['f-1', 'f-2', 'f-3'];
      const agents = ids.map((sessionId) => runtime.createSession({ sessionId }));
      for (let t = 0; t < 20; t++) {
        for (const a of agents) a.followup(createUserMessage('go'));
        await Promise.all(agents.map((a) => a.whenIdle()));
      }
      await Promise.all(agents.map((a) => a.dispose()));
      await telemetry.shutdown();
      const spans = receiver.received.flatMap((r) => decodeOtlpBody(r.type, r.body));
      const later = (await Promise.all(ids.map((id) => laterTrace(store, id)))).flat();
      expect(receiver.received.length).toBeGreaterThan(1);
      expect(receiver.received.every((r) => r.type.startsWith('application/json'))).toBe(true);
      expect(spans.filter((s) => s.attributes['db.operation.name'] === undefined).sort(order)).toEqual(later.sort(order));
      expect(telemetry.stats()).toEqual({ exported: spans.length, dropped: 0, failed: 0, queued: 0, unread: 0 });
      // after shutdown nothing is sent, and what comes is counted as dropped
      telemetry.observe('f-1', { seq: 999 } as never);
      expect(telemetry.stats().dropped).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  /** Each thread of this process: its id, scheduling policy (Linux: 0 normal, 5 SCHED_IDLE) and nice value. */
  const threads = (): { tid: string; policy: number; nice: number }[] =>
    readdirSync('/proc/self/task').flatMap((tid) => {
      try {
        return [{ tid, ...threadSchedule(Number(tid)) }];
      } catch {
        return []; // the thread ended between the listing and the read
      }
    });
  const lowered = (): string[] => threads().filter((t) => t.policy !== 0 || t.nice !== 0).map((t) => `${t.tid}:${t.policy}:${t.nice}`);

  it.runIf(process.platform === 'linux')('exportPriority low (the default): the worker thread alone runs under SCHED_IDLE at nice 19, and still sends every span', async () => {
    const before = lowered();
    const receiver = await startReceiver();
    try {
      const telemetry = await createOtelTelemetry({ endpoint: receiver.endpoint });
      expect(telemetry.exportScheduling).toEqual({ thread: 'worker', policy: 'idle' });
      // one thread more is lowered, and it runs under SCHED_IDLE (policy 5) at nice 19
      const added = lowered().filter((t) => !before.includes(t));
      expect(added.map((t) => t.slice(t.indexOf(':') + 1))).toEqual(['5:19']);
      expect(threadSchedule()).toEqual({ policy: 0, nice: 0 });
      const store = new MemoryEventStore();
      const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: () => 'done' }), logger: silentLogger, writeBatchDelayMs: 1, telemetry });
      const agent = runtime.createSession({ sessionId: 'n-1' });
      for (let t = 0; t < 5; t++) {
        agent.followup(createUserMessage('go'));
        await agent.whenIdle();
      }
      await agent.dispose();
      await telemetry.forceFlush();
      const spans = receiver.received.flatMap((r) => decodeOtlpBody(r.type, r.body));
      expect(spans.filter((s) => s.attributes['db.operation.name'] === undefined).sort(order)).toEqual((await laterTrace(store, 'n-1')).sort(order));
      expect(telemetry.stats()).toEqual({ exported: spans.length, dropped: 0, failed: 0, queued: 0, unread: 0 });
      await telemetry.shutdown();
      expect(lowered()).toEqual(before);
    } finally {
      await receiver.close();
    }
  });

  it.runIf(process.platform === 'linux')('exportPriority normal: no thread is lowered', async () => {
    const before = lowered();
    const receiver = await startReceiver();
    try {
      const telemetry = await createOtelTelemetry({ endpoint: receiver.endpoint, exportPriority: 'normal' });
      expect(telemetry.exportScheduling).toEqual({ thread: 'worker', policy: 'normal' });
      expect(lowered()).toEqual(before);
      await telemetry.shutdown();
    } finally {
      await receiver.close();
    }
  });

  it.runIf(process.platform === 'linux')('exportPriority low without a working chrt: the worker runs at nice 19 and says why', async () => {
    const receiver = await startReceiver();
    try {
      const options = { endpoint: receiver.endpoint, protocol: 'http/protobuf' as const, serviceName: 'steerlog', queue: {}, priority: 'low' as const };
      const missing = await startExportThread({ ...options, chrtPaths: ['/nonexistent/bin/chrt'] });
      expect(missing.scheduling).toEqual({ thread: 'worker', policy: 'nice-19', note: 'SCHED_IDLE not set: no chrt at /nonexistent/bin/chrt (util-linux)' });
      await missing.shutdown();
      const failing = await startExportThread({ ...options, chrtPaths: ['/nonexistent/bin/chrt', '/bin/false'] });
      expect(failing.scheduling).toEqual({ thread: 'worker', policy: 'nice-19', note: 'SCHED_IDLE not set: chrt failed (exit 1)' });
      await failing.shutdown();
    } finally {
      await receiver.close();
    }
  });

  it('exportPriority on the caller\'s thread: nothing is lowered', async () => {
    const telemetry = await createOtelTelemetry({ exporter: { export: (_s: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} }, exportPriority: 'low' });
    expect(telemetry.exportScheduling).toEqual({ thread: 'caller', policy: 'normal' });
    await telemetry.shutdown();
  });

  it('hands the worker at most 4 × maxQueueSize unread events: past it a session is cut (counted), then rejoins', async () => {
    const receiver = await startReceiver();
    try {
      // a session's log recorded first, then handed over in one go: nothing reaches the worker before the bound
      const events: LogEvent[] = [];
      const recorder = { follow: (_s: string, h: readonly LogEvent[]) => void events.push(...h), observe: (_s: string, e: LogEvent) => void events.push(e), forget: () => {} };
      const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: () => 'done' }), logger: silentLogger, writeBatchDelayMs: 1, telemetry: recorder });
      const agent = runtime.createSession({ sessionId: 'b-1' });
      for (let t = 0; t < 8; t++) {
        agent.followup(createUserMessage('go'));
        await agent.whenIdle();
      }
      await agent.dispose();
      expect(events.length).toBeGreaterThan(60);
      expect(events.length).toBeLessThan(90);
      const telemetry = await createOtelTelemetry({ endpoint: receiver.endpoint, simple: true, queue: { maxQueueSize: 10 } });
      // the runtime hands over its session log's own array, which grows as events commit
      const log: LogEvent[] = [];
      telemetry.follow('b-1', log);
      const commit = (e: LogEvent): void => {
        log.push(e);
        telemetry.observe('b-1', e);
      };
      for (const e of events.slice(0, 50)) commit(e);
      expect(telemetry.stats().unread).toBe(40);
      await telemetry.forceFlush();
      expect(telemetry.stats()).toMatchObject({ dropped: 10, failed: 0, queued: 0, unread: 0 });
      // what was handed over was exported, the spans it left open closed and marked open
      const first = receiver.received.flatMap((r) => decodeOtlpBody(r.type, r.body));
      expect(first.length).toBe(telemetry.stats().exported);
      expect(first.some((s) => s.attributes['steerlog.span.open'] === true)).toBe(true);
      // the worker has caught up: at the next event the session is followed again from its log, and rejoins
      for (const e of events.slice(50)) commit(e);
      telemetry.forget('b-1');
      await telemetry.forceFlush();
      expect(telemetry.stats()).toMatchObject({ dropped: 11, failed: 0, queued: 0, unread: 0 });
      const spans = receiver.received.flatMap((r) => decodeOtlpBody(r.type, r.body));
      expect(spans.length).toBe(telemetry.stats().exported);
      const turnsOf = (list: typeof spans) => list.filter((s) => s.name === 'invoke_agent' && s.attributes['steerlog.span.open'] !== true).map((s) => s.attributes['steerlog.turn']);
      expect(turnsOf(first)).not.toContain('8');
      expect(turnsOf(spans)).toContain('8');
      await telemetry.shutdown();
    } finally {
      await receiver.close();
    }
  });

  it('hands the log over as it grows, not only after its delay: events committed back to back reach the worker with no turn of the event loop', async () => {
    const telemetry = await createOtelTelemetry({ endpoint: 'http://127.0.0.1:9' });
    try {
      // 3,000 events of a type the span derivation reads nothing of (5 values each), committed without yielding once:
      // the 10 ms delay cannot fire, so only the hand-over's size bound sends them on
      for (let seq = 1; seq <= 3000; seq++) telemetry.observe('c-1', { seq, time: 1_700_000_000_000 + seq, type: 'chain/head', id: `e${seq}`, data: {} } as unknown as LogEvent);
      const sleep = new Int32Array(new SharedArrayBuffer(4));
      const until = Date.now() + 10_000;
      // the worker reads on its own thread: wait here, still without yielding, until it has read what was posted
      while (telemetry.stats().unread! > 2048 / 5 && Date.now() < until) Atomics.wait(sleep, 0, 0, 5);
      expect(telemetry.stats().unread).toBeLessThanOrEqual(2048 / 5);
      await telemetry.forceFlush();
      expect(telemetry.stats()).toMatchObject({ dropped: 0, failed: 0, unread: 0 });
    } finally {
      await telemetry.shutdown();
    }
  });

  it('takes an endpoint and no objects of this thread', async () => {
    await expect(createOtelTelemetry({ endpoint: 'http://127.0.0.1:1', content: (f) => f.text, thread: 'worker' })).rejects.toThrow(TypeError);
    await expect(createOtelTelemetry({ exporter: { export: () => {}, shutdown: async () => {} }, thread: 'worker' })).rejects.toThrow(TypeError);
  });
});
