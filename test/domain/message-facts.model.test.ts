import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountsForClaim } from '../../domain/consumed-work.js';
import type { InboxSplicedData, InboxTarget, LogEvent, TurnEndReason } from '../../domain/events.js';
import { listOf } from '../../domain/inbox/inbox-state.js';
import * as L from '../../domain/inbox/pending-list.js';
import type { UserMessage } from '../../domain/message.js';
import { initialMessageFactState, stepMessageFacts, type MessageFact } from '../../domain/message-facts.js';
import { samePayload } from '../../domain/sealed-content.js';
import { inSeed, initialSessionState, stepSession, type SessionState } from '../../domain/session-fold.js';
import { logArb } from '../projections/support/random-log.js';

/**
 * The model: the message facts as first written, reading each splice's removed messages from the list *before* the
 * splice (a second read of the old version, which the fold no longer does), with sets and spreads everywhere. The
 * fold must state the same facts, byte for byte as JSON (the key order is `why --json`'s), on random valid logs.
 */
interface Claimed { readonly message: UserMessage; readonly step: number }
interface Model {
  session: SessionState;
  awaiting: Claimed[];
  inStep: Claimed[];
  entered: string[];
  turnClaimed: string[];
  stepped: boolean;
  lastCancel: { seq: number; target: InboxTarget; ids: string[] } | null;
}
const modelFacts = (state: Model, event: LogEvent): { state: Model; facts: MessageFact[] } => {
  const stepped = stepSession(state.session, event);
  if (E.isLeft(stepped)) throw stepped.left;
  const before = state.session;
  const base: Model = { ...state, session: stepped.right.state };
  if (event.seq === 0 || inSeed(before, event.seq)) return { state: base, facts: [] };
  const at = { seq: event.seq, time: event.time };
  const meta = event.metadata ? { metadata: event.metadata } : {};
  const open = before.turns.openTurn;
  switch (event.type) {
    case 'agent/inbox/spliced': {
      const d = event.data as InboxSplicedData;
      const removed = d.removedCount ? L.slice(listOf(before.inbox, d.target), d.start, d.removedCount) : [];
      if (d.removedCount && d.outcome !== 'canceled') {
        const turn = open?.turn ?? before.turns.lastTurn;
        const step = (open?.steps ?? 0) + 1;
        const batch = removed.map((m) => m.id);
        return {
          state: { ...base, awaiting: [...state.awaiting, ...removed.map((message) => ({ message, step }))], turnClaimed: [...state.turnClaimed, ...batch], lastCancel: null },
          facts: removed.map((m) => ({ kind: 'claimed', ...at, id: m.id, target: d.target, turn, step, batch })),
        };
      }
      const facts: MessageFact[] = [];
      const ins = new Set(d.inserted.map((m) => m.id));
      for (const m of removed) if (!ins.has(m.id)) facts.push({ kind: 'canceled', ...at, id: m.id, target: d.target, ...meta });
      const rem = new Set(removed.map((m) => m.id));
      const c = state.lastCancel;
      const moved = c !== null && c.seq === event.seq - 1 && c.target !== d.target ? new Set(c.ids) : new Set<string>();
      for (const m of d.inserted) {
        if (rem.has(m.id)) facts.push({ kind: 'edited', ...at, id: m.id, target: d.target, ...meta });
        else if (moved.has(m.id)) facts.push({ kind: 'moved', ...at, id: m.id, to: d.target, ...meta });
        else facts.push({ kind: 'admitted', ...at, id: m.id, target: d.target, source: m.source, ...meta });
      }
      const pure = d.outcome === 'canceled' && d.inserted.length === 0;
      return { state: { ...base, lastCancel: pure ? { seq: event.seq, target: d.target, ids: removed.map((m) => m.id) } : null }, facts };
    }
    case 'step/start':
      return { state: { ...base, inStep: state.awaiting, awaiting: [], entered: [], stepped: true, lastCancel: null }, facts: [] };
    case 'user/message': {
      const m = event.data as UserMessage;
      const claim = state.inStep.find((x) => x.message.id === m.id);
      const turn = open?.turn ?? before.turns.lastTurn;
      return {
        state: { ...base, entered: [...state.entered, m.id], lastCancel: null },
        facts: [{ kind: 'entered', ...at, id: m.id, turn, step: before.turns.openStep ?? 0, rewritten: claim ? !samePayload(claim.message, m) : false }],
      };
    }
    case 'step/end':
      return {
        state: { ...base, inStep: [], entered: [], lastCancel: null },
        facts: state.inStep.filter((x) => !state.entered.includes(x.message.id)).map((x) => ({ kind: 'dropped', ...at, id: x.message.id, turn: open?.turn ?? 0, step: before.turns.openStep ?? 0 })),
      };
    case 'turn/end': {
      const { turn, reason } = event.data as { turn: number; reason: TurnEndReason };
      const accounted = state.stepped || (state.turnClaimed.length > 0 && accountsForClaim(reason));
      return {
        state: { ...base, awaiting: [], inStep: [], entered: [], turnClaimed: [], stepped: false, lastCancel: null },
        facts: [
          ...state.awaiting.map((x): MessageFact => ({ kind: 'rejected', ...at, id: x.message.id, turn, reason })),
          ...state.turnClaimed.map((id): MessageFact => ({ kind: 'turn-ended', ...at, id, turn, reason, accounted })),
        ],
      };
    }
    case 'turn/start':
      return { state: { ...base, awaiting: [], inStep: [], entered: [], turnClaimed: [], stepped: false, lastCancel: null }, facts: [] };
    default:
      return { state: { ...base, lastCancel: event.type === 'chain/head' || event.type === 'session/erased' ? state.lastCancel : null }, facts: [] };
  }
};

/** Every other event gets an actor, so facts that carry metadata are compared too. */
const withActors = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e, i) => (i % 2 === 1 && e.metadata === undefined ? ({ ...e, metadata: { actor: `user-${i % 5}` } } as LogEvent) : e));

describe('message facts: the fold states what the model states', () => {
  it('on random valid logs, event by event (JSON bytes, so key order too)', () => {
    fc.assert(
      fc.property(logArb(60), ({ events }) => {
        let model: Model = { session: initialSessionState(), awaiting: [], inStep: [], entered: [], turnClaimed: [], stepped: false, lastCancel: null };
        let fold = initialMessageFactState();
        let total = 0;
        for (const event of withActors(events)) {
          const expected = modelFacts(model, event);
          const got = stepMessageFacts(fold, event);
          if (E.isLeft(got)) throw got.left;
          expect(JSON.stringify(got.right.facts)).toBe(JSON.stringify(expected.facts));
          model = expected.state;
          fold = got.right.state;
          total += expected.facts.length;
        }
        return total >= 0;
      }),
      { numRuns: 300 },
    );
  });

  it('a splice that removes nothing and one that claims report the removed messages from the step itself', () => {
    const { events } = fc.sample(logArb(60), { numRuns: 1, seed: 7 })[0]!;
    let session = initialSessionState();
    for (const event of events) {
      const step = stepSession(session, event);
      if (E.isLeft(step)) throw step.left;
      if (event.type === 'agent/inbox/spliced') {
        const d = event.data as InboxSplicedData;
        const expected = d.removedCount ? L.slice(listOf(session.inbox, d.target), d.start, d.removedCount) : [];
        expect((step.right.removed ?? []).map((m) => m.id)).toEqual(expected.map((m) => m.id));
      } else expect(step.right.removed).toBeUndefined();
      session = step.right.state;
    }
  });
});
