import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createExtrasCollector } from '../../audit/audit-extras.js';
import { createAuditor } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { initialFate, stepFateInPlace, type MutableInputFate } from '../../domain/input-fate.js';
import {
  claimedFacts,
  initialMessageFactState,
  stepMessageFactRecords,
  stepMessageFacts,
  turnEndedFacts,
  type MessageFact,
  type SpliceClaim,
  type TurnEnded,
} from '../../domain/message-facts.js';
import { parseEvent } from '../../domain/parse-event.js';
import { ADVERSARIAL_SHAPES, adversarialLog } from '../../bench/support/adversarial-logs.js';
import { logArb } from '../projections/support/random-log.js';

/**
 * A turn's end as one record (`stepMessageFactRecords`, `TurnEnded`) against its `turn-ended` facts spelled out one
 * per claimed id (`stepMessageFacts`): the same facts in the same order, and the same fates when the audit steps the
 * record (`stepFatesTurnEnded`, one shared `turnEnd`) instead of each fact — on random valid logs and on small
 * adversarial logs (whose ids are used again once they leave the lists, so a long turn claims one id many times).
 */

/** Every other event gets an actor, so facts that carry metadata are compared too. */
const withActors = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e, i) => (i % 2 === 1 && e.metadata === undefined ? ({ ...e, metadata: { actor: `user-${i % 5}` } } as LogEvent) : e));

const adversarialEvents = (shape: (typeof ADVERSARIAL_SHAPES)[number]): LogEvent[] =>
  [...adversarialLog(shape, 3_000, 50)].map((env) => {
    const parsed = parseEvent(env, { expectedSeq: env.seq });
    if (E.isLeft(parsed)) throw parsed.left;
    return parsed.right;
  });

/** The facts of both derivations, event by event, must be the same JSON; returns how many turn-ended facts there were. */
const expectSameFacts = (events: readonly LogEvent[]): number => {
  let whole = initialMessageFactState();
  let records = initialMessageFactState();
  let claims = initialMessageFactState();
  // the auditor's fold: claims as records, each state consumed by the next (written over, the same object)
  let consumed = initialMessageFactState();
  const consumedState = consumed;
  let ended = 0;
  for (const event of events) {
    const a = stepMessageFacts(whole, event);
    const b = stepMessageFactRecords(records, event);
    const c = stepMessageFactRecords(claims, event, { claimRecords: true });
    const d = stepMessageFactRecords(consumed, event, { claimRecords: true, consume: true, notifications: false });
    if (E.isLeft(a) || E.isLeft(b) || E.isLeft(c) || E.isLeft(d)) throw new Error(`seq ${event.seq}: refused`);
    expect(d.right.state).toBe(consumedState);
    expect(JSON.stringify([d.right.facts, d.right.claim, d.right.turnEnded && turnEndedFacts(d.right.turnEnded)])).toBe(
      JSON.stringify([c.right.facts, c.right.claim, c.right.turnEnded && turnEndedFacts(c.right.turnEnded)]),
    );
    consumed = d.right.state;
    // without the option no claim record; with it, a claim's facts only as the record (the event's only facts)
    expect(b.right.claim).toBe(null);
    expect(c.right.facts.some((f) => f.kind === 'claimed')).toBe(false);
    const claim = c.right.claim;
    if (claim !== null) {
      expect(claim.messages.length).toBeGreaterThan(0);
      expect(c.right.facts).toHaveLength(0);
      for (const id of new Set(claim.messages.map((m) => m.id))) expect(JSON.stringify(claimedFacts(claim, id))).toBe(JSON.stringify(claimedFacts(claim).filter((f) => f.id === id)));
    }
    const fromClaims = [...(claim === null ? c.right.facts : claimedFacts(claim)), ...(c.right.turnEnded === null ? [] : turnEndedFacts(c.right.turnEnded))];
    expect(JSON.stringify(fromClaims)).toBe(JSON.stringify(a.right.facts));
    claims = c.right.state;
    expect(b.right.facts.some((f) => f.kind === 'turn-ended')).toBe(false);
    const t = b.right.turnEnded;
    const spelled = t === null ? [] : turnEndedFacts(t);
    expect(JSON.stringify([...b.right.facts, ...spelled])).toBe(JSON.stringify(a.right.facts));
    if (t !== null) {
      expect(t.ids.length).toBeGreaterThan(0);
      // why's question: only the facts about one id
      for (const id of new Set(spelled.map((f) => f.id))) expect(JSON.stringify(turnEndedFacts(t, id))).toBe(JSON.stringify(spelled.filter((f) => f.id === id)));
    }
    ended += spelled.length;
    whole = a.right.state;
    records = b.right.state;
  }
  return ended;
};

/**
 * Each input's fate, two ways: the audit's collector fed the records (`factRecords`, as the CLI's audit now is), and
 * every fact spelled out stepped into a record per id (`stepFateInPlace`, the derivation before the records).
 */
