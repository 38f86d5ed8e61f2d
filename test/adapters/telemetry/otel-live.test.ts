import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { traceSession } from '../../../audit/trace-session.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createOtelTelemetry } from '../../../adapters/telemetry/otel-telemetry.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createUserMessage } from '../../../domain/message.js';
import type { DerivedSpan } from '../../../projections/telemetry/span-types.js';
import { envelopeOfRecorded } from '../../../runtime/ports/recorded-envelope.js';
import { MemoryKeyStore } from '../../../adapters/keys/memory-key-store.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/open-store.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeOtlpBody, decodeOtlpJson } from '../../support/otlp-decode.js';

/** A span as both sides can state it: ids, parent, name, kind, times (ms), attributes, events, links, status. */
const fromSdk = (s: ReadableSpan) => ({
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parentSpanId: s.parentSpanContext?.spanId ?? null,
  name: s.name,
  kind: s.kind === 2 ? 'client' : 'internal',
  startTime: s.startTime[0] * 1000 + s.startTime[1] / 1e6,
  endTime: s.endTime[0] * 1000 + s.endTime[1] / 1e6,
  attributes: s.attributes,
  events: s.events.map((e) => ({ name: e.name, time: e.time[0] * 1000 + (e.time[1] as number) / 1e6, attributes: e.attributes })),
  links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: l.attributes })),
  status: s.status.code === 2 ? { code: 'error', message: s.status.message } : { code: 'unset' },
});
const fromDerived = (s: DerivedSpan) => ({ ...s, status: s.status.code === 'error' ? { code: 'error', message: s.status.message } : { code: 'unset' } });

describe('live export through the OpenTelemetry SDK', () => {
  it('exports each span as its events commit, identical to a later trace of the stored session', async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = await createOtelTelemetry({ exporter, simple: true });
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      { toolCalls: [{ callId: 'c1', name: 'lookup', arguments: { q: 'x' } }], usage: { inputTokens: 9, outputTokens: 2 } },
      { text: 'done', usage: { inputTokens: 12, outputTokens: 4 } },
    ]);
    const runtime = createRuntime({
      store,
      model,
      logger: silentLogger,
      clock: steppingClock(),
      ids: sequentialIds(),
      writeBatchDelayMs: 1,
      telemetry,
      tools: [{ name: 'lookup', execute: () => ({ content: 'found' }) }],
    });
    const agent = runtime.createSession({ sessionId: 'live-1' });
    agent.followup(createUserMessage('find x', { kind: 'user' }, { newId: () => 'p1' }));
    await agent.whenIdle();
    // a turn exports its spans when its events commit: nothing waits for the end of the session
    // the store's appends come as db.* spans too (live only: the log does not hold them)
    const live = exporter.getFinishedSpans().filter((s) => s.attributes['db.operation.name'] === undefined);
    expect(exporter.getFinishedSpans().some((s) => s.name === 'append live-1' && s.attributes['db.system.name'] === 'steerlog.memory')).toBe(true);
    expect(live.map((s) => s.name)).toEqual(['steerlog.idle', 'chat scripted-1', 'execute_tool lookup', 'chat scripted-1', 'invoke_agent']);
    await agent.checkpoint();
    const stored: unknown[] = [];
    for await (const e of store.read('live-1')) stored.push(envelopeOfRecorded(e));
    const later = await traceSession(stored);
    expect(live.map(fromSdk)).toEqual(later.spans.map(fromDerived));
    expect(live.every((s) => s.instrumentationScope.name === 'steerlog')).toBe(true);
    await telemetry.shutdown();
    await agent.dispose();
  });

  it('a resumed session exports only what happens after the resume', async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = await createOtelTelemetry({ exporter, simple: true });
    const store = new MemoryEventStore();
    const model = new ScriptedModel([], { whenExhausted: 'ok' });
    const first = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 1 });
    const a = first.createSession({ sessionId: 'r-1' });
    a.followup(createUserMessage('one'));
    await a.whenIdle();
    await a.checkpoint();
    await a.dispose();
    const second = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 1, telemetry });
    const b = await second.resume('r-1');
    b.followup(createUserMessage('two'));
    await b.whenIdle();
    const turns = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent');
    expect(turns.map((s) => s.attributes['steerlog.turn'])).toEqual([2]);
    await b.dispose();
  });

  it('exports db.* spans for the appends and fsync batches of a JSONL store, through the telemetry port', async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = await createOtelTelemetry({ exporter, simple: true });
    const dir = await mkdtemp(join(tmpdir(), 'i32-db-spans-'));
    const store = await openJsonlEventStore(dir, { durability: 'group' });
    try {
      const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, writeBatchDelayMs: 1, telemetry });
      const agent = runtime.createSession({ sessionId: 'db-1' });
      agent.followup(createUserMessage('hi'));
      await agent.whenIdle();
      await agent.checkpoint();
      const spans = exporter.getFinishedSpans();
      const appends = spans.filter((s) => s.attributes['db.operation.name'] === 'append');
      const fsyncs = spans.filter((s) => s.attributes['db.operation.name'] === 'fsync');
      expect(appends.length).toBeGreaterThanOrEqual(1);
      expect(fsyncs.length).toBeGreaterThanOrEqual(1);
      const stored: unknown[] = [];
      for await (const e of store.read('db-1')) stored.push(e);
      // the appends cover the log exactly, in order, each in the session's trace
      expect(appends.reduce((n, s) => n + (s.attributes['steerlog.db.events'] as number), 0)).toBe(stored.length);
      expect(appends.map((s) => s.attributes['steerlog.seq.first'])).toEqual(
        appends.map((_, i) => appends.slice(0, i).reduce((n, s) => n + (s.attributes['steerlog.db.events'] as number), 0)),
      );
      const trace = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent')!.spanContext().traceId;
      for (const s of appends) {
        expect(s.name).toBe('append db-1');
        expect(s.attributes).toMatchObject({ 'db.system.name': 'steerlog.jsonl', 'db.collection.name': 'db-1', 'steerlog.session.id': 'db-1' });
        expect(s.spanContext().traceId).toBe(trace);
      }
      for (const s of fsyncs) expect(s.attributes).toMatchObject({ 'db.system.name': 'steerlog.jsonl', 'db.operation.name': 'fsync' });
      expect(new Set(spans.map((s) => s.spanContext().spanId)).size).toBe(spans.length);
      await agent.dispose();
    } finally {
      await telemetry.shutdown();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a disposed session exports its open spans (inbox activity after the last turn), as a later trace gives them', async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = await createOtelTelemetry({ exporter, simple: true });
    const store = new MemoryEventStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, clock: steppingClock(), ids: sequentialIds(), writeBatchDelayMs: 1, telemetry });
    const agent = runtime.createSession({ sessionId: 'idle-1' });
    agent.followup(createUserMessage('one'));
    await agent.whenIdle();
    // queued after the turn without waking the agent: inbox activity no turn closes
    agent.send(createUserMessage('two', { kind: 'user' }, { newId: () => 'm-late' }), 'next-turn', false);
    await agent.checkpoint();
    await agent.dispose();
    const live = exporter.getFinishedSpans().filter((s) => s.attributes['db.operation.name'] === undefined);
    const stored: unknown[] = [];
    for await (const e of store.read('idle-1')) stored.push(envelopeOfRecorded(e));
    const trace = await traceSession(stored);
    expect(live.map(fromSdk)).toEqual(trace.spans.map(fromDerived));
    expect(trace.spans.at(-1)!.attributes['steerlog.span.open']).toBe(true);
    await telemetry.shutdown();
  });

  it('is refused with encryption when it captures content', async () => {
    const telemetry = await createOtelTelemetry({ exporter: new InMemorySpanExporter(), content: (f) => f.text });
    expect(() =>
      createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel(), logger: silentLogger, telemetry, encryption: { keys: new MemoryKeyStore() } }),
    ).toThrow(/sealed content is never exported in plaintext/);
  });
});

