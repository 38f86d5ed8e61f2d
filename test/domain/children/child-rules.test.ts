import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { authoriseDelivery, authoriseInterrupt } from '../../../domain/children/child-authorisation.js';
import { foldChildDescriptor, resumableDescriptor } from '../../../domain/children/child-descriptor.js';
import { hasChildCode, isChildError } from '../../../domain/children/child-errors.js';
import { childState, evolveAcceptedIds } from '../../../domain/children/child-state.js';
import { outcomeSentence, reportText, settlementOf, settlementOutcome } from '../../../domain/children/settlement.js';
import { foldConsumedWork } from '../../../domain/consumed-work.js';
import type { SubagentDescriptorData } from '../../../domain/children/subagent-events.js';
import type { SessionCreatedData, TurnEndReason } from '../../../domain/events.js';
import { parseEvent } from '../../../domain/parse-event.js';
import { LogBuilder, msg, uuidAt } from '../../../testing/log-builder.js';

const descriptor = (label: string, mode: 'continuable' | 'one-shot' = 'continuable'): SubagentDescriptorData => ({ version: 1, mode, provider: 'spawn', label });
const header = (over: Partial<SessionCreatedData> = {}): SessionCreatedData => ({
  sessionId: 'child-1',
  createdAt: 0,
  kind: 'continuable',
  parentSession: 'parent-1',
  origin: 'subagent',
  delegationDepth: 1,
  ...over,
});

describe('children: the descriptor fold', () => {
  it('reads the last descriptor at or after the seed and never one inherited inside the seed', () => {
    const log = new LogBuilder('child-1', 0, 'continuable');
    log.add('subagent/descriptor', descriptor('ancestor')); // seq 1: inside a seed of length 2
    log.add('session/end-seed', {});
    expect(foldChildDescriptor(header({ seedLength: 2 }), log.events)).toBeNull();
    expect(E.isLeft(resumableDescriptor('child-1', header({ seedLength: 2 }), log.events))).toBe(true);
    log.add('subagent/descriptor', descriptor('mine'));
    expect(foldChildDescriptor(header({ seedLength: 2 }), log.events)?.label).toBe('mine');
    // without a seed, the first descriptor is the child's own and the later one wins
    expect(foldChildDescriptor(header(), log.events)?.label).toBe('mine');
  });

  it('refuses a one-shot descriptor with subagent-not-resumable', () => {
    const log = new LogBuilder('child-1', 0, 'one-shot').add('subagent/descriptor', descriptor('x', 'one-shot'));
    const result = resumableDescriptor('child-1', header({ kind: 'one-shot' }), log.events);
    expect(E.isLeft(result) && hasChildCode(result.left, 'subagent-not-resumable')).toBe(true);
  });

  it('parses the child events through the log parser and refuses unknown descriptor fields', () => {
    const ok = parseEvent({ seq: 1, id: uuidAt(1), time: 0, type: 'subagent/descriptor', data: descriptor('x') });
    expect(E.isRight(ok)).toBe(true);
    const bad = parseEvent({ seq: 1, id: uuidAt(1), time: 0, type: 'subagent/descriptor', data: { ...descriptor('x'), extra: 1 } });
    expect(E.isLeft(bad) && bad.left.code).toBe('invalid-event-data');
    const end = parseEvent({ seq: 2, id: uuidAt(2), time: 0, type: 'subagent/end', data: { runId: 'r', childSessionId: 'c', mode: 'continuable', epoch: 1, stopReason: 'nope' } });
    expect(E.isLeft(end)).toBe(true);
  });
});

