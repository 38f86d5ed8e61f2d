/**
 * The cost of tracking a deciding listener's call across its awaits (runtime/hook-scope.ts, one AsyncLocalStorage):
 * CPU time per turn of sessions on the memory store whose agents have a `pre-step` and a `turn-stopping` listener
 * (both synchronous, sending nothing), the listeners' calls being what runs inside the storage. Also the same
 * sessions without listeners. One process measures one tree; compare trees by running processes alternately:
 *
 *   npx tsx bench/hook-scope.ts [--root <a source tree, default this one>] [--sessions 50] [--turns 200] [--rounds 5]
 *
 * A/B against the commit before (the listener's synchronous part only; no AsyncLocalStorage):
 *
 *   git archive <commit> runtime domain adapters testing index.ts | (mkdir -p .bench-old && tar -x -C .bench-old)
 *   for i in 1 2 3; do npx tsx bench/hook-scope.ts --root .bench-old; npx tsx bench/hook-scope.ts; done
 *
 * Prints, per configuration, the median over rounds of the process's CPU time (user + system) per turn, in µs.
 *
 * `--storage-ab` (with `--root` a tree without the storage, e.g. .bench-old) isolates what the storage costs once
 * enabled (Node 20: an async hook on every promise of the process), interleaved in one process: rounds with
 * listeners alternate between no storage enabled and a storage of the bench's own enabled.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const ROOT = resolve(arg('root', resolve(import.meta.dirname, '..')));
const SESSIONS = Number(arg('sessions', '50'));
const TURNS = Number(arg('turns', '200'));
const ROUNDS = Number(arg('rounds', '5'));

const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(resolve(ROOT, path)).href)) as T;

type AnyAgent = {
  on(name: string, listener: (...a: never[]) => unknown): () => void;
  followup(m: unknown): unknown;
  whenIdle(): Promise<void>;
};
const { createRuntime } = await load<{ createRuntime: (o: unknown) => { createSession(o?: unknown): AnyAgent } }>('runtime/runtime.ts');
const { MemoryEventStore } = await load<{ MemoryEventStore: new () => unknown }>('adapters/store/memory/memory-event-store.ts');
const { ScriptedModel } = await load<{ ScriptedModel: new (a: unknown[], o: unknown) => unknown }>('adapters/model/scripted/scripted-model.ts');
const { createUserMessage } = await load<{ createUserMessage: (text: string) => unknown }>('domain/message.ts');
const { silentLogger } = await load<{ silentLogger: unknown }>('runtime/logger.ts');

/** CPU µs per turn of `SESSIONS` sessions running `TURNS` turns each, concurrently. */
const round = async (withListeners: boolean, r: number): Promise<number> => {
  const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: 'done' }), logger: silentLogger, writeBatchDelayMs: 0 });
  const agents = Array.from({ length: SESSIONS }, () => runtime.createSession());
  if (withListeners)
    for (const a of agents) {
      a.on('pre-step', ((_c: unknown, next: () => unknown) => next()) as never);
      a.on('turn-stopping', (() => undefined) as never);
    }
  const start = process.cpuUsage();
  await Promise.all(
    agents.map(async (a, i) => {
      for (let t = 0; t < TURNS; t++) {
        a.followup(createUserMessage(`hello ${r}.${i}.${t}`));
        await a.whenIdle();
      }
    }),
  );
  const cpu = process.cpuUsage(start);
  return (cpu.user + cpu.system) / (SESSIONS * TURNS);
};

if (process.argv.includes('--storage-ab')) {
  const storage = new AsyncLocalStorage<number>();
  const ab = { off: [] as number[], on: [] as number[] };
  await round(true, -1); // warm-up, not counted
  for (let r = 0; r < ROUNDS; r++) {
    ab.off.push(await round(true, 2 * r));
    await storage.run(1, () => round(true, 2 * r + 1).then((x) => ab.on.push(x)));
    storage.disable();
  }
  console.log(machineLine());
  console.log(`root ${ROOT}: ${SESSIONS} sessions x ${TURNS} turns with listeners, ${ROUNDS} rounds each; CPU µs/turn median (rounds)`);
  for (const [k, v] of Object.entries(ab)) console.log(`  storage ${k.padEnd(4)} ${median(v).toFixed(1)}  (${v.map((x) => x.toFixed(1)).join(' ')})`);
  console.log(`  on/off ${(median(ab.on) / median(ab.off)).toFixed(3)}; per round: ${ab.on.map((x, i) => (x / ab.off[i]!).toFixed(2)).join(' ')}`);
  process.exit(0);
}

const results = { none: [] as number[], listeners: [] as number[] };
await round(false, -1); // warm-up, not counted
// the rounds without listeners first: the storage is enabled (for every promise of the process) from the first
// listener's call on
for (let r = 0; r < ROUNDS; r++) results.none.push(await round(false, r));
for (let r = 0; r < ROUNDS; r++) results.listeners.push(await round(true, r));
console.log(machineLine());
console.log(`root ${ROOT}: ${SESSIONS} sessions x ${TURNS} turns, ${ROUNDS} rounds; CPU µs/turn median (rounds)`);
for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(10)} ${median(v).toFixed(1)}  (${v.map((x) => x.toFixed(1)).join(' ')})`);
