import fc from 'fast-check';
import type { EventId } from '../../../domain/brand.js';
import type { LogEvent, TurnEndReason } from '../../../domain/events.js';
import { nextStepItems, nextTurnItems } from '../../../domain/inbox/inbox-state.js';
import type { MessageSource } from '../../../domain/message.js';
import { LogBuilder, msg, uuidAt } from '../../../testing/log-builder.js';

type SourceKind = 'user' | 'plugin' | 'coordinator' | 'subagent-report';
const source = (kind: SourceKind): MessageSource =>
  kind === 'user' ? { kind: 'user' } : kind === 'plugin' ? { kind: 'plugin', plugin: 'p' } : kind === 'coordinator' ? { kind } : { kind, childSession: 'c' };

export type Op =
  | { readonly kind: 'followup'; readonly source: SourceKind }
  | { readonly kind: 'steer'; readonly source: SourceKind }
  | { readonly kind: 'replace'; readonly pick: number; readonly sameId: boolean }
  | { readonly kind: 'remove'; readonly pick: number }
  | { readonly kind: 'clear' }
  | { readonly kind: 'ignorable' }
  | {
      readonly kind: 'turn';
      /** Steps after the first claim (0 = a turn that claims and never steps: blocked/aborted/completed-rewritten). */
      readonly steps: number;
      readonly steerBetween: readonly SourceKind[];
      readonly end: TurnEndReason;
    };

const sourceArb = fc.constantFrom<SourceKind>('user', 'user', 'plugin', 'coordinator', 'subagent-report');
const endArb = fc.constantFrom<TurnEndReason>(
  { kind: 'completed' },
  { kind: 'completed' },
  { kind: 'blocked' },
  { kind: 'aborted', reason: { kind: 'user' } },
  { kind: 'interrupted' },
  { kind: 'error', error: { message: 'boom', code: 'provider' } },
);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('followup' as const), source: sourceArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('steer' as const), source: sourceArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), sameId: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'ignorable' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('turn' as const),
      steps: fc.nat({ max: 3 }),
      steerBetween: fc.array(sourceArb, { maxLength: 3 }),
      end: endArb,
    }),
  },
);

/** Runs the ops through LogBuilder (so every log is valid by construction) and returns the events. */
export const buildLog = (ops: readonly Op[], sessionId = 'session-1'): { builder: LogBuilder; events: LogEvent[] } => {
  const b = new LogBuilder(sessionId);
  let n = 0;
  const fresh = (kind: SourceKind) => msg(`m${++n}`, `text ${n}`, source(kind));
  const pending = () => [...nextTurnItems(b.inbox), ...nextStepItems(b.inbox)];
  for (const op of ops) {
    switch (op.kind) {
      case 'followup':
        b.followup(fresh(op.source));
        break;
      case 'steer':
        b.steer(fresh(op.source));
        break;
      case 'replace': {
        const all = pending();
        if (all.length === 0) break;
        const old = all[op.pick % all.length]!;
        const next = op.sameId ? msg(old.id, `edited ${++n}`, old.source) : fresh('user');
        b.do({ kind: 'replace', id: old.id, message: next });
        break;
      }
      case 'remove': {
        const all = pending();
        if (all.length > 0) b.do({ kind: 'remove', id: all[op.pick % all.length]!.id });
        break;
      }
      case 'clear':
        b.do({ kind: 'clear' });
        break;
      case 'ignorable': {
        const seq = b.events.length;
        b.events.push({ seq, id: uuidAt(seq + 1) as EventId, time: 1_700_000_000_000 + seq, type: 'x/extension', data: { n: seq }, ignorable: true } as never);
        break;
      }
      case 'turn': {
        b.turnStart();
        const batch = b.claim();
        if (op.steps > 0) {
          b.stepWith(batch);
          for (let s = 1; s < op.steps; s++) {
            const steer = op.steerBetween[s - 1];
            if (steer) b.steer(fresh(steer));
            b.claimAndStep();
          }
        } else if (op.end.kind === 'completed' && batch.length > 0) {
          // a claim rewritten away: nothing ran
        }
        const late = op.steerBetween.at(-1);
        if (late && op.steps === 0) b.steer(fresh(late)); // parks for the next turn
        b.turnEnd(op.steps === 0 || op.end.kind !== 'blocked' ? op.end : { kind: 'completed' });
        break;
      }
    }
  }
  return { builder: b, events: b.events as LogEvent[] };
};

export const logArb = (maxOps = 40): fc.Arbitrary<{ ops: Op[]; builder: LogBuilder; events: LogEvent[] }> =>
  fc.array(opArb, { maxLength: maxOps }).map((ops) => ({ ops, ...buildLog(ops) }));
