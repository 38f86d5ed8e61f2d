/**
 * Projection throughput: folds 1,000,000 session events through
 *   1. the plain domain fold (`stepSession` in a loop) — the baseline;
 *   2. the `queueView()` operator (sessionSteps + snapshot after every splice, gapless handoff on);
 *   3. the other built-in operators (notifications, historyClassification) for reference;
 *   4. a custom projection (docs/projections/accept-to-claim.ts): its `evolve` in a loop, and end to end through
 *      `runProjection` over a MemoryEventStore (store read + envelope validation + checkpoints).
 *   5. `fromAll` over a JSONL store with many streams: the paged path against the per-event ones (bench/from-all-pages.ts,
 *      which also runs alone).
 * Prints events/s for each and the queueView / plain-fold ratio (target ≥ 0.5).
 *
 *   npx tsx bench/projections.ts [events=1000000] [repeats=3]
 */
import { cpus } from 'node:os';
import { availableParallelism } from 'node:os';
import * as E from 'fp-ts/lib/Either.js';
import { from, type OperatorFunction } from 'rxjs';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { isKnownEvent, type LogEvent } from '../domain/events.js';
import { initialSessionState, stepSession } from '../domain/session-fold.js';
import acceptToClaim, { report, type AcceptToClaimState } from '../docs/projections/accept-to-claim.js';
import { historyClassification, notifications, queueView, runProjection, type ProjectionEvent } from '../projections/index.js';
import { MemoryCheckpointStore } from '../adapters/checkpoints/index.js';
import { ctx, LogBuilder, msg } from '../testing/log-builder.js';
import { benchFromAll } from './from-all-pages.js';

const TARGET = Number(process.argv[2] ?? 1_000_000);
const REPEATS = Number(process.argv[3] ?? 3);

/** A deterministic pseudo-random sequence. */
let seed = 12345;
const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

/**
 * A realistic mix, built through LogBuilder (the deciders): follow-ups from users and plugins, steers while a turn
 * runs, context injects, edits (replace/remove), occasional clears, turns of 1–4 steps with assistant messages and
 * tool calls/results, and some blocked or aborted turns.
 */
const generate = (target: number): LogEvent[] => {
  const b = new LogBuilder('bench');
  let n = 0;
  const id = () => `m${++n}`;
  while (b.events.length < target) {
    // Keep the queue realistic (a few items): a turn claims one follow-up, so add about one per turn.
    const queued = b.lists.nextTurn.length;
    const followups = queued === 0 ? 1 + (rnd() < 0.3 ? 1 : 0) : queued < 4 && rnd() < 0.5 ? 1 : 0;
    for (let i = 0; i < followups; i++) b.followup(rnd() < 0.8 ? msg(id()) : ctx(id()));
    if (rnd() < 0.2) b.steer(ctx(id()));
    if (rnd() < 0.1) {
      const pending = b.lists.nextTurn;
      if (pending.length > 0) b.do({ kind: 'replace', id: pending[pending.length - 1]!, message: msg(id()) });
    }
    if (rnd() < 0.05) {
      const pending = b.lists.nextTurn;
      if (pending.length > 0) b.do({ kind: 'remove', id: pending[0]! });
    }
    if (rnd() < 0.01) b.do({ kind: 'clear' });
    b.turnStart();
    const endKind = rnd();
    if (endKind < 0.05) {
      b.claim();
      b.turnEnd(endKind < 0.025 ? { kind: 'blocked' } : { kind: 'aborted', reason: { kind: 'user' } });
      continue;
    }
    const steps = 1 + Math.floor(rnd() * 4);
    for (let s = 0; s < steps; s++) {
      if (s > 0 && rnd() < 0.3) b.steer(msg(id()));
      const batch = b.claim();
      const step = s + 1;
      const turnNo = (b.events.findLast((e) => e.type === 'turn/start')!.data as { turn: number }).turn;
      b.add('step/start', { turn: turnNo, step });
      for (const m of batch) b.add('user/message', m);
      if (rnd() < 0.5) {
        b.add('tool/call', { turn: turnNo, step, callId: `c${n}`, name: 'read', arguments: '{"path":"a.ts"}' });
        b.add('tool/result', { turn: turnNo, step, message: { role: 'tool', callId: `c${n}`, content: [{ type: 'text', text: 'ok' }] } });
      }
      b.add('assistant/message', { turn: turnNo, step, message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] } });
      b.add('step/end', { turn: turnNo, step });
    }
    b.turnEnd();
  }
  return b.events as LogEvent[];
};

