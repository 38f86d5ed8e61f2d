import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { createOtelTelemetry, createRuntime, createUserMessage, MemoryEventStore, ScriptedModel, traceSession, envelopeOfRecorded } from '../../index.js';
import { deriveSpans } from '../../projections/index.js';

/** The live export and the later trace of one session (the regions below are quoted in docs/observability.md). */
export const liveAndLater = async (exporter = new InMemorySpanExporter()) => {
  // #region live-export
  const telemetry = await createOtelTelemetry({ exporter }); // or { endpoint: 'http://127.0.0.1:4318' } for OTLP/HTTP
  const store = new MemoryEventStore();
  const runtime = createRuntime({ store, model: new ScriptedModel(['Hello.']), telemetry });
  const agent = runtime.createSession({ sessionId: 'support-42' });
  agent.followup(createUserMessage('Hi'));
  await agent.whenIdle();
  await telemetry.forceFlush(); // the turn's spans: steerlog.idle (the admission), chat, invoke_agent; db.* spans of the appends
  // #endregion live-export
  // the store's appends come as db.* spans too: live only, the log does not hold them
  const live = exporter
    .getFinishedSpans()
    .filter((s) => s.attributes['db.operation.name'] === undefined)
    .map((s) => s.spanContext().spanId);
  await agent.checkpoint();
  // #region later-trace
  const envelopes = [];
  for await (const e of store.read('support-42')) envelopes.push(envelopeOfRecorded(e));
  const { spans, request } = await traceSession(envelopes); // request: the OTLP/JSON ExportTraceServiceRequest
  // the same derivation, without the OTLP encoding:
  const same = deriveSpans(envelopes.map((e) => e as never)).spans;
  // #endregion later-trace
  await telemetry.shutdown();
  return { live, later: spans.map((s) => s.spanId), same: same.map((s) => s.spanId), request };
};
