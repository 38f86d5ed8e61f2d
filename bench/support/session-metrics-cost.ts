/**
 * The CPU time of the host's session metrics per event (`createSessionMetrics(registry).observe`, what `serve` runs
 * for every event of every live session to keep `/metrics`), apart from the load: the events of a host-like run
 * recorded once (`--sessions` sessions on the memory store, each admission a prompt queued while the session may be
 * running a turn, echo-like scripted replies), then fed to the metrics of this tree and, with `--base <checkout>`, of
 * another checkout's sources (imported from there), in interleaved rounds whose order alternates. Reports the median
 * and minimum µs of CPU per event (this thread's, `/proc/thread-self/schedstat`) of each, and checks that both render
 * the same series.
 *
 *   npx tsx bench/support/session-metrics-cost.ts [--base /path/to/checkout] [--sessions 32] [--prompts 300] [--burst 2] [--rounds 15]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { createUserMessage } from '../../domain/message.js';
import * as here from '../../projections/telemetry/metrics.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';
import { argOf } from './bench-args.js';
import { machineLine, median } from './machine.js';
import { threadCpuNs } from './cpu-time.js';

const SESSIONS = Number(argOf('sessions', '32'));
const PROMPTS = Number(argOf('prompts', '300'));
const ROUNDS = Number(argOf('rounds', '15'));
const BASE = argOf('base', '');
/** Prompts admitted per session before it waits for its turns (a host under load admits far more than it runs). */
const BURST = Number(argOf('burst', '2'));

type MetricsModule = typeof here;
const builds: [string, MetricsModule][] = [['this', here]];
if (BASE !== '') builds.unshift(['base', (await import(pathToFileURL(resolve(BASE, 'projections/telemetry/metrics.ts')).href)) as MetricsModule]);

// a host-like log: prompts queued (`--burst` per await, so some land while a turn runs), each with an actor as the host's, each session's turns run by a scripted model
const model = new ScriptedModel([], { whenExhausted: { text: 'echo', usage: { inputTokens: 12, outputTokens: 3 } } });
const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1 });
const agents = Array.from({ length: SESSIONS }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
await Promise.all(
  agents.map(async (a) => {
    for (let k = 0; k < PROMPTS; k += BURST) {
      for (let j = 0; j < BURST; j++) a.followup(createUserMessage(`p${k + j}`), { actor: 'bench-user' });
      await a.whenIdle();
    }
  }),
);
// the events in a host's order: round-robin over the sessions, in each one's order
const logs = agents.map((a) => a.events as readonly LogEvent[]);
const events: [string, LogEvent][] = [];
for (let i = 0, more = true; more; i++) {
  more = false;
  logs.forEach((log, s) => {
    if (i < log.length) {
      events.push([`s${s}`, log[i]!]);
      more = true;
    }
  });
}
await Promise.all(agents.map((a) => a.dispose()));
const splices = events.filter(([, e]) => e.type === 'agent/inbox/spliced').length;

const once = (m: MetricsModule): { ns: number; text: string } => {
  const registry = new m.MetricsRegistry();
  const metrics = m.createSessionMetrics(registry);
  const t0 = threadCpuNs();
  for (const [s, e] of events) metrics.observe(s, e);
  const ns = threadCpuNs() - t0;
  return { ns, text: registry.render() };
};
console.log(`session metrics cost: ${events.length} events of ${SESSIONS} sessions (${splices} inbox splices, ${(events.length / (SESSIONS * PROMPTS)).toFixed(2)} events per prompt), ${ROUNDS} rounds; ${machineLine()}; start ${new Date().toISOString()}`);
const texts = builds.map(([, m]) => once(m).text);
if (texts.some((t) => t !== texts[0])) throw new Error('the builds render different series');
for (let w = 0; w < 3; w++) for (const [, m] of builds) once(m);
const perEvent = new Map(builds.map(([name]) => [name, [] as number[]]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, m] of r % 2 === 0 ? builds : [...builds].reverse()) perEvent.get(name)!.push(once(m).ns / 1000 / events.length);
}
for (const [name, xs] of perEvent) console.log(`${name}: ${median(xs).toFixed(2)} µs CPU per event (min ${Math.min(...xs).toFixed(2)}), ${(median(xs) * events.length / (SESSIONS * PROMPTS)).toFixed(1)} µs per prompt`);
console.log(`end ${new Date().toISOString()}`);
