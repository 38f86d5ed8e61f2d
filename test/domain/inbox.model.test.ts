import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InboxNotification, InboxSplicedData, InboxTarget } from '../../domain/events.js';
import { decideInbox, type InboxCommand } from '../../domain/inbox/inbox-decide.js';
import { evolveInbox, replayInbox } from '../../domain/inbox/inbox-evolve.js';
import { notificationsOfSplice } from '../../domain/inbox/inbox-notifications.js';
import { initialInboxState, nextStepItems, nextTurnItems, type InboxState } from '../../domain/inbox/inbox-state.js';
import type { UserMessage } from '../../domain/message.js';
import { msg } from '../../testing/log-builder.js';

/**
 * Model-based test: the Inbox against two plain arrays driven by Array.prototype.splice, over random sequences of
 * every operation with arbitrary numbers (NaN, negative, fractional, huge, ±Infinity).
 */

interface Model {
  nt: UserMessage[];
  ns: UserMessage[];
}
type Expected = { kind: 'refused'; code: string } | { kind: 'ok'; events: InboxSplicedData[]; removed: UserMessage[]; notes: InboxNotification[] };

const TURN = 1;
const num = fc.oneof(
  fc.integer({ min: -12, max: 12 }),
  fc.double({ min: -15, max: 15 }),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, 1e300, -1e300, -0, 2 ** 53, -(2 ** 53)),
);
const ID_POOL = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const message = fc
  .record({ id: fc.constantFrom(...ID_POOL), text: fc.string({ maxLength: 3 }), user: fc.boolean() })
  .map(({ id, text, user }) => msg(id, text, user ? { kind: 'user' } : { kind: 'plugin', plugin: 'p' }));
