import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UserMessage } from '../../domain/message.js';
import { msg } from '../../testing/log-builder.js';
import { ids, setup } from './harness.js';

/**
 * `agent.inbox.splice` takes its coordinates like `Array.prototype.splice`: in particular only an omitted
 * deleteCount means "to the end"; an explicit `undefined` counts as 0.
 */
describe('agent.inbox.splice coordinates are those of Array.prototype.splice', () => {
  it('an explicit undefined deleteCount removes nothing; an omitted one removes to the end', () => {
    const h = setup();
    h.agent.inbox.splice('next-turn', 0, 0, msg('A'), msg('B'), msg('C'));
    expect(h.agent.inbox.splice('next-turn', 1, undefined, msg('D'))).toEqual([]);
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['A', 'D', 'B', 'C']);
    expect(h.agent.inbox.splice('next-turn', 1, undefined)).toEqual([]);
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['A', 'D', 'B', 'C']);
    expect(ids(h.agent.inbox.splice('next-turn', 2))).toEqual(['B', 'C']);
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['A', 'D']);
    expect(h.durable()).toEqual(['SPL(NT,0,[A,B,C])', 'SPL(NT,1,[D])', 'SPL(NT,2,rc=2,C)']);
  });

  it('removes and inserts exactly what Array.prototype.splice does, for any argument list', () => {
    const coordinate = fc.oneof(fc.integer({ min: -6, max: 6 }), fc.constantFrom(undefined, Number.NaN, Infinity, -Infinity, 1.5, -0.5));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: -6, max: 6 }),
        fc.oneof(fc.constant([] as const), coordinate.map((d) => [d] as const)),
        fc.integer({ min: 0, max: 2 }),
        (length, start, deleteArgs, inserts) => {
          const h = setup();
          const initial = Array.from({ length }, (_, i) => msg(`p${i}`));
          if (length > 0) h.agent.inbox.splice('next-turn', 0, 0, ...initial);
          const insert = Array.from({ length: inserts }, (_, i) => msg(`n${i}`));
          const model: UserMessage[] = [...initial];
          const expectedRemoved =
            deleteArgs.length === 0 && inserts === 0 ? model.splice(start) : model.splice(start, deleteArgs[0] as number, ...insert);
          const removed =
            deleteArgs.length === 0 && inserts === 0
              ? h.agent.inbox.splice('next-turn', start)
              : h.agent.inbox.splice('next-turn', start, deleteArgs[0], ...insert);
          expect(ids(removed)).toEqual(ids(expectedRemoved));
          expect(ids(h.agent.inbox.nextTurn)).toEqual(ids(model));
        },
      ),
      { numRuns: 300 },
    );
  });
});
