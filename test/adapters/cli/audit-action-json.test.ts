import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionJson } from '../../../adapters/cli/audit-json-writer.js';
import type { ActorAction, ActorActionKind } from '../../../domain/actor-actions.js';

const KINDS: readonly ActorActionKind[] = ['created', 'forked', 'admitted', 'edited', 'moved', 'canceled', 'stopped', 'woke', 'erased'];

describe('actionJson', () => {
  it('writes plain and escaped strings as JSON.stringify does', () => {
    for (const id of ['m-1', 'a"b', 'back\\slash', 'line\nbreak', '\u0000', 'é\u2028😀', '\ud800', 'x\udc00y', 'x'.repeat(65), `${'y'.repeat(70)}"`, '']) {
      const a: ActorAction = { seq: 3, time: 1700000000000, kind: 'admitted', id, turn: null, actor: id, actorKind: 'user' };
      expect(actionJson(a)).toBe(JSON.stringify(a));
    }
  });

  it('equals JSON.stringify for any action (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.integer({ min: 0, max: 2 ** 52 }),
        fc.constantFrom(...KINDS),
        fc.option(fc.string({ unit: 'binary' })),
        fc.option(fc.nat()),
        fc.option(fc.string({ unit: 'binary' })),
        fc.option(fc.constantFrom('user', 'agent', 'system')),
        (seq, time, kind, id, turn, actor, actorKind) => {
          const a = { seq, time, kind, id, turn, actor, actorKind } as ActorAction;
          expect(actionJson(a)).toBe(JSON.stringify(a));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