const target = fc.constantFrom<InboxTarget>('next-turn', 'next-step');
const command: fc.Arbitrary<InboxCommand> = fc.oneof(
  fc.record({ kind: fc.constant('splice' as const), target, start: num, deleteCount: fc.option(num, { nil: undefined }), insert: fc.array(message, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('append' as const), target, message }),
  fc.record({ kind: fc.constant('prepend' as const), target, message }),
  fc.record({ kind: fc.constant('replace' as const), id: fc.constantFrom(...ID_POOL), message }),
  fc.record({ kind: fc.constant('remove' as const), id: fc.constantFrom(...ID_POOL) }),
  fc.constant({ kind: 'clear' as const }),
  fc.record({ kind: fc.constant('claim' as const), target }),
);

const list = (m: Model, t: InboxTarget) => (t === 'next-turn' ? m.nt : m.ns);
const unique = (m: Model) => new Set([...m.nt, ...m.ns].map((x) => x.id)).size === m.nt.length + m.ns.length;

/** The model's splice: native Array.prototype.splice; the event's start is where a probe lands. */
const modelSplice = (m: Model, t: InboxTarget, start: number, deleteCount: number | undefined, insert: UserMessage[]): { next: Model; exp: Expected } => {
  const copy = [...list(m, t)];
  const removed = deleteCount === undefined ? copy.splice(start, Infinity, ...insert) : copy.splice(start, deleteCount, ...insert);
  const next = t === 'next-turn' ? { nt: copy, ns: m.ns } : { nt: m.nt, ns: copy };
  if (!unique(next)) return { next: m, exp: { kind: 'refused', code: 'duplicate-pending-id' } };
  if (removed.length === 0 && insert.length === 0) return { next: m, exp: { kind: 'ok', events: [], removed: [], notes: [] } };
  const probe: unknown[] = [...list(m, t)];
  const SENTINEL = {};
  probe.splice(start, 0, SENTINEL);
  const event: InboxSplicedData = {
    target: t,
    start: probe.indexOf(SENTINEL),
    ...(removed.length ? { removedCount: removed.length } : {}),
    inserted: insert,
    ...(removed.length ? { outcome: 'canceled' as const } : {}),
  };
  const notes: InboxNotification[] = [
    ...removed.map((message) => ({ type: 'agent/inbox/discarded' as const, message })),
    ...insert.map((message) => ({ type: 'agent/inbox/inserted' as const, message })),
  ];
  return { next, exp: { kind: 'ok', events: [event], removed, notes } };
};

const modelStep = (m: Model, c: InboxCommand): { next: Model; exp: Expected } => {
  switch (c.kind) {
    case 'splice':
      return modelSplice(m, c.target, c.start, c.deleteCount, [...c.insert]);
    case 'append':
      return modelSplice(m, c.target, list(m, c.target).length, 0, [c.message]);
    case 'prepend':
      return modelSplice(m, c.target, 0, 0, [c.message]);
    case 'replace':
    case 'remove': {
      const t: InboxTarget | undefined = m.nt.some((x) => x.id === c.id) ? 'next-turn' : m.ns.some((x) => x.id === c.id) ? 'next-step' : undefined;
      if (!t) return { next: m, exp: { kind: 'ok', events: [], removed: [], notes: [] } };
      const i = list(m, t).findIndex((x) => x.id === c.id);
      return modelSplice(m, t, i, 1, c.kind === 'replace' ? [c.message] : []);
    }
    case 'clear': {
      const events: InboxSplicedData[] = [];
      if (m.ns.length) events.push({ target: 'next-step', start: 0, removedCount: m.ns.length, inserted: [], outcome: 'canceled' });
      if (m.nt.length) events.push({ target: 'next-turn', start: 0, removedCount: m.nt.length, inserted: [], outcome: 'canceled' });
      const removed = [...m.ns, ...m.nt];
      return { next: { nt: [], ns: [] }, exp: { kind: 'ok', events, removed, notes: removed.map((message) => ({ type: 'agent/inbox/discarded', message })) } };
    }
    case 'claim': {
      const events: InboxSplicedData[] = [];
      const removed = [...m.ns];
      if (m.ns.length) events.push({ target: 'next-step', start: 0, removedCount: m.ns.length, inserted: [] });
      let nt = m.nt;
      if (c.target === 'next-turn' && m.nt.length) {
        events.push({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
        removed.push(m.nt[0]!);
        nt = m.nt.slice(1);
      }
      return { next: { nt, ns: [] }, exp: { kind: 'ok', events, removed, notes: removed.map((message) => ({ type: 'agent/inbox/claimed', message, turn: TURN })) } };
    }
  }
};

const idsOf = (s: InboxState) => ({ nt: nextTurnItems(s).map((m) => m.id), ns: nextStepItems(s).map((m) => m.id) });
const idsOfModel = (m: Model) => ({ nt: m.nt.map((x) => x.id), ns: m.ns.map((x) => x.id) });

describe('Inbox model-based property', () => {
  it('matches the plain-array model on random operation sequences (10,000 runs)', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 40 }), (commands) => {
        let state = initialInboxState();
        let model: Model = { nt: [], ns: [] };
        const log: InboxSplicedData[] = [];
        const notes: InboxNotification[] = [];
        const expectedNotes: InboxNotification[] = [];
        const history: { state: InboxState; model: Model }[] = [];
        for (const c of commands) {
          const { next, exp } = modelStep(model, c);
          const decision = decideInbox(c, state);
          if (exp.kind === 'refused') {
            expect(E.isLeft(decision) && decision.left.code).toBe(exp.code);
            continue;
          }
          if (E.isLeft(decision)) throw decision.left;
          expect(decision.right.events).toEqual(exp.events);
          expect(decision.right.removed).toEqual(exp.removed);
          history.push({ state, model });
          for (const e of decision.right.events) {
            notes.push(...notificationsOfSplice(state, e, TURN));
            state = evolveInbox(state, e);
            log.push(e);
          }
          expectedNotes.push(...exp.notes);
          model = next;
          expect(idsOf(state)).toEqual(idsOfModel(model));
          expect(nextTurnItems(state)).toEqual(model.nt);
          expect(unique(model)).toBe(true);
        }
        // replay(events) = live state
        const replayed = replayInbox(log, initialInboxState());
        expect(E.isRight(replayed) && idsOf(replayed.right)).toEqual(idsOfModel(model));
        // notifications derived from the durable splices = the expected live notifications
        expect(notes).toEqual(expectedNotes);
        // an old state never changes
        for (const h of history) expect(idsOf(h.state)).toEqual(idsOfModel(h.model));
      }),
      // 3,000 random programs by default; STEERLOG_MODEL_RUNS raises it (10,000 and more for a deep run)
      { numRuns: Number(process.env.STEERLOG_MODEL_RUNS ?? 3_000) },
    );
  });
});
