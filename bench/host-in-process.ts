/**
 * The host's CPU per admission in one process, without sockets: `steerlog serve`'s wiring (a JSONL store, the echo
 * model without delay, the loop slices, the Host, its observability, the HTTP app with the JSON request log written
 * to a discarded sink) answering `POST /api/session.prompt` through `app.request` (Hono's fetch, no HTTP parsing or
 * socket writes): 64 concurrent callers, 32 sessions, a fixed number of prompts per caller (the first ones a warm-up),
 * `durable` false or true. Reports the process's CPU time (user + system) per admission over the measured prompts and
 * their rate. A fixed amount of work, measured in CPU time: what compares two builds on a loaded machine (run it in
 * each checkout, interleaved, several rounds: `npx tsx bench/host-in-process.ts`).
 *
 *   npx tsx bench/host-in-process.ts [--prompts 200] [--warmup 40] [--durable false] [--write-batch-ms 200] [--echo-delay-ms 0]
 *
 * How many turns run depends on the timing (a turn takes every prompt queued before it starts), and with them the
 * events per admission: `--echo-delay-ms 600000` keeps each session's first turn in its model call, so no turn
 * ends and the work is the same in every run (the admissions, their write-behind and the request path alone).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHostObservability } from '../adapters/http/observability.js';
import { createHttpApp } from '../adapters/http/app.js';
import { EchoModel } from '../adapters/model/echo/echo-model.js';
import { batchedLines } from '../adapters/cli/batched-lines.js';
import { openStore } from '../adapters/store/open-store.js';
import { withSessionTraceIds } from '../adapters/telemetry/trace-log-fields.js';
import { Host } from '../host/host.js';
import { jsonLinesLogger } from '../runtime/logger.js';
import { LoopSlices } from '../runtime/loop-slices.js';
import { createRuntime } from '../runtime/runtime.js';
import { argOf } from './support/bench-args.js';
import { machineLine } from './support/machine.js';

const PROMPTS = Number(argOf('prompts', '200'));
const WARMUP = Number(argOf('warmup', '40'));
const DURABLE = argOf('durable', 'false') === 'true';
const WRITE_BATCH_MS = Number(argOf('write-batch-ms', '200'));
const ECHO_DELAY_MS = Number(argOf('echo-delay-ms', '0'));
const CALLERS = 64;
const SESSIONS = 32;

const dir = mkdtempSync(join(tmpdir(), 'steerlog-host-in-process-'));
try {
  const store = await openStore(`jsonl:${dir}`);
  let logged = 0;
  const lines = batchedLines((chunk) => void (logged += chunk.length));
  const logger = withSessionTraceIds(jsonLinesLogger({ write: (line) => lines.line(line.endsWith('\n') ? line.slice(0, -1) : line) }));
  const slices = new LoopSlices({ budgetMs: 2 }); // as `steerlog serve`
  const runtime = createRuntime({ store, model: new EchoModel({ delayMs: ECHO_DELAY_MS }), writeBatchDelayMs: WRITE_BATCH_MS, logger, resumeFromSnapshots: true, turnGate: slices });
  const host = new Host({ runtime, admissionGate: slices.first, logger });
  const observability = createHostObservability(host);
  const app = createHttpApp({ host, observability, logger, consoleDir: null });
  const post = async (method: string, payload: unknown): Promise<{ ok: boolean }> => {
    const res = await app.request(`http://127.0.0.1:7420/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: '127.0.0.1:7420' },
      body: JSON.stringify({ type: 'client-request', rpcId: 'b', method, payload }),
    });
    return ((await res.json()) as { result: { ok: boolean } }).result;
  };
  const sessions = Array.from({ length: SESSIONS }, (_, s) => `s${s}`);
  for (const s of sessions) if (!(await post('session.create', { sessionId: s })).ok) throw new Error(`session.create ${s} refused`);
  let admitted = 0;
  let cpu = process.cpuUsage();
  let started = performance.now();
  let warm = 0;
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      const sessionId = sessions[c % SESSIONS]!;
      for (let k = 0; k < WARMUP + PROMPTS; k++) {
        if (k === WARMUP && ++warm === CALLERS) {
          // the last caller past its warm-up opens the measured window
          cpu = process.cpuUsage();
          started = performance.now();
        }
        const messageId = `c${c}-${k}`;
        const r = await post('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: messageId }], messageId, durable: DURABLE });
        if (!r.ok) throw new Error(`prompt ${messageId} refused`);
        if (k >= WARMUP) admitted++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `host-in-process durable:${DURABLE}${ECHO_DELAY_MS > 0 ? `, echo delay ${ECHO_DELAY_MS} ms` : ''} — ${admitted} admissions measured (of ${CALLERS * PROMPTS}), ${(admitted / seconds).toFixed(0)}/s, CPU ${(((used.user + used.system) / admitted)).toFixed(1)} µs per admission — ${machineLine()}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${logged > 0 ? 'log written' : 'no log'}`,
  );
  observability.close();
  // the turns still in their model calls (a long echo delay) are not waited for
  await Promise.race([host.close().then(() => store.close()), new Promise((r) => setTimeout(r, 2000).unref())]);
  process.exitCode = 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit();
