import * as E from 'fp-ts/lib/Either.js';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { createExtrasCollector } from '../../audit/audit-extras.js';
import { answerWhy } from '../../adapters/cli/why-command.js';
import { createAuditor } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { createFateFold } from '../../domain/message-fate.js';
import { parseEvent } from '../../domain/parse-event.js';
import { foldSession } from '../../domain/session-fold.js';
import { childRecords, consumedWork, createSessionMetrics, deriveSpans, historyClassification, MetricsRegistry, notifications, queueView, turnTimeline } from '../../projections/index.js';
import { auditSession } from '../../host/session-audit.js';
import { createRuntime } from '../../runtime/runtime.js';
import { ADVERSARIAL_SHAPES, adversarialLog, type AdversarialShape } from '../../bench/support/adversarial-logs.js';
import { countWork, type WorkCount } from './support/work-counter.js';

/**
 * The class guard over adversarial shapes (issue 35; the realistic log's guard is list-work.test.ts): every consumer
 * of the fold — the session fold, the CLI's audit with its message facts and fates, `why`, the console's audit and
 * fates, the projections, resume and fork — folds each log of bench/support/adversarial-logs.ts (claims outside
 * turns, one turn of many steps each claiming, steps claiming thousands at once, cancels and edits at random
 * positions of a 10,000-item list, strict steers between the lists, a fork of a long session, 10,000 children)
 * while an injected counter (support/work-counter.ts) counts every element the built-ins walk, copy or search. A
 * per-event copy or search of a collection that grows with the log walks thousands of elements per event; the
 * budget allows a small constant. Not timed: it counts.
 */
/**
 * The sizes: 2,000 items in the long list (or children), 12,000 events a log, a turn of 5,000 steps — enough for a
 * per-event copy or search of a growing collection to walk thousands of elements per event, small enough for
 * `npm test` on a loaded machine (the counter takes the built-ins off V8's fast paths). The issue's sizes:
 * `ADVERSARIAL_PEAK=10000 ADVERSARIAL_EVENTS=40000 ADVERSARIAL_STEPS=50000` (minutes; raise the test timeout).
 */
const PEAK = Number(process.env.ADVERSARIAL_PEAK ?? 2_000);
const EVENTS = Number(process.env.ADVERSARIAL_EVENTS ?? 12_000);
/** Steps of the long turn (six events each, after `PEAK` admissions). */
const STEPS = Number(process.env.ADVERSARIAL_STEPS ?? 5_000);
const LONG_TURN_EVENTS = PEAK + 6 * STEPS;
/**
 * Elements the built-ins may touch per event, amortized: parsing and checking the event's own fields, its facts,
 * compactions, the final reads (30–80 on these logs; up to 160 for a fork, which folds and appends every event of
 * its seed). A per-event copy or search of a collection of thousands touches thousands.
 */
const BUDGET_PER_EVENT = 200;

const eventsOf = (shape: AdversarialShape): LogEvent[] =>
  [...adversarialLog(shape, shape === 'long-turn' ? LONG_TURN_EVENTS : EVENTS, PEAK)].map((env) => {
    const parsed = parseEvent(env, { expectedSeq: env.seq });
    if (E.isLeft(parsed)) throw parsed.left;
    return parsed.right;
  });

const expectConstant = (work: WorkCount, events: number, label: string): void => {
  const top = Object.entries(work.byOp)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([op, n]) => `${op} ${n}`)
    .join(', ');
  expect(work.total / events, `${label}: ${work.total} elements over ${events} events (${top})`).toBeLessThanOrEqual(BUDGET_PER_EVENT);
};

describe.each(ADVERSARIAL_SHAPES)('work per event on the adversarial log "%s" (every consumer O(1) amortized per event)', (shape) => {
  const events = eventsOf(shape);
  const n = events.length;
  const lines = events.map((e) => JSON.stringify({ seq: e.seq, id: e.id, time: e.time, type: e.type, data: e.data }));
  const raws = lines.map((l) => JSON.parse(l) as unknown);

  it('is a valid log, and the session fold (foldSession)', async () => {
    const work = await countWork(() => {
      const { error } = foldSession(events);
      expect(error).toBeNull();
    });
    expectConstant(work, n, 'foldSession');
  });

  it("the CLI's audit: the auditor with its message facts, each input's fate stepped as its facts come", async () => {
    const work = await countWork(async () => {
      const collector = createExtrasCollector('bench', undefined, null, Promise.resolve(null as never));
      const auditor = createAuditor('bench', { onFacts: collector.facts, onTurn: () => {}, onMessage: () => {} });
      for (const line of lines) auditor.push(line);
      expect(auditor.report().ok).toBe(true);
    });
    expectConstant(work, n, 'audit');
  });

  it('why (answerWhy over batches of envelopes)', async () => {
    const batches = async function* () {
      for (let i = 0; i < raws.length; i += 1000) yield raws.slice(i, i + 1000).map((r) => structuredClone(r));
    };
    const input = batches();
    const work = await countWork(async () => {
      const answer = await answerWhy(null, 'm-100', input);
      expect(answer.error).toBeNull();
    });
    // the batches themselves (1 element each) are the reader's, not why's
    expectConstant(work, n, 'why');
  });

  it("the console's audit (auditSession: the auditor and the fate fold)", async () => {
    const work = await countWork(async () => {
      const audit = await auditSession('bench', events);
      expect(audit.report.ok).toBe(true);
    });
    expectConstant(work, n, 'auditSession');
  });

  it("the console's fates alone (createFateFold)", async () => {
    const work = await countWork(() => {
      const fold = createFateFold();
      let folded = 0;
      for (const e of events) if (fold.push(e)) folded++;
      expect(folded).toBe(n);
    });
    expectConstant(work, n, 'createFateFold');
  });

  it('the projections: queueView, historyClassification, consumedWork, notifications, turnTimeline, childRecords', async () => {
    for (const [label, op] of [
      ['queueView', queueView()],
      ['historyClassification', historyClassification()],
      ['consumedWork', consumedWork()],
      ['notifications', notifications()],
      ['turnTimeline', turnTimeline()],
      ['childRecords', childRecords()],
    ] as const) {
      const work = await countWork(() => lastValueFrom(from(events).pipe(op as never, toArray())));
      expectConstant(work, n, label);
    }
  });

  it('the telemetry derivations: the spans (checked and trusted) and the session metrics', async () => {
    const checked = await countWork(() => {
      expect(deriveSpans(events).error).toBeNull();
    });
    expectConstant(checked, n, 'deriveSpans');
    const trusted = await countWork(() => {
      expect(deriveSpans(events, { validate: false }).error).toBeNull();
    });
    expectConstant(trusted, n, 'deriveSpans (validate: false)');
    const metrics = await countWork(() => {
      const session = createSessionMetrics(new MetricsRegistry());
      for (const e of events) session.observe('bench', e);
    });
    expectConstant(metrics, n, 'session metrics');
  });

  it('resume and fork of the stored session', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < events.length; i += 5_000) {
      await store.append('big', events.slice(i, i + 5_000).map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'any');
    }
    const runtime = createRuntime({ store, model: new ScriptedModel([]), writeBatchDelayMs: 1 });
    const resumed = await countWork(async () => {
      const agent = await runtime.resume('big');
      await agent.dispose();
    });
    expectConstant(resumed, n, 'resume');
    const forked = await countWork(async () => {
      const agent = await runtime.fork('big', { sessionId: 'forked' });
      await agent.dispose();
    });
    expectConstant(forked, n, 'fork');
  });
});
