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

/** The inbox holds the session log's frozen copy of each message it inserted (as a resumed session's fold does). */
describe('the messages an inbox holds', () => {
  it('are the ones its splice events carry: one copy in memory, equal to what was sent, detached from it', () => {
    const h = setup();
    const sent = [msg('A'), msg('B')];
    h.agent.inbox.splice('next-turn', 0, 0, ...sent);
    const splice = h.agent.events.findLast((e) => e.type === 'agent/inbox/spliced')!;
    const inserted = (splice.data as { inserted: readonly UserMessage[] }).inserted;
    expect(h.agent.inbox.nextTurn).toEqual(sent);
    expect(h.agent.inbox.nextTurn[0]).toBe(inserted[0]);
    expect(h.agent.inbox.nextTurn[1]).toBe(inserted[1]);
    expect(h.agent.inbox.nextTurn[0]).not.toBe(sent[0]);
    expect(Object.isFrozen(h.agent.inbox.nextTurn[0])).toBe(true);
    // what a removal hands back is the held copy
    const removed = h.agent.inbox.splice('next-turn', 0, 1);
    expect(removed[0]).toBe(inserted[0]);
  });

  it('keep a message’s reader-side sealed sidecar that the log’s copy drops (the decided splice is applied as it is)', () => {
    const h = setup();
    const sealed = { ...msg('S'), sealed: { alg: 'aes-256-gcm', keyId: 'k', iv: 'AAAAAAAAAAAAAAAA', ct: 'AA==', mac: 'AA==', state: 'erased' } } as unknown as UserMessage;
    h.agent.inbox.splice('next-turn', 0, 0, sealed);
    const splice = h.agent.events.findLast((e) => e.type === 'agent/inbox/spliced')!;
    expect('sealed' in (splice.data as { inserted: readonly object[] }).inserted[0]!).toBe(false);
    expect(h.agent.inbox.nextTurn[0]).toEqual(sealed);
    expect('sealed' in h.agent.inbox.nextTurn[0]!).toBe(true);
  });
});
