import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
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
    const live = exporter.getFinishedSpans();
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

  it('is refused with encryption when it captures content', async () => {
    const telemetry = await createOtelTelemetry({ exporter: new InMemorySpanExporter(), content: (f) => f.text });
    expect(() =>
      createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel(), logger: silentLogger, telemetry, encryption: { keys: new MemoryKeyStore() } }),
    ).toThrow(/sealed content is never exported in plaintext/);
  });
});
