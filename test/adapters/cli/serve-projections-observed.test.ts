import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { startObservedServeProjections } from '../../../adapters/cli/serve-projections-observed.js';
import type { ServedProjectionsJson, ServeProjections } from '../../../adapters/cli/serve-projections.js';
import { createHostObservability, type HostObservability } from '../../../adapters/http/observability.js';
import { PROJECTION_METRICS } from '../../../adapters/http/projection-metrics.js';
import { startHttpServer, type RunningHttpServer } from '../../../adapters/http/server.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createOtelTelemetry, type OtelTelemetry } from '../../../adapters/telemetry/otel-telemetry.js';
import { createUserMessage } from '../../../domain/message.js';
import { Host } from '../../../host/host.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { parseExposition, value, type Exposition } from '../../support/prometheus-text.js';

// `steerlog serve --projection` with the host's observability (what serve-command wires): each batch the workers
// commit is a `projection-batch {projection}` db.* span in the live telemetry and counted in the batch metrics, and
// `/metrics` lists every partition's lag with the values `GET /projections` reports.

const STEERING = fileURLToPath(new URL('../../../docs/projections/steering-per-session.ts', import.meta.url));
const STUCK = fileURLToPath(new URL('../../support/stuck-projection.ts', import.meta.url));

interface Running {
  readonly server: RunningHttpServer;
  readonly host: Host;
  readonly observability: HostObservability;
  readonly projections: ServeProjections;
  readonly telemetry: OtelTelemetry;
  readonly exporter: InMemorySpanExporter;
}
const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.observability.close();
    await r.projections.close();
    await r.server.close();
    await r.host.close();
    await r.telemetry.shutdown();
  }
});

/** A store holding these sessions' turns (one prompt each, with the given texts), written before the host starts. */
const seeded = async (sessions: Record<string, readonly string[]>): Promise<MemoryEventStore> => {
  const store = new MemoryEventStore();
  const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, writeBatchDelayMs: 1 });
  for (const [id, texts] of Object.entries(sessions)) {
    const agent = runtime.createSession({ sessionId: id });
    for (const text of texts) {
      agent.followup(createUserMessage(text));
      await agent.whenIdle();
    }
    await agent.dispose();
  }
  return store;
};

const start = async (store: MemoryEventStore, module: string, partitions: string): Promise<Running> => {
  const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, writeBatchDelayMs: 1 });
  const host = new Host({ runtime, logger: silentLogger });
  const observability = createHostObservability(host);
  const exporter = new InMemorySpanExporter();
  const telemetry = await createOtelTelemetry({ exporter, simple: true });
  const projections = await startObservedServeProjections({ modules: [module], store, storeSpec: 'memory:', partitions, logger: silentLogger }, observability, telemetry);
  const server = await startHttpServer({ host, port: 0, log: () => {}, observability, projections });
  const r = { server, host, observability, projections, telemetry, exporter };
  running.push(r);
  return r;
};

const statusOf = async (r: Running): Promise<ServedProjectionsJson> => (await (await fetch(`${r.server.url}/projections`)).json()) as ServedProjectionsJson;
const metricsOf = async (r: Running): Promise<Exposition> => parseExposition(await (await fetch(`${r.server.url}/metrics`)).text());
const until = async (r: Running, done: (s: ServedProjectionsJson) => boolean): Promise<ServedProjectionsJson> => {
  for (let i = 0; ; i++) {
    const s = await statusOf(r);
    if (done(s)) return s;
    if (i > 600) throw new Error(`never reached: ${JSON.stringify(s)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
const labelsOf = (p: { name: string; version: number; partition: number }) => ({ projection: p.name, version: String(p.version), partition: String(p.partition) });

describe('serve --projection: projection lag on /metrics, projection batches as db.* spans', () => {
  it('a live projection: /metrics lists each partition\'s lag as /projections does (none), and every batch is a span with the db.* attributes', async () => {
    const store = await seeded({ a: ['1', '2'], b: ['1'], c: ['1', '2', '3'], d: ['1'] });
    const r = await start(store, STEERING, '2');
    const caughtUp = await until(r, (s) => s.workers[0]?.state === 'live' && s.partitions.length === 2 && s.partitions.every((p) => p.lagEvents === 0 && p.position !== null));

    const e = await metricsOf(r);
    expect(e.types.get(PROJECTION_METRICS.lagEvents)).toBe('gauge');
    expect(e.types.get(PROJECTION_METRICS.lagSeconds)).toBe('gauge');
    expect(e.samples.filter((s) => s.name === PROJECTION_METRICS.lagEvents)).toHaveLength(2);
    const after = await statusOf(r);
    expect(after.partitions).toEqual(caughtUp.partitions); // nothing moved between the two reads
    for (const p of after.partitions) {
      expect(value(e, PROJECTION_METRICS.lagEvents, labelsOf(p))).toBe(p.lagEvents);
      expect(value(e, PROJECTION_METRICS.lagSeconds, labelsOf(p))).toBe(p.lagSeconds);
    }

    // the batches: one span per commit of a partition, their events adding up to what the partition applied
    await r.telemetry.forceFlush();
    const batches = r.exporter.getFinishedSpans().filter((s: ReadableSpan) => s.attributes['db.operation.name'] === 'projection-batch');
    expect(batches.length).toBeGreaterThanOrEqual(1);
    for (const s of batches) {
      expect(s.name).toBe('projection-batch steering-per-session');
      expect(s.attributes).toMatchObject({
        'db.system.name': 'steerlog.file',
        'db.operation.name': 'projection-batch',
        'db.collection.name': 'steering-per-session',
        'steerlog.projection.version': 1,
      });
      expect(s.attributes['error.type']).toBeUndefined();
      expect([0, 1]).toContain(s.attributes['steerlog.projection.partition']);
    }
    for (const p of after.partitions) {
      const mine = batches.filter((s) => s.attributes['steerlog.projection.partition'] === p.partition);
      expect(mine.reduce((n, s) => n + (s.attributes['steerlog.db.events'] as number), 0)).toBe(Number(p.applied));
      const positions = mine.map((s) => BigInt(s.attributes['steerlog.projection.position'] as string));
      expect(positions.reduce((a, b) => (b > a ? b : a)).toString()).toBe(p.position);
    }
    // and the host counted them
    expect(value(e, `${PROJECTION_METRICS.batchDuration}_count`, { projection: 'steering-per-session', outcome: 'ok' })).toBe(batches.length);
  });

  it('a projection stuck on an event: /metrics lists its lag in events as /projections does, and its age no younger', async () => {
    const store = await seeded({ a: ['1', '2'], p: ['1', 'poison', '3'] });
    const r = await start(store, STUCK, '1');
    const stuck = await until(r, (s) => s.workers[0]?.state === 'failed' && s.partitions.length === 1);
    const [p] = stuck.partitions;
    expect(p!.lagEvents).toBeGreaterThan(0);
    expect(p!.lagSeconds).toBeGreaterThan(0);
    const e = await metricsOf(r);
    expect(value(e, PROJECTION_METRICS.lagEvents, labelsOf(p!))).toBe(p!.lagEvents);
    // the age grows with the clock: the scrape came after the status
    expect(value(e, PROJECTION_METRICS.lagSeconds, labelsOf(p!))).toBeGreaterThanOrEqual(p!.lagSeconds);
    const later = await statusOf(r);
    expect(later.partitions[0]!.lagEvents).toBe(p!.lagEvents);
  });
});
