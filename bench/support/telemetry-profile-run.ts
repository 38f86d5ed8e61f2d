/**
 * One configuration of the telemetry overhead benchmark, alone, for a CPU profile: `--sessions` sessions of the
 * scripted model on the memory store (or, `--store jsonl`, a JSONL store in a temporary directory) run `--turns` turns each (the same work whatever the configuration), with
 * telemetry off or on, then the CPU time per turn of the runtime's thread and of the process. Profile the runtime's
 * thread and the export worker with `node --cpu-prof`:
 *
 *   node --import tsx --cpu-prof --cpu-prof-dir=prof-off bench/support/telemetry-profile-run.ts off 1-step
 *   node --import tsx --cpu-prof --cpu-prof-dir=prof-proto bench/support/telemetry-profile-run.ts proto 1-step
 *
 * Configurations: `off`, `proto` (the export worker, OTLP/HTTP protobuf to a receiver in a child process),
 * `proto-caller` (the same on the runtime's thread), `none` (the export worker deriving and counting, sending nothing).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { openStore } from '../../adapters/store/open-store.js';
import { createOtelTelemetry, onWorker, type OtelTelemetry } from '../../adapters/telemetry/otel-telemetry.js';
import { createUserMessage } from '../../domain/message.js';
import { createRuntime } from '../../runtime/runtime.js';
import { silentLogger } from '../../runtime/logger.js';
import { argOf } from './bench-args.js';
import { followupTurns, shapeAnswer, turnShapeOf } from './turn-loop.js';
import { startOtlpSink } from './otlp-sink.js';

const mode = process.argv[2] ?? 'off';
const shape = turnShapeOf(process.argv[3] ?? '1-step');
const TURNS = Number(argOf('turns', '1500'));
const SESSIONS = Number(argOf('sessions', '10'));
/** `memory` (default) or `jsonl`: a JSONL store in a new temporary directory, opened as `serve --store jsonl:<dir>`. */
const STORE = argOf('store', 'memory');
if (STORE !== 'memory' && STORE !== 'jsonl') throw new Error('--store takes memory or jsonl');
const dir = STORE === 'jsonl' ? mkdtempSync(join(tmpdir(), 'steerlog-telemetry-profile-')) : null;
const store = dir === null ? new MemoryEventStore() : await openStore(`jsonl:${dir}`);
const threadCpuMs = (): number => {
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const sink = await startOtlpSink();
const endpoint = sink.endpoint;
const telemetry: OtelTelemetry | undefined =
  mode === 'off' ? undefined : mode === 'none' ? await onWorker({ endpoint }, 'count') : await createOtelTelemetry({ endpoint, thread: mode === 'proto-caller' ? 'caller' : 'worker' });
const model = new ScriptedModel([], { whenExhausted: shapeAnswer(shape) });
const runtime = createRuntime({ store, model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], ...(telemetry ? { telemetry } : {}) });
const agents = Array.from({ length: SESSIONS }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
const c0 = process.cpuUsage();
const th0 = threadCpuMs();
const t0 = performance.now();
await followupTurns(agents, TURNS, () => createUserMessage('go'));
await Promise.all(agents.map((a) => a.dispose()));
await telemetry?.shutdown();
const seconds = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0);
const turns = TURNS * SESSIONS;
console.log(
  `${mode} ${shape}: ${turns} turns, ${(turns / seconds).toFixed(0)} turns/s, runtime thread ${(((threadCpuMs() - th0) * 1000) / turns).toFixed(0)} µs CPU/turn, process ${((c.user + c.system) / 1000 / turns * 1000).toFixed(0)} µs CPU/turn`,
  telemetry?.stats() ?? '',
);
sink.stop();
if (dir !== null) {
  await (store as { close?: () => Promise<void> }).close?.();
  rmSync(dir, { recursive: true, force: true });
}