const expectSameFates = async (events: readonly LogEvent[], claimRecords = false): Promise<void> => {
  const collector = createExtrasCollector('s');
  const auditor = createAuditor('s', { onFactRecords: collector.factRecords, claimRecords, onTurn: () => {}, onMessage: () => {} });
  const old = new Map<string, MutableInputFate>();
  let state = initialMessageFactState();
  for (const event of events) {
    auditor.pushValue(JSON.parse(JSON.stringify(event)));
    const step = stepMessageFacts(state, event);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
    for (const f of step.right.facts) {
      let fate = old.get(f.id);
      if (fate === undefined) old.set(f.id, (fate = initialFate(f.id)));
      stepFateInPlace(fate, f);
    }
  }
  expect(auditor.report().ok).toBe(true);
  const { fates } = await collector.result();
  expect(JSON.stringify(fates)).toBe(JSON.stringify([...old.values()]));
};

describe('message facts with a turn end as one record', () => {
  it('state the same facts as stepMessageFacts, in order, on random valid logs (JSON bytes)', () => {
    fc.assert(
      fc.property(logArb(60), ({ events }) => {
        expectSameFacts(withActors(events));
      }),
      { numRuns: 300 },
    );
  });

  it('give the audit the same fates as stepping every turn-ended fact, on random valid logs', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(60), async ({ events }) => {
        await expectSameFates(withActors(events));
        await expectSameFates(withActors(events), true);
      }),
      { numRuns: 200 },
    );
  });

  it.each(ADVERSARIAL_SHAPES)('state the same facts and give the same fates on the adversarial log "%s"', async (shape) => {
    const events = adversarialEvents(shape);
    const ended = expectSameFacts(events);
    if (shape === 'long-turn') expect(ended).toBeGreaterThan(400);
    await expectSameFates(events);
    await expectSameFates(events, true);
  });

  it('hand the audit a turn of many claims as one record, and one turnEnd record shared by the fates it decides', async () => {
    const events = adversarialEvents('long-turn');
    const collector = createExtrasCollector('s');
    const ends: TurnEnded[] = [];
    let turnEndedFactsSeen = 0;
    const auditor = createAuditor('s', {
      onFactRecords: (event, facts: readonly MessageFact[], turnEnded) => {
        turnEndedFactsSeen += facts.filter((f) => f.kind === 'turn-ended').length;
        if (turnEnded !== null) ends.push(turnEnded);
        collector.factRecords(event, facts, turnEnded);
      },
    });
    for (const event of events) auditor.pushValue(JSON.parse(JSON.stringify(event)));
    expect(turnEndedFactsSeen).toBe(0);
    expect(ends).toHaveLength(1);
    const claims = events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { removedCount?: number }).removedCount).length;
    expect(ends[0]!.ids.length).toBe(claims);
    // the long turn claims each step's steer: the ids come back, so a few ids were claimed many times
    const { fates } = await collector.result();
    const ended = fates.filter((f) => f.turnEnd !== null);
    expect(ended.length).toBeGreaterThan(0);
    expect(ended.length).toBeLessThan(claims);
    for (const f of ended) expect(f.turnEnd).toBe(ended[0]!.turnEnd);
  });

  it('hand the audit a splice claiming many messages as one record, and one claimed record shared by its fates', async () => {
    const events = adversarialEvents('big-steps');
    const collector = createExtrasCollector('s');
    const claims: SpliceClaim[] = [];
    let claimedFactsSeen = 0;
    const auditor = createAuditor('s', {
      claimRecords: true,
      onFactRecords: (event, facts: readonly MessageFact[], turnEnded, claim) => {
        claimedFactsSeen += facts.filter((f) => f.kind === 'claimed').length;
        if (claim !== null) claims.push(claim);
        collector.factRecords(event, facts, turnEnded, claim);
      },
    });
    for (const event of events) auditor.pushValue(JSON.parse(JSON.stringify(event)));
    expect(auditor.report().ok).toBe(true);
    expect(claimedFactsSeen).toBe(0);
    const spliceClaims = events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { removedCount?: number; outcome?: string }).removedCount && (e.data as { outcome?: string }).outcome !== 'canceled');
    expect(claims).toHaveLength(spliceClaims.length);
    const big = claims.find((c) => c.messages.length > 1);
    expect(big).toBeDefined();
    const { fates } = await collector.result();
    // the last claim of each message it claimed decides its fate's claimed record: one record for the whole splice
    const last = claims[claims.length - 1]!;
    const ids = new Set<string>(last.messages.map((m) => m.id));
    const shared = fates.filter((f) => ids.has(f.id)).map((f) => f.claimed);
    expect(shared.length).toBe(ids.size);
    for (const c of shared) expect(c).toBe(shared[0]);
    expect(shared[0]).toEqual({ seq: last.seq, time: last.time, turn: last.turn, step: last.step });
  });
});