describe('children: authorisation', () => {
  it('admits only the exact live parent that the header names', () => {
    expect(authoriseDelivery({ sessionId: 'parent-1', isLiveEntry: true }, 'child-1', header())).toEqual(E.right(true));
    const stale = authoriseDelivery({ sessionId: 'parent-1', isLiveEntry: false }, 'child-1', header());
    const other = authoriseDelivery({ sessionId: 'parent-2', isLiveEntry: true }, 'child-1', header());
    for (const r of [stale, other]) expect(E.isLeft(r) && hasChildCode(r.left, 'subagent-unauthorized')).toBe(true);
  });

  it('interrupt: user must name the parent, an ancestor must be in the ancestry, self and stale callers are refused even for absent targets', () => {
    const target = { childSessionId: 'c', parentSession: 'p', ancestry: ['p', 'root'] };
    expect(authoriseInterrupt({ kind: 'user', parentSessionId: 'p' }, 'c', target)).toEqual(E.right(true));
    expect(E.isLeft(authoriseInterrupt({ kind: 'user', parentSessionId: 'q' }, 'c', target))).toBe(true);
    expect(authoriseInterrupt({ kind: 'ancestor', callerSessionId: 'root', callerIsLiveEntry: true }, 'c', target)).toEqual(E.right(true));
    expect(E.isLeft(authoriseInterrupt({ kind: 'ancestor', callerSessionId: 'sibling', callerIsLiveEntry: true }, 'c', target))).toBe(true);
    expect(E.isLeft(authoriseInterrupt({ kind: 'ancestor', callerSessionId: 'c', callerIsLiveEntry: true }, 'c', null))).toBe(true);
    expect(E.isLeft(authoriseInterrupt({ kind: 'ancestor', callerSessionId: 'root', callerIsLiveEntry: false }, 'c', null))).toBe(true);
    // an absent target is an accepted no-op for any other caller
    expect(authoriseInterrupt({ kind: 'user', parentSessionId: 'anyone' }, 'c', null)).toEqual(E.right(false));
    expect(authoriseInterrupt({ kind: 'ancestor', callerSessionId: 'root', callerIsLiveEntry: true }, 'c', null)).toEqual(E.right(false));
  });

  it('child errors are recognised by code', () => {
    const r = authoriseDelivery({ sessionId: 'x', isLiveEntry: true }, 'child-1', header());
    expect(E.isLeft(r) && isChildError(r.left) && r.left.childSessionId).toBe('child-1');
    expect(isChildError(new Error('subagent-unauthorized'))).toBe(false);
  });
});

describe('children: state and accepted ids', () => {
  it('derives running / waiting / settled / absent from the live facts', () => {
    const base = { resident: true, agentRunning: false, acceptedPending: 0, liveChildren: 0 };
    expect(childState({ ...base, resident: false, agentRunning: true })).toBe('absent');
    expect(childState({ ...base, agentRunning: true })).toBe('running');
    expect(childState({ ...base, acceptedPending: 1 })).toBe('running');
    expect(childState({ ...base, liveChildren: 2 })).toBe('waiting');
    expect(childState(base)).toBe('settled');
  });

  it('an accepted id leaves the set on claim or discard, never on insertion', () => {
    const a = msg('a');
    const s0: ReadonlySet<string> = new Set(['a', 'b']);
    expect(evolveAcceptedIds(s0, { type: 'agent/inbox/inserted', message: a })).toBe(s0);
    expect([...evolveAcceptedIds(s0, { type: 'agent/inbox/claimed', message: a, turn: 1 })]).toEqual(['b']);
    expect([...evolveAcceptedIds(s0, { type: 'agent/inbox/discarded', message: msg('b') })]).toEqual(['a']);
    expect(evolveAcceptedIds(s0, { type: 'agent/inbox/claimed', message: msg('z'), turn: 1 })).toBe(s0);
  });
});