const time = (fn: () => void): number => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
};
const timeAsync = async (fn: () => Promise<void>): Promise<number> => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
};
const best = (xs: number[]): number => Math.min(...xs);
const rate = (events: number, seconds: number): string => `${Math.round(events / seconds).toLocaleString('en-US')} ev/s`;

const plainFold = (events: readonly LogEvent[]): void => {
  let state = initialSessionState();
  for (const e of events) {
    const step = stepSession(state, e);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
  }
};

const throughOperator = <T>(events: readonly LogEvent[], op: OperatorFunction<LogEvent, T>): number => {
  let outputs = 0;
  from(events)
    .pipe(op)
    .subscribe({
      next: () => void outputs++,
      error: (e: unknown) => {
        throw e;
      },
    });
  return outputs;
};

const main = async (): Promise<void> => {
  const cpu = cpus()[0]?.model ?? 'unknown';
  console.log(`node ${process.version}, ${availableParallelism()} CPUs (nproc), ${cpu}`);
  let t = process.hrtime.bigint();
  const events = generate(TARGET);
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  console.log(`generated ${events.length.toLocaleString('en-US')} events in ${(Number(process.hrtime.bigint() - t) / 1e9).toFixed(1)} s:`, counts);

  // Warm-up on a prefix.
  const warm = events.slice(0, 50_000);
  plainFold(warm);
  throughOperator(warm, queueView());

  const plain: number[] = [];
  const queue: number[] = [];
  let frames = 0;
  for (let r = 0; r < REPEATS; r++) {
    plain.push(time(() => plainFold(events)));
    queue.push(time(() => void (frames = throughOperator(events, queueView()))));
  }
  const notif = best(Array.from({ length: REPEATS }, () => time(() => void throughOperator(events, notifications()))));
  const classes = best(Array.from({ length: REPEATS }, () => time(() => void throughOperator(events, historyClassification()))));

  // Custom projection: its evolve alone, in a loop over the same events.
  const evolveOnly = best(
    Array.from({ length: REPEATS }, () =>
      time(() => {
        let state = JSON.parse(JSON.stringify(acceptToClaim.initialState)) as AcceptToClaimState;
        for (let i = 0; i < events.length; i++) {
          const event = events[i]!;
          if (!isKnownEvent(event)) continue;
          const pe: ProjectionEvent = { stream: 'bench', revision: BigInt(i), position: BigInt(i), event };
          if (!acceptToClaim.filter || acceptToClaim.filter(pe)) state = acceptToClaim.evolve(state, pe);
        }
        void report(state);
      }),
    ),
  );

  // Custom projection end to end: MemoryEventStore → runProjection (parse + filter + evolve + checkpoints every 1000).
  const store = new MemoryEventStore();
  t = process.hrtime.bigint();
  for (let i = 0; i < events.length; i += 1000) {
    await store.append('bench', events.slice(i, i + 1000).map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'any');
  }
  console.log(`appended to the MemoryEventStore in ${(Number(process.hrtime.bigint() - t) / 1e9).toFixed(1)} s`);
  let runnerReport = {};
  const runner = await timeAsync(async () => {
    const run = runProjection(acceptToClaim, { store, checkpoints: new MemoryCheckpointStore(), stream: 'bench', batchSize: 1000 });
    await run.caughtUp;
    runnerReport = report(run.state());
    await run.stop();
  });

  const n = events.length;
  const ratio = n / best(queue) / (n / best(plain));
  console.log('');
  console.log(`plain domain fold (stepSession loop)      ${rate(n, best(plain))}   (best of ${REPEATS}: ${plain.map((s) => s.toFixed(3)).join(', ')} s)`);
  console.log(`queueView() operator                      ${rate(n, best(queue))}   (best of ${REPEATS}: ${queue.map((s) => s.toFixed(3)).join(', ')} s; ${frames.toLocaleString('en-US')} snapshots)`);
  console.log(`  ratio queueView / plain fold            ${ratio.toFixed(2)}× (target ≥ 0.5×) ${ratio >= 0.5 ? 'OK' : 'BELOW TARGET'}`);
  console.log(`notifications() operator                  ${rate(n, notif)}`);
  console.log(`historyClassification() operator          ${rate(n, classes)}`);
  console.log(`custom projection, evolve loop            ${rate(n, evolveOnly)}`);
  console.log(`custom projection, runProjection + store  ${rate(n, runner)}   (${runner.toFixed(2)} s, once)`);
  console.log('accept-to-claim report:', runnerReport);

  await benchFromAll(200_000, 2_000, REPEATS);
  await benchFromAll(200_000, 50, REPEATS);
};

await main();