describe('live export over OTLP/HTTP, protobuf (the default) or JSON', () => {
  it('sends the same spans in either encoding to <endpoint>/v1/traces, equal to a later trace of the session', async () => {
    const received: { path: string; type: string; body: Buffer }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const type = req.headers['content-type'] ?? '';
        received.push({ path: req.url ?? '', type, body: Buffer.concat(chunks) });
        if (type.startsWith('application/x-protobuf')) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const order = (a: { spanId: unknown }, b: { spanId: unknown }) => String(a.spanId).localeCompare(String(b.spanId));
    try {
      const sentWith = async (protocol: 'http/protobuf' | 'http/json' | undefined) => {
        received.length = 0;
        // on this thread: the encodings are what is checked here; the export worker (the default with an endpoint,
        // started from TypeScript sources through tsx, several seconds) has its own file in the e2e list
        const telemetry = await createOtelTelemetry({ endpoint, thread: 'caller', ...(protocol ? { protocol } : {}) });
        const store = new MemoryEventStore();
        const runtime = createRuntime({ store, model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'lookup' }] }, 'done']), logger: silentLogger, clock: steppingClock(), ids: sequentialIds(), writeBatchDelayMs: 1, telemetry, tools: [{ name: 'lookup', execute: () => ({ content: 'found' }) }] });
        const agent = runtime.createSession({ sessionId: 'wire-1' });
        agent.followup(createUserMessage('go', { kind: 'user' }, { newId: () => 'p1' }));
        await agent.whenIdle();
        await agent.dispose();
        await telemetry.shutdown();
        expect(telemetry.stats()).toMatchObject({ failed: 0, dropped: 0, queued: 0 });
        const envelopes = [];
        for await (const e of store.read('wire-1')) envelopes.push(envelopeOfRecorded(e));
        const later = decodeOtlpJson((await traceSession(envelopes)).request as unknown as Record<string, unknown>);
        return { requests: [...received], spans: received.flatMap((r) => decodeOtlpBody(r.type, r.body)).filter((s) => s.attributes['db.operation.name'] === undefined).sort(order), later: later.sort(order) };
      };
      const byDefault = await sentWith(undefined);
      expect(byDefault.requests.length).toBeGreaterThan(0);
      expect(byDefault.requests.every((r) => r.path === '/v1/traces' && r.type.startsWith('application/x-protobuf'))).toBe(true);
      const json = await sentWith('http/json');
      expect(json.requests.every((r) => r.path === '/v1/traces' && r.type.startsWith('application/json'))).toBe(true);
      expect(byDefault.spans.map((s) => s.name).sort()).toEqual(['chat scripted-1', 'chat scripted-1', 'execute_tool lookup', 'invoke_agent', 'steerlog.idle']);
      expect(json.spans).toEqual(byDefault.spans);
      expect(byDefault.spans).toEqual(byDefault.later);
    } finally {
      receiver.close();
    }
  });
});