describe('children: the settlement account', () => {
  it('says what the epoch did, with its closing message (hand-written expectations)', () => {
    const done = new LogBuilder('c').followup(msg('m1')).runTurn();
    const account = settlementOf('c', done.events);
    expect(account.stopReason).toBe('completed');
    expect(account.content).toEqual([{ type: 'text', text: 'Background subagent c completed its work.\nIts closing message:\nok' }]);
    expect(account.source).toEqual({ kind: 'subagent-settled', form: 'notice', summary: 'Background subagent c completed its work.', senderSessionId: 'c' });

    const stopped = new LogBuilder('c').followup(msg('m1')).runTurn({ kind: 'aborted', reason: { kind: 'user' } });
    expect(settlementOf('c', stopped.events).content[0]).toEqual({ type: 'text', text: 'Background subagent c was stopped before it finished.\nIts closing message:\nok' });

    const declined = new LogBuilder('c').followup(msg('m1')).turnStart();
    declined.claim();
    declined.turnEnd({ kind: 'blocked' });
    expect(settlementOf('c', declined.events).content[0]).toEqual({ type: 'text', text: 'Background subagent c declined the task.\nIt left no closing message.' });

    expect(settlementOf('c', new LogBuilder('c').events).stopReason).toBe('completed');
    expect(reportText('c', 'half done')).toBe('Background subagent c reported:\nhalf done');
  });

  // The reference harness's rule, every (last turn reason × accounted × dropped-unrun) case, through the real fold.
  const REASONS: readonly TurnEndReason[] = [
    { kind: 'completed' },
    { kind: 'max-tokens' },
    { kind: 'blocked' },
    { kind: 'interrupted' },
    { kind: 'aborted', reason: { kind: 'parent' } },
    { kind: 'error', error: { message: 'boom', code: 'provider' } },
  ];
  // [last turn reason, the last turn accounted for work, queued work dropped unrun after it] → outcome
  const TABLE: readonly (readonly [TurnEndReason['kind'] | 'no turn', boolean, boolean, string])[] = [
    ['no turn', false, false, 'completed'],
    ['no turn', false, true, 'stopped'],
    ['completed', true, false, 'completed'],
    ['completed', true, true, 'stopped'],
    ['completed', false, false, 'completed'],
    ['completed', false, true, 'stopped'],
    ['max-tokens', true, false, 'out-of-room'],
    ['max-tokens', true, true, 'out-of-room'],
    ['max-tokens', false, false, 'completed'],
    ['max-tokens', false, true, 'stopped'],
    ['blocked', true, false, 'declined'],
    ['blocked', true, true, 'declined'],
    ['blocked', false, false, 'completed'],
    ['blocked', false, true, 'stopped'],
    ['interrupted', true, false, 'stopped'],
    ['interrupted', true, true, 'stopped'],
    ['interrupted', false, false, 'completed'],
    ['interrupted', false, true, 'stopped'],
    ['aborted', true, false, 'stopped'],
    ['aborted', true, true, 'stopped'],
    ['aborted', false, false, 'completed'],
    ['aborted', false, true, 'stopped'],
    ['error', true, false, 'failed'],
    ['error', true, true, 'failed'],
    ['error', false, false, 'completed'],
    ['error', false, true, 'stopped'],
  ];

  it.each(TABLE)('last turn %s, accounted %s, dropped unrun %s: %s', (kind, accounted, dropped, outcome) => {
    const log = new LogBuilder('c');
    if (kind !== 'no turn') {
      const reason = REASONS.find((r) => r.kind === kind)!;
      log.followup(msg('m1')).turnStart();
      // a turn accounts when it stepped (`completed` and `max-tokens` need one), or claimed and ended otherwise
      if (accounted) {
        if (kind === 'completed' || kind === 'max-tokens') log.claimAndStep('done');
        else log.claim();
      }
      log.turnEnd(reason);
    }
    if (dropped) {
      log.followup(msg('m2'));
      log.do({ kind: 'clear' });
    }
    const verdict = foldConsumedWork(log.events);
    expect(verdict.end !== undefined).toBe(accounted);
    expect(verdict.droppedUnrun).toBe(dropped);
    expect(settlementOutcome(verdict)).toBe(outcome);
    expect(settlementOf('c', log.events).stopReason).toBe(outcome);
  });

  it('work canceled unrun after the last accounting turn reads as stopped', () => {
    const log = new LogBuilder('c').followup(msg('m1')).runTurn().followup(msg('m2'));
    log.do({ kind: 'clear' });
    expect(settlementOf('c', log.events).stopReason).toBe('stopped');
  });

  it('the stop reason follows the last accounting turn, against a plain model (property)', () => {
    const reasons: TurnEndReason[] = [
      { kind: 'completed' },
      { kind: 'max-tokens' },
      { kind: 'blocked' },
      { kind: 'interrupted' },
      { kind: 'aborted', reason: { kind: 'parent' } },
      { kind: 'error', error: { message: 'boom', code: 'provider' } },
    ];
    const expected: Record<TurnEndReason['kind'], string> = {
      completed: 'completed',
      'max-tokens': 'out-of-room',
      blocked: 'declined',
      interrupted: 'stopped',
      aborted: 'stopped',
      error: 'failed',
    };
    fc.assert(
      fc.property(fc.array(fc.record({ reason: fc.constantFrom(...reasons), steps: fc.boolean(), text: fc.constantFrom('', 'done', 'half') }), { maxLength: 6 }), (turns) => {
        const log = new LogBuilder('c');
        let modelReason: string | null = null;
        let modelClosing: string | null = null;
        turns.forEach((t, i) => {
          log.followup(msg(`m${i}`)).turnStart();
          if (t.steps) {
            log.claimAndStep(t.text);
            if (t.text !== '') modelClosing = t.text;
          } else log.claim();
          log.turnEnd(t.reason);
          // a turn accounts when it stepped, or when it claimed and did not end `completed`
          if (t.steps || t.reason.kind !== 'completed') modelReason = expected[t.reason.kind];
        });
        const account = settlementOf('c', log.events);
        expect(account.stopReason).toBe(modelReason ?? 'completed');
        expect(account.closingText).toBe(modelClosing);
        expect(account.content[0]).toEqual({ type: 'text', text: `${outcomeSentence('c', account.stopReason)}\n${modelClosing === null ? 'It left no closing message.' : `Its closing message:\n${modelClosing}`}` });
      }),
      { numRuns: 300 },
    );
  });
});
