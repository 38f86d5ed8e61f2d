/**
 * The live export's bytes, for comparing two builds (issue 32: a change to the export must send the same OTLP
 * bytes). `record` runs a demo — 10 sessions × `--turns` turns of each shape (1-step, then 3-step; memory store,
 * scripted model, session ids of UUID length) — with a telemetry port that records every call it gets (`follow`,
 * `observe` with the data JSON the runtime passes, `forget`, `storeOperation`), and writes them to `--calls` as
 * JSON. `replay` loads the live export of `--checkout` (default: this one), replays the recorded calls into it —
 * `createOtelTelemetry({ endpoint })` on the export worker, or with `--thread caller` on this thread; batches of 64
 * spans, so that a run makes many requests — with a receiver in this process that keeps every request body, shuts
 * the export down, and prints the requests' count, their bytes and the SHA-256 of their bodies in order: two builds
 * that print the same digest sent the same bytes in the same requests.
 *
 *   npx tsx bench/support/telemetry-export-bytes.ts record [--calls /tmp/telemetry-calls.json] [--turns 30]
 *   npx tsx bench/support/telemetry-export-bytes.ts replay [--calls /tmp/telemetry-calls.json] [--checkout <dir>] [--thread worker|caller]
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { argOf } from './bench-args.js';
import { followupTurns, shapeAnswer } from './turn-loop.js';

const command = process.argv[2];
const CALLS = argOf('calls', '/tmp/telemetry-calls.json');
const root = argOf('checkout', fileURLToPath(new URL('../..', import.meta.url))).replace(/\/$/, '');

/** One recorded telemetry call (events and operations as JSON: their data is JSON, and no operation of the demo has a bigint). */
type Call =
  | { readonly kind: 'follow'; readonly sessionId: string; readonly history: readonly unknown[] }
  | { readonly kind: 'observe'; readonly sessionId: string; readonly event: unknown; readonly dataJson: string | undefined }
  | { readonly kind: 'forget'; readonly sessionId: string }
  | { readonly kind: 'operation'; readonly op: unknown };

if (command === 'record') {
  const TURNS = Number(argOf('turns', '30'));
  const { ScriptedModel } = await import('../../adapters/model/scripted/scripted-model.js');
  const { MemoryEventStore } = await import('../../adapters/store/memory/memory-event-store.js');
  const { createUserMessage } = await import('../../domain/message.js');
  const { createRuntime } = await import('../../runtime/runtime.js');
  const { silentLogger } = await import('../../runtime/logger.js');
  const calls: Call[] = [];
  for (const shape of ['1-step', '3-step'] as const) {
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: new ScriptedModel([], { whenExhausted: shapeAnswer(shape) }),
      logger: silentLogger,
      writeBatchDelayMs: 1,
      tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }],
      telemetry: {
        follow: (sessionId, history) => void calls.push({ kind: 'follow', sessionId, history: history.slice() }),
        observe: (sessionId, event, dataJson) => void calls.push({ kind: 'observe', sessionId, event, dataJson }),
        forget: (sessionId) => void calls.push({ kind: 'forget', sessionId }),
        storeOperation: (op) => void calls.push({ kind: 'operation', op }),
      },
    });
    const agents = Array.from({ length: 10 }, (_, i) => runtime.createSession({ sessionId: `${shape}-${i}-0af76519-16cd-43dd-8448-eb211c80319c` }));
    await followupTurns(agents, TURNS, () => createUserMessage('go'));
    await Promise.all(agents.map((a) => a.dispose()));
  }
  writeFileSync(CALLS, JSON.stringify(calls));
  console.log(`recorded ${calls.length} telemetry calls to ${CALLS}`);
} else if (command === 'replay') {
  const thread = argOf('thread', 'worker');
  if (thread !== 'worker' && thread !== 'caller') throw new Error('--thread takes worker or caller');
  const { createOtelTelemetry } = (await import(`${root}/adapters/telemetry/otel-telemetry.ts`)) as typeof import('../../adapters/telemetry/otel-telemetry.js');
  const bodies: Buffer[] = [];
  const server = createServer((q, s) => {
    const parts: Buffer[] = [];
    q.on('data', (d: Buffer) => parts.push(d));
    q.on('end', () => {
      bodies.push(Buffer.concat(parts));
      s.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const telemetry = await createOtelTelemetry({ endpoint: `http://127.0.0.1:${port}`, thread, queue: { maxExportBatchSize: 64 } });
  const calls = JSON.parse(readFileSync(CALLS, 'utf8')) as Call[];
  for (const c of calls) {
    if (c.kind === 'observe') telemetry.observe(c.sessionId, c.event as never, c.dataJson);
    else if (c.kind === 'operation') telemetry.storeOperation!(c.op as never);
    else if (c.kind === 'follow') telemetry.follow(c.sessionId, c.history as never);
    else telemetry.forget(c.sessionId);
  }
  await telemetry.shutdown();
  server.close();
  const digest = createHash('sha256');
  let bytes = 0;
  for (const b of bodies) {
    digest.update(b);
    bytes += b.length;
  }
  const stats = telemetry.stats();
  console.log(`${root} (${thread}): ${bodies.length} requests, ${bytes} bytes, sha256 ${digest.digest('hex')}; ${stats.exported} spans exported, ${stats.dropped} dropped, ${stats.failed} failed`);
  process.exit(0);
} else throw new Error('telemetry-export-bytes: record or replay');
